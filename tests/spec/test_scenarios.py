"""The one classification of a request's content: the role of each item and the scenario."""

from __future__ import annotations

import pytest

from dailies.spec.models import ContentItem
from dailies.spec.scenarios import Scenario, content_roles, scenario_of

T = {"type": "text", "text": "t"}


def image(role: str | None = None) -> dict:
    return {"type": "image_url", "image_url": {"url": "asset://i"}, **({"role": role} if role else {})}


VIDEO = {"type": "video_url", "video_url": {"url": "asset://v"}}
AUDIO = {"type": "audio_url", "audio_url": {"url": "asset://a"}}
DRAFT = {"type": "draft_task", "draft_task": {"id": "cgt-20250101000000-abcde"}}


def items(*raw: dict) -> list[ContentItem]:
    return [ContentItem.model_validate(r) for r in raw]


@pytest.mark.parametrize(("content", "roles", "scenario"), [
    pytest.param([T], [None], Scenario.TEXT, id="text"),
    pytest.param([T, image()], [None, "first_frame"], Scenario.FIRST_FRAME, id="lone-image-is-first-frame"),
    pytest.param([image("first_frame"), T, image("last_frame")], ["first_frame", None, "last_frame"],
                 Scenario.FIRST_AND_LAST_FRAME, id="first-and-last"),
    pytest.param([T, image(), VIDEO], [None, "reference_image", "reference_video"], Scenario.REFERENCES,
                 id="image-beside-video-is-a-reference"),
    pytest.param([T, image(), AUDIO], [None, "reference_image", "reference_audio"], Scenario.REFERENCES,
                 id="image-beside-audio-is-a-reference"),
    pytest.param([T, VIDEO], [None, "reference_video"], Scenario.REFERENCES, id="video"),
    pytest.param([T, image("reference_image"), image("reference_image")], [None, "reference_image", "reference_image"],
                 Scenario.REFERENCES, id="reference-images"),
    pytest.param([DRAFT], [None], Scenario.DRAFT_FINAL, id="draft-final"),
])
def test_roles_and_scenario(content, roles, scenario) -> None:
    assert list(content_roles(items(*content))) == roles
    assert scenario_of(items(*content)) is scenario


@pytest.mark.parametrize(("content", "scenario"), [
    # Refused by the rules, still given a meaning (the renderer and Compose need one).
    pytest.param([T, image("first_frame"), image("reference_image")], Scenario.FIRST_FRAME, id="first-frame-wins"),
    pytest.param([T, image("last_frame")], Scenario.REFERENCES, id="last-frame-alone-is-a-reference"),
    pytest.param([T, image(), image()], Scenario.REFERENCES, id="images-without-roles"),
    pytest.param([T, AUDIO], Scenario.REFERENCES, id="audio-alone"),
    pytest.param([T, DRAFT], Scenario.DRAFT_FINAL, id="draft-beside-text"),
])
def test_content_the_rules_refuse_still_has_a_scenario(content, scenario) -> None:
    assert scenario_of(items(*content)) is scenario


def test_an_image_without_a_role_among_several_has_none() -> None:
    assert content_roles(items(T, image(), image("reference_image"))) == (None, None, "reference_image")
    assert content_roles(items(T, image(), image(), image("last_frame"))) == (None, None, None, "last_frame")
    assert content_roles(items(T, image(), image("last_frame"), VIDEO)) == (None, None, "last_frame", "reference_video")


def test_an_image_without_a_role_beside_a_last_frame_is_the_first_frame() -> None:
    """The Vercel AI SDK's shape for first and last frames (either order of the two images)."""
    assert content_roles(items(T, image(), image("last_frame"))) == (None, "first_frame", "last_frame")
    assert content_roles(items(image("last_frame"), T, image())) == ("last_frame", None, "first_frame")
    assert scenario_of(items(T, image(), image("last_frame"))) is Scenario.FIRST_AND_LAST_FRAME


def test_scenario_values_are_the_modes_the_dashboard_stores() -> None:
    assert [s.value for s in Scenario] == ["text", "first_frame", "first_last_frame", "references", "draft_final"]
    assert Scenario.FIRST_AND_LAST_FRAME.words == "first-and-last-frame"
