"""The typed render output: one set of numbers shared by the plan and the result, and the JSON
form the service stores with a task and reads back to write its record."""

from __future__ import annotations

import json
from dataclasses import asdict, fields
from pathlib import Path

from dailies.generator import OutputSpec, RenderedOutput, RenderResult, VideoNumbers, output_spec
from dailies.spec.models import CreateTaskRequest

from .media_fixtures import MODEL_1_0, MODEL_2_0

NUMBERS = {"width": 1280, "height": 720, "resolution": "720p", "ratio": "16:9", "duration": 5, "frames": None,
           "frame_count": 121, "fps": 24, "seed": 11, "generate_audio": True, "completion_tokens": 108900}


def result(**changes) -> RenderResult:
    return RenderResult(**{**NUMBERS, **changes}, video_path=Path("/scratch/v.mp4"), last_frame_path=None)


def test_plan_and_result_share_one_set_of_numbers() -> None:
    shared = [f.name for f in fields(VideoNumbers)]
    assert shared == list(NUMBERS)
    for kind in (OutputSpec, RenderedOutput, RenderResult):
        assert [f.name for f in fields(kind)][:len(shared)] == shared


def test_the_stored_form_reads_back_and_leaves_the_files_out() -> None:
    made = result(tools_used=[{"type": "web_search"}], web_search_calls=2)
    stored = made.to_json()
    assert "video_path" not in json.loads(stored) and "last_frame_path" not in json.loads(stored)
    back = RenderedOutput.from_json(stored)
    assert type(back) is RenderedOutput and back.numbers() == made.numbers()
    assert (back.tools_used, back.web_search_calls) == ([{"type": "web_search"}], 2)


def test_the_stored_form_is_what_the_service_has_always_stored() -> None:
    # Rows written before the typed form (asdict without the paths) read back unchanged.
    made = result(frames=29, duration=None, frame_count=29)
    legacy = asdict(made)
    legacy.pop("video_path"), legacy.pop("last_frame_path")
    assert made.to_json() == json.dumps(legacy)
    assert RenderedOutput.from_json(json.dumps({**legacy, "added_by_a_newer_version": 1})) == RenderedOutput.from_json(
        made.to_json())


def test_a_plan_becomes_a_result_with_its_numbers() -> None:
    for request in (CreateTaskRequest(model=MODEL_2_0, content=[{"type": "text", "text": "t"}]),
                    CreateTaskRequest(model=MODEL_1_0, content=[{"type": "text", "text": "t"}], frames=29)):
        spec = output_spec(request, seed=3, draft=False)
        made = RenderResult(**spec.numbers(), video_path=Path("v.mp4"), last_frame_path=None)
        assert made.numbers() == spec.numbers()
