"""One classification of scenarios, read alike by the rules, the renderer and Compose: the same
content gives the same scenario and the same roles in all three (issue 13; the renderer used to
read an image without a role beside a video as a first frame, and drop the video)."""

from __future__ import annotations

import pytest

from components.compose.body import FormValues, MediaChoice, build_body, detect_mode, input_roles
from dailies.generator import plan_content
from dailies.spec.models import CreateTaskRequest
from dailies.spec.rules import check_request
from dailies.spec.scenarios import Scenario, content_roles, scenario_of
from dailies.spec.validation import check_create_body

V20 = "doubao-seedance-2-0-260128"
V15 = "doubao-seedance-1-5-pro-251215"
V10 = "doubao-seedance-1-0-pro-250528"
T = {"type": "text", "text": "a kite over the dunes"}


def image(url: str, role: str | None = None) -> dict:
    return {"type": "image_url", "image_url": {"url": url}, **({"role": role} if role else {})}


def video(url: str) -> dict:
    return {"type": "video_url", "video_url": {"url": url}}


def audio(url: str) -> dict:
    return {"type": "audio_url", "audio_url": {"url": url}}


CASES = [
    pytest.param([T], Scenario.TEXT, id="text"),
    pytest.param([T, image("asset://a")], Scenario.FIRST_FRAME, id="image-without-role"),
    pytest.param([image("asset://a", "first_frame"), T, image("asset://b", "last_frame")],
                 Scenario.FIRST_AND_LAST_FRAME, id="first-and-last"),
    pytest.param([T, image("asset://a"), video("asset://v")], Scenario.REFERENCES, id="image-and-video-without-roles"),
    pytest.param([T, image("asset://a"), audio("asset://s")], Scenario.REFERENCES, id="image-and-audio-without-roles"),
    pytest.param([T, image("asset://a", "reference_image"), image("asset://b", "reference_image")],
                 Scenario.REFERENCES, id="reference-images"),
    pytest.param([T, video("asset://v"), audio("asset://s")], Scenario.REFERENCES, id="video-and-audio"),
]


@pytest.mark.parametrize(("content", "scenario"), CASES)
def test_rules_renderer_and_compose_read_the_same_scenario(content, scenario) -> None:
    body = {"model": V20, "content": content}
    request = CreateTaskRequest.model_validate(body)
    roles = content_roles(request.content)
    # The rules accept the request, judging the roles the classification gives.
    assert check_request(request) == []
    assert scenario_of(request.content) is scenario
    # The renderer draws that scenario, with every input in the role the rules judged.
    plan = plan_content(request)
    assert plan.scenario is scenario
    drawn = [m for m in (plan.first_frame, plan.last_frame, *plan.references, *plan.audios) if m is not None]
    expected = [(f"content[{i}].{item.type}", role)
                for i, (item, role) in enumerate(zip(request.content, roles, strict=True)) if item.type != "text"]
    assert sorted((m.where, m.role) for m in drawn) == sorted(expected)
    # Compose opens it in that mode, each input in the slot of that role.
    assert detect_mode(body) == scenario
    assert input_roles(body) == list(roles)


def test_the_rules_judge_the_image_beside_a_video_as_a_reference_image() -> None:
    # Generation 1.0 Pro takes no reference images: the image is refused as one, not taken as a
    # first frame (and the video is refused too, as 1.0 Pro takes none).
    problems = check_request(CreateTaskRequest(model=V10, content=[T, image("asset://a"), video("asset://v")]))
    assert ("content[1].role", "Seedance 1.0 Pro (generation 1.0 Pro) takes no reference images") in [
        (p.path, p.message) for p in problems]


@pytest.mark.parametrize("mode", [Scenario.TEXT, Scenario.FIRST_FRAME, Scenario.FIRST_AND_LAST_FRAME,
                                  Scenario.REFERENCES, Scenario.DRAFT_FINAL])
def test_a_body_compose_builds_in_a_mode_is_of_that_scenario(mode) -> None:
    media = {
        Scenario.FIRST_FRAME: [MediaChoice("f", "image_url", "first_frame", url="asset://a")],
        Scenario.FIRST_AND_LAST_FRAME: [MediaChoice("f", "image_url", "first_frame", url="asset://a"),
                                        MediaChoice("l", "image_url", "last_frame", url="asset://b")],
        Scenario.REFERENCES: [MediaChoice("r", "image_url", "reference_image", url="asset://r")],
    }.get(mode, [])
    model = V15 if mode is Scenario.DRAFT_FINAL else V20
    values = FormValues(model=model, mode=mode, prompt="t", media=media, draft_task_id="cgt-20250101000000-abcde")
    body = build_body(values).body
    assert not check_create_body(body).problems
    assert detect_mode(body) == mode
    assert scenario_of(CreateTaskRequest.model_validate(body).content) is mode


def test_compose_opens_a_references_request_with_each_input_in_its_role(dashboard_env) -> None:
    # The image without a role goes to a reference image slot, not to the first frame, and the
    # request Compose then shows is the one it was given.
    from .test_compose import body, compose

    request = {"model": V20, "content": [T, image("asset://hero"), video("https://example.com/clip.mp4")]}
    at = compose(**{"compose.prefill": {"request": request}})
    assert at.radio(key="compose.mode").value == Scenario.REFERENCES
    assert at.session_state["compose.ref_image.0.asset"] == "hero"
    assert at.session_state["compose.ref_video.0.url"] == "https://example.com/clip.mp4"
    assert "compose.image.first.asset" not in at.session_state
    sent = body(at)["content"]
    assert [(item["type"], item.get("role")) for item in sent] == [
        ("text", None), ("image_url", "reference_image"), ("video_url", "reference_video")]
