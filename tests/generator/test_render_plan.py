"""Which scenario a request is, and the numbers of its output, without rendering."""

from __future__ import annotations

from typing import Any

import pytest

from dailies.generator import output_spec, plan_content
from dailies.spec.models import CreateTaskRequest
from dailies.spec.pixels import estimate_tokens
from dailies.spec.scenarios import Scenario

from .media_fixtures import MODEL_1_0, MODEL_1_5, MODEL_2_0

TEXT = {"type": "text", "text": "a red kite over the dunes"}


def image(url: str = "asset://img", role: str | None = None) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "image_url", "image_url": {"url": url}}
    if role:
        item["role"] = role
    return item


def request(model: str = MODEL_2_0, content: list[dict[str, Any]] | None = None, **fields: Any) -> CreateTaskRequest:
    return CreateTaskRequest(model=model, content=content or [TEXT], **fields)


def test_text_only() -> None:
    plan = plan_content(request())
    assert plan.scenario is Scenario.TEXT and plan.prompt == "a red kite over the dunes"


def test_text_commands_are_not_words_of_the_prompt() -> None:
    text = {"type": "text", "text": "a red kite over the dunes --rs 480p --rt 9:16 --dur 4 --wm true"}
    plan = plan_content(request(content=[text]))
    assert plan.prompt == "a red kite over the dunes"


def test_lone_image_without_role_is_the_first_frame() -> None:
    plan = plan_content(request(content=[TEXT, image("asset://a")]))
    assert plan.scenario is Scenario.FIRST_FRAME
    assert plan.first_frame is not None and plan.first_frame.where == "content[1].image_url"


def test_first_and_last_frame() -> None:
    plan = plan_content(request(content=[image("asset://a", "first_frame"), TEXT, image("asset://b", "last_frame")]))
    assert plan.scenario is Scenario.FIRST_AND_LAST_FRAME
    assert plan.first_frame.url == "asset://a" and plan.last_frame.url == "asset://b"
    assert plan.last_frame.where == "content[2].image_url"


def test_references_keep_request_order_and_audio_is_collected() -> None:
    content = [
        TEXT,
        {"type": "video_url", "video_url": {"url": "asset://v"}, "role": "reference_video"},
        image("asset://r1", "reference_image"),
        {"type": "audio_url", "audio_url": {"url": "asset://s"}, "role": "reference_audio"},
    ]
    plan = plan_content(request(content=content))
    assert plan.scenario is Scenario.REFERENCES
    assert [ref.url for ref in plan.references] == ["asset://v", "asset://r1"]
    assert [a.where for a in plan.audios] == ["content[3].audio_url"]
    assert plan.ratio_image.url == "asset://r1"


def test_last_frame_without_first_frame_is_used_as_a_reference() -> None:
    plan = plan_content(request(content=[TEXT, image("asset://b", "last_frame")]))
    assert plan.scenario is Scenario.REFERENCES and plan.references[0].url == "asset://b"


def test_an_image_without_a_role_beside_a_video_is_a_reference_not_a_first_frame() -> None:
    # The rules read this request as references (the image defaults to a reference image when a
    # video or audio clip is beside it); the renderer used to draw the image as a first frame and
    # drop the video.
    video = {"type": "video_url", "video_url": {"url": "asset://v"}}
    plan = plan_content(request(content=[TEXT, image("asset://a"), video]))
    assert plan.scenario is Scenario.REFERENCES and plan.first_frame is None
    assert [(ref.url, ref.kind, ref.role) for ref in plan.references] == [
        ("asset://a", "image", "reference_image"), ("asset://v", "video", "reference_video")]


def test_an_image_without_a_role_beside_audio_is_a_reference_and_the_audio_is_kept() -> None:
    audio = {"type": "audio_url", "audio_url": {"url": "asset://s"}}
    plan = plan_content(request(content=[TEXT, image("asset://a"), audio]))
    assert plan.scenario is Scenario.REFERENCES and plan.first_frame is None
    assert [ref.url for ref in plan.references] == ["asset://a"]
    assert [a.url for a in plan.audios] == ["asset://s"]


def test_first_frame_wins_over_references_mixed_with_it() -> None:
    content = [TEXT, image("asset://a", "first_frame"), image("asset://r", "reference_image")]
    plan = plan_content(request(content=content))
    assert plan.scenario is Scenario.FIRST_FRAME and plan.first_frame.url == "asset://a" and plan.references == ()


def test_audio_alone_draws_the_text_scene_with_its_sound() -> None:
    plan = plan_content(request(content=[TEXT, {"type": "audio_url", "audio_url": {"url": "asset://s"}}]))
    assert plan.scenario is Scenario.TEXT and [a.url for a in plan.audios] == ["asset://s"]


def test_draft_task_content_must_be_resolved_by_the_service() -> None:
    with pytest.raises(ValueError, match="draft_task"):
        plan_content(request(MODEL_1_5, content=[{"type": "draft_task", "draft_task": {"id": "cgt-x"}}]))


@pytest.mark.parametrize(
    ("resolution", "ratio", "size"),
    [("480p", "16:9", (864, 496)), ("720p", "4:3", (1112, 834)), ("720p", "21:9", (1470, 630)),
     ("1080p", "9:16", (1080, 1920)), ("4k", "1:1", (2880, 2880))],
)
def test_pixel_size_follows_the_table(resolution: str, ratio: str, size: tuple[int, int]) -> None:
    spec = output_spec(request(resolution=resolution, ratio=ratio), seed=3, draft=False)
    assert (spec.width, spec.height) == size
    assert spec.ratio == ratio and spec.resolution == resolution


def test_defaults_720p_adaptive_5_seconds_with_audio() -> None:
    spec = output_spec(request(), seed=3, draft=False)
    assert (spec.width, spec.height, spec.ratio, spec.resolution) == (1280, 720, "16:9", "720p")
    assert (spec.duration, spec.frames, spec.frame_count, spec.fps) == (5, None, 121, 24)
    assert spec.generate_audio and not spec.watermark and not spec.return_last_frame
    assert spec.completion_tokens == estimate_tokens(1280, 720, 5) == 108900


def test_adaptive_follows_the_image() -> None:
    spec = output_spec(request(ratio="adaptive"), seed=3, draft=False, image_size=(1000, 1800))
    assert spec.ratio == "9:16" and (spec.width, spec.height) == (720, 1280)


def test_draft_is_480p_at_six_tenths_of_the_tokens() -> None:
    spec = output_spec(request(MODEL_1_5, resolution="720p", draft=True), seed=3, draft=True)
    assert (spec.width, spec.height, spec.resolution) == (864, 496, "480p")
    assert spec.completion_tokens == estimate_tokens(864, 496, 5, draft=True)


def test_model_picks_duration_becomes_five_seconds() -> None:
    spec = output_spec(request(duration=-1), seed=3, draft=False)
    assert (spec.duration, spec.frame_count) == (5, 121)


def test_frames_win_and_generation_1_0_has_no_sound() -> None:
    spec = output_spec(request(MODEL_1_0, frames=29, duration=5, resolution="480p"), seed=3, draft=False)
    assert (spec.duration, spec.frames, spec.frame_count) == (None, 29, 29)
    assert (spec.width, spec.height) == (864, 480)
    assert spec.generate_audio is False
    assert spec.completion_tokens == estimate_tokens(864, 480, frames=29)


def test_generate_audio_false_is_kept() -> None:
    assert output_spec(request(generate_audio=False), seed=3, draft=False).generate_audio is False
