"""Progress, cancellation and the Generator contract."""

from __future__ import annotations

from pathlib import Path

import pytest

from dailies.generator import (
    Generator,
    InputResolver,
    PreviewGenerator,
    RenderCancelled,
    RenderedOutput,
    RenderJob,
    RenderResult,
    output_spec,
)
from dailies.spec.models import CreateTaskRequest

from .media_fixtures import MODEL_1_0

REQUEST = CreateTaskRequest(
    model=MODEL_1_0, content=[{"type": "text", "text": "a lantern in the fog"}], resolution="480p", frames=29,
    return_last_frame=True,
)


def job(tmp_path: Path) -> RenderJob:
    return RenderJob(task_id="cgt-20260101000000-ctrl0", request=REQUEST, output_dir=tmp_path / "out", seed=4)


def test_preview_generator_keeps_the_generator_contract(tmp_path: Path) -> None:
    # What the service relies on of any Generator (a runtime-checkable Protocol's isinstance would
    # only compare attribute names): called as the worker calls it, with progress and is_cancelled
    # by keyword, it returns a RenderResult whose files are in the job's folder, whose numbers are
    # those the request plans (the task record reports them), and whose stored form reads back.
    generator: Generator = PreviewGenerator()
    rendered = job(tmp_path)
    result = generator.render(rendered, InputResolver(tmp_path), progress=lambda _: None, is_cancelled=lambda: False)
    assert isinstance(result, RenderResult)
    assert result.video_path.parent == rendered.output_dir == result.last_frame_path.parent
    assert result.numbers() == output_spec(REQUEST, rendered.seed, rendered.draft).numbers()
    assert RenderedOutput.from_json(result.to_json()) == RenderedOutput(**result.numbers())


def test_progress_rises_to_one(tmp_path: Path) -> None:
    reports: list[float] = []
    PreviewGenerator(progress_interval=0).render(job(tmp_path), InputResolver(tmp_path), reports.append, lambda: False)
    assert reports[-1] == 1.0
    assert reports == sorted(reports) and all(0.0 <= value <= 1.0 for value in reports)
    assert len(reports) >= 10, "reported along the way, not only at the end"


@pytest.mark.parametrize("polls_before_cancel", [0, 1, 15])
def test_cancel_stops_the_render_and_removes_partial_files(tmp_path: Path, polls_before_cancel: int) -> None:
    polls = 0

    def is_cancelled() -> bool:
        nonlocal polls
        polls += 1
        return polls > polls_before_cancel

    with pytest.raises(RenderCancelled):
        PreviewGenerator(poll_interval=0).render(job(tmp_path), InputResolver(tmp_path), lambda _: None, is_cancelled)
    assert list((tmp_path / "out").iterdir()) == []


def test_cancel_is_polled_during_the_render(tmp_path: Path) -> None:
    polls = 0

    def is_cancelled() -> bool:
        nonlocal polls
        polls += 1
        return False

    PreviewGenerator(poll_interval=0).render(job(tmp_path), InputResolver(tmp_path), lambda _: None, is_cancelled)
    assert polls >= 29


def test_output_files_appear_complete_under_their_final_names(tmp_path: Path) -> None:
    result = PreviewGenerator().render(job(tmp_path), InputResolver(tmp_path), lambda _: None, lambda: False)
    names = sorted(path.name for path in (tmp_path / "out").iterdir())
    assert names == ["cgt-20260101000000-ctrl0.mp4", "cgt-20260101000000-ctrl0_last_frame.png"]
    assert result.video_path.stat().st_size > 1000 and result.last_frame_path.stat().st_size > 1000
