"""Spec 2.3 (input combinations) and the catalog table of DESIGN.md section 3, line by line: each
rule with a passing and a failing case, and the path the failing case names."""

from __future__ import annotations

from typing import Any

import pytest

from dailies.spec.catalog import MODELS, Region, find_model, model_ids, region_of, region_of_host
from dailies.spec.drafts import FIELDS_TAKEN_FROM_DRAFT
from dailies.spec.problems import INVALID, MISSING
from dailies.spec.rules import check_request
from dailies.spec.validation import check_create_body

from .builders import (
    V10,
    V15,
    V20,
    V20_FAST,
    audio,
    body,
    draft_task,
    image,
    paths,
    rule_problems,
    text,
    video,
)

OK: list[str] = []  # expected problem paths of an accepted request

T = text()
FIRST, LAST, REF = image("first_frame"), image("last_frame"), image("reference_image")

# ---------- spec 2.3: permitted combinations ----------

COMBINATIONS = [
    # 1. Text only.
    pytest.param(V20, [T], OK, id="1-text-only-2.0"),
    pytest.param(V20_FAST, [T], OK, id="1-text-only-2.0-fast"),
    pytest.param(V15, [T], OK, id="1-text-only-1.5"),
    pytest.param(V10, [T], OK, id="1-text-only-1.0"),
    # 2. Text (optional) + image.
    pytest.param(V20, [T, image()], OK, id="2-text+image-2.0"),
    pytest.param(V15, [T, image()], OK, id="2-text+image-1.5"),
    pytest.param(V10, [T, image()], OK, id="2-text+image-1.0"),
    pytest.param(V10, [image()], OK, id="2-image-only"),
    pytest.param(V15, [T, FIRST, LAST], OK, id="2-first+last"),
    pytest.param(V15, [FIRST, LAST], OK, id="2-first+last-no-text"),
    pytest.param(V20, [T, REF, REF, REF], OK, id="2-reference-images"),
    pytest.param(V15, [REF], OK, id="2-one-reference-image"),
    pytest.param(V20, [T] + [REF] * 9, OK, id="2-nine-reference-images"),
    pytest.param(V20, [T] + [REF] * 10, ["content[10]"], id="2-ten-reference-images"),
    # 3. Text (optional) + video.
    pytest.param(V20, [T, video()], OK, id="3-text+video"),
    pytest.param(V20, [video()], OK, id="3-video-only"),
    pytest.param(V20, [T, video(), video(), video()], OK, id="3-three-videos"),
    pytest.param(V20, [T, video(), video(), video(), video()], ["content[4]"], id="3-four-videos"),
    pytest.param(V20, [T, REF, video()], OK, id="3-reference-image+video"),
    # 4. Text (optional) + image or video + audio.
    pytest.param(V20, [T, REF, audio()], OK, id="4-text+image+audio"),
    pytest.param(V20, [REF, audio()], OK, id="4-image+audio"),
    pytest.param(V20, [T, video(), audio()], OK, id="4-text+video+audio"),
    pytest.param(V20, [T, REF, video(), audio(), audio(), audio()], OK, id="4-three-audios"),
    pytest.param(V20, [T, REF, audio(), audio(), audio(), audio()], ["content[5]"], id="4-four-audios"),
    pytest.param(V20, [audio()], ["content[0]"], id="4-audio-alone"),
    pytest.param(V20, [T, audio()], ["content[1]"], id="4-audio+text-only"),
    pytest.param(V20, [audio(), T], ["content[0]"], id="4-audio-first+text"),
    # 5. A generation 1.5 Pro draft task ID.
    pytest.param(V15, [draft_task()], OK, id="5-draft-task-alone"),
    pytest.param(V15, [draft_task(), T], ["content[1]"], id="5-draft-task+text"),
    pytest.param(V15, [T, draft_task()], ["content[0]"], id="5-text+draft-task"),
    pytest.param(V15, [draft_task(), image()], ["content[1]"], id="5-draft-task+image"),
    # The three scenarios must not be mixed.
    pytest.param(V20, [T, FIRST, REF], ["content[2].role"], id="mix-first-frame+reference-image"),
    pytest.param(V20, [T, REF, FIRST], ["content[1].role"], id="mix-reference-image+first-frame"),
    pytest.param(V20, [T, FIRST, LAST, video()], ["content[3]"], id="mix-first+last+reference-video"),
    pytest.param(V20, [T, FIRST, video()], ["content[2]"], id="mix-first+reference-video"),
    # Beside audio or video, an image without a role is a reference image (combination 4), not a first frame.
    pytest.param(V20, [T, image(), audio()], OK, id="image-without-role-is-a-reference-beside-audio"),
    pytest.param(V20, [T, LAST], ["content[1].role"], id="last-frame-without-first"),
    pytest.param(V20, [T, FIRST, FIRST], ["content[2].role"], id="two-first-frames"),
    pytest.param(V20, [T, FIRST, LAST, LAST], ["content[3].role"], id="two-last-frames"),
    pytest.param(V20, [T, text("and a dog")], ["content[1]"], id="two-prompts"),
]


@pytest.mark.parametrize(("model", "content", "expected"), COMBINATIONS)
def test_combination(model: str, content: list[dict[str, Any]], expected: list[str]) -> None:
    assert paths(rule_problems(model, content)) == expected


# ---------- spec 2.2: each item carries its own payload and a role that fits ----------

ITEMS = [
    pytest.param([T, image(), image()], [("content[1].role", MISSING), ("content[2].role", MISSING)],
                 id="several-images-without-roles"),
    pytest.param([T, FIRST, image()], [("content[2].role", MISSING)], id="one-of-several-images-without-role"),
    pytest.param([T, video("first_frame")], [("content[1].role", INVALID)], id="video-as-first-frame"),
    pytest.param([T, image("reference_video")], [("content[1].role", INVALID)], id="image-as-reference-video"),
    pytest.param([T, REF, audio("reference_image")], [("content[2].role", INVALID)],
                 id="audio-as-reference-image"),
    pytest.param([{**T, "role": "reference_image"}], [("content[0].role", INVALID)], id="text-with-a-role"),
    pytest.param([T, {"type": "image_url"}], [("content[1].image_url", MISSING)], id="image-without-payload"),
    pytest.param([{"type": "image_url"}], [("content[0].image_url", MISSING)], id="lone-image-without-payload"),
    pytest.param([{"type": "text"}], [("content[0].text", MISSING)], id="text-without-text"),
    pytest.param([T, {"type": "video_url"}], [("content[1].video_url", MISSING)], id="video-without-payload"),
    pytest.param([text("   ")], [("content[0].text", INVALID)], id="blank-prompt"),
    pytest.param([{**T, "image_url": {"url": "https://example.com/a.png"}}], [("content[0].image_url", INVALID)],
                 id="text-carrying-an-image"),
    pytest.param([T, {**image(), "video_url": {"url": "https://example.com/v.mp4"}}],
                 [("content[1].video_url", INVALID)], id="image-carrying-a-video"),
    pytest.param([T, {**image(), "text": "caption"}], [("content[1].text", INVALID)], id="image-carrying-text"),
]


@pytest.mark.parametrize(("content", "expected"), ITEMS)
def test_content_item_rules(content: list[dict[str, Any]], expected: list[tuple[str, str]]) -> None:
    assert [(p.path, p.code) for p in rule_problems(V20, content)] == expected


# ---------- DESIGN.md section 3: the per-generation table ----------

IMG = image()  # a first frame by default

GENERATION_TABLE = [
    # service_tier: flex | no | yes | yes
    pytest.param(V20, [T], {"service_tier": "flex"}, ["service_tier"], id="flex-2.0"),
    pytest.param(V20_FAST, [T], {"service_tier": "flex"}, ["service_tier"], id="flex-2.0-fast"),
    pytest.param(V20, [T], {"service_tier": "default"}, OK, id="default-tier-2.0"),
    pytest.param(V15, [T], {"service_tier": "flex"}, OK, id="flex-1.5"),
    pytest.param(V10, [T], {"service_tier": "flex"}, OK, id="flex-1.0"),
    # draft | no | yes (480p only, no last_frame, not with flex) | no
    pytest.param(V15, [T, IMG], {"draft": True}, OK, id="draft-1.5"),
    pytest.param(V15, [T], {"draft": True, "resolution": "480p"}, OK, id="draft-1.5-480p"),
    pytest.param(V20, [T], {"draft": True}, ["draft"], id="draft-2.0"),
    pytest.param(V10, [T], {"draft": True}, ["draft"], id="draft-1.0"),
    pytest.param(V20, [T], {"draft": False}, OK, id="draft-false-2.0"),
    pytest.param(V15, [T], {"draft": True, "resolution": "720p"}, ["resolution"], id="draft-720p"),
    pytest.param(V15, [T], {"draft": True, "resolution": "1080p"}, ["resolution"], id="draft-1080p"),
    pytest.param(V15, [T, FIRST, LAST], {"draft": True}, ["content[2].role"], id="draft-last-frame"),
    pytest.param(V15, [T, FIRST, LAST], {"draft": False}, OK, id="no-draft-last-frame"),
    pytest.param(V15, [T], {"draft": True, "service_tier": "flex"}, ["service_tier"], id="draft-flex"),
    pytest.param(V15, [T], {"draft": True, "service_tier": "default"}, OK, id="draft-default-tier"),
    # tools, priority | yes | no | no
    pytest.param(V20, [T], {"tools": [{"type": "web_search"}]}, OK, id="tools-2.0"),
    pytest.param(V20_FAST, [T], {"tools": [{"type": "web_search"}]}, OK, id="tools-2.0-fast"),
    pytest.param(V15, [T], {"tools": [{"type": "web_search"}]}, ["tools"], id="tools-1.5"),
    pytest.param(V10, [T], {"tools": [{"type": "web_search"}]}, ["tools"], id="tools-1.0"),
    pytest.param(V20, [T], {"priority": 0}, OK, id="priority-2.0"),
    pytest.param(V15, [T], {"priority": 0}, ["priority"], id="priority-1.5"),
    pytest.param(V10, [T], {"priority": 9}, ["priority"], id="priority-1.0"),
    # resolution 4k | yes | no | no ; 2.0 fast: 480p and 720p only
    pytest.param(V20, [T], {"resolution": "4k"}, OK, id="4k-2.0"),
    pytest.param(V15, [T], {"resolution": "4k"}, ["resolution"], id="4k-1.5"),
    pytest.param(V10, [T], {"resolution": "4k"}, ["resolution"], id="4k-1.0"),
    pytest.param(V20_FAST, [T], {"resolution": "4k"}, ["resolution"], id="4k-2.0-fast"),
    pytest.param(V20_FAST, [T], {"resolution": "1080p"}, ["resolution"], id="1080p-2.0-fast"),
    pytest.param(V20_FAST, [T], {"resolution": "720p"}, OK, id="720p-2.0-fast"),
    pytest.param(V20_FAST, [T], {"resolution": "480p"}, OK, id="480p-2.0-fast"),
    pytest.param(V15, [T], {"resolution": "1080p"}, OK, id="1080p-1.5"),
    pytest.param(V10, [T], {"resolution": "1080p"}, OK, id="1080p-1.0"),
    # seed, camera_fixed | no | yes (camera_fixed not with reference images) | yes
    pytest.param(V20, [T], {"seed": 7}, ["seed"], id="seed-2.0"),
    # Sending the default asks for nothing the model lacks.
    pytest.param(V20, [T], {"seed": -1}, OK, id="seed-default-value-2.0"),
    pytest.param(V20, [T], {"camera_fixed": False}, OK, id="camera_fixed-default-value-2.0"),
    pytest.param(V15, [T], {"seed": 7}, OK, id="seed-1.5"),
    pytest.param(V10, [T], {"seed": 4294967295}, OK, id="seed-1.0"),
    pytest.param(V20, [T], {"camera_fixed": True}, ["camera_fixed"], id="camera_fixed-2.0"),
    pytest.param(V15, [T], {"camera_fixed": True}, OK, id="camera_fixed-1.5"),
    pytest.param(V10, [T], {"camera_fixed": True}, OK, id="camera_fixed-1.0"),
    pytest.param(V15, [T, IMG], {"camera_fixed": True}, OK, id="camera_fixed-first-frame"),
    pytest.param(V15, [T, REF, REF], {"camera_fixed": True}, ["camera_fixed"], id="camera_fixed-reference-images"),
    pytest.param(V15, [T, REF], {"camera_fixed": False}, OK, id="camera_fixed-false-reference-images"),
    # frames | no | no | yes: 25 + 4n in [29, 289]; wins over duration
    *[pytest.param(V10, [T], {"frames": n}, OK, id=f"frames-{n}-1.0") for n in (29, 121, 289)],
    *[pytest.param(V10, [T], {"frames": n}, ["frames"], id=f"frames-{n}-1.0") for n in (25, 30, 293, 0, -3)],
    pytest.param(V20, [T], {"frames": 121}, ["frames"], id="frames-2.0"),
    pytest.param(V15, [T], {"frames": 121}, ["frames"], id="frames-1.5"),
    pytest.param(V10, [T], {"frames": 121, "duration": 5}, OK, id="frames-with-duration-1.0"),
    # audio_url content, generate_audio | yes | generate_audio only | no
    pytest.param(V20, [T, REF, audio()], {}, OK, id="audio-input-2.0"),
    pytest.param(V15, [T, REF, audio()], {}, ["content[2]"], id="audio-input-1.5"),
    pytest.param(V10, [T, IMG, audio()], {}, ["content[1].role", "content[2]"], id="audio-input-1.0"),
    pytest.param(V20, [T], {"generate_audio": True}, OK, id="generate_audio-2.0"),
    pytest.param(V15, [T], {"generate_audio": True}, OK, id="generate_audio-1.5"),
    pytest.param(V10, [T], {"generate_audio": True}, ["generate_audio"], id="generate_audio-1.0"),
    pytest.param(V10, [T], {"generate_audio": False}, OK, id="generate_audio-false-1.0"),
    # duration | 4..15, or -1 | 4..12, or -1 | 2..12
    *[pytest.param(V20, [T], {"duration": d}, OK, id=f"duration-{d}-2.0") for d in (-1, 4, 5, 15)],
    *[pytest.param(V20, [T], {"duration": d}, ["duration"], id=f"duration-{d}-2.0") for d in (-2, 0, 3, 16)],
    *[pytest.param(V15, [T], {"duration": d}, OK, id=f"duration-{d}-1.5") for d in (-1, 4, 12)],
    *[pytest.param(V15, [T], {"duration": d}, ["duration"], id=f"duration-{d}-1.5") for d in (3, 13)],
    *[pytest.param(V10, [T], {"duration": d}, OK, id=f"duration-{d}-1.0") for d in (2, 12)],
    *[pytest.param(V10, [T], {"duration": d}, ["duration"], id=f"duration-{d}-1.0") for d in (-1, 1, 13)],
    # input kinds per generation
    pytest.param(V20, [T, REF], {}, OK, id="reference-image-2.0"),
    pytest.param(V15, [T, REF], {}, OK, id="reference-image-1.5"),
    pytest.param(V10, [T, REF], {}, ["content[1].role"], id="reference-image-1.0"),
    pytest.param(V10, [T, REF, REF], {}, ["content[1].role", "content[2].role"], id="reference-images-1.0"),
    pytest.param(V10, [T, FIRST, LAST], {}, OK, id="first+last-1.0"),
    pytest.param(V20, [T, video()], {}, OK, id="video-2.0"),
    pytest.param(V20_FAST, [T, video()], {}, OK, id="video-2.0-fast"),
    pytest.param(V15, [T, video()], {}, ["content[1]"], id="video-1.5"),
    pytest.param(V10, [T, video()], {}, ["content[1]"], id="video-1.0"),
]


@pytest.mark.parametrize(("model", "content", "fields", "expected"), GENERATION_TABLE)
def test_generation_rule(model: str, content: list[dict[str, Any]], fields: dict[str, Any],
                         expected: list[str]) -> None:
    problems = rule_problems(model, content, **fields)
    assert paths(problems) == expected
    assert all(p.code == INVALID for p in problems)


# ---------- draft flow (1.5 Pro) ----------

FINAL_FROM_DRAFT = [
    pytest.param(V15, {}, OK, id="alone"),
    pytest.param(V15, {"resolution": "1080p", "watermark": True, "service_tier": "flex",
                       "return_last_frame": True, "callback_url": "https://example.com/cb"}, OK,
                 id="may-set-resolution-watermark-tier-last-frame"),
    pytest.param(V15, {"draft": False}, OK, id="draft-false"),
    pytest.param(V15, {"draft": True}, ["draft"], id="draft-true"),
    pytest.param(V15, {"seed": 3}, ["seed"], id="seed"),
    pytest.param(V15, {"ratio": "16:9"}, ["ratio"], id="ratio"),
    pytest.param(V15, {"duration": 5}, ["duration"], id="duration"),
    pytest.param(V15, {"generate_audio": False}, ["generate_audio"], id="generate_audio"),
    pytest.param(V15, {"camera_fixed": True}, ["camera_fixed"], id="camera_fixed"),
    pytest.param(V15, {"frames": 121}, ["frames", "frames"], id="frames"),
    pytest.param(V20, {}, ["content[0]"], id="on-2.0"),
    pytest.param(V20_FAST, {}, ["content[0]"], id="on-2.0-fast"),
    pytest.param(V10, {}, ["content[0]"], id="on-1.0"),
]


@pytest.mark.parametrize(("model", "fields", "expected"), FINAL_FROM_DRAFT)
def test_final_from_draft(model: str, fields: dict[str, Any], expected: list[str]) -> None:
    assert paths(rule_problems(model, [draft_task()], **fields)) == expected


def test_every_field_taken_from_the_draft_is_refused_at_once() -> None:
    values = {"generate_audio": True, "seed": 1, "ratio": "1:1", "duration": 5, "frames": 121, "camera_fixed": False}
    assert set(values) == set(FIELDS_TAKEN_FROM_DRAFT)
    problems = rule_problems(V15, [draft_task()], **values)
    assert set(FIELDS_TAKEN_FROM_DRAFT) <= set(paths(problems))


# ---------- model ids ----------


def test_catalog_holds_the_five_models_of_the_design_in_both_regions() -> None:
    assert model_ids(Region.VOLCENGINE) == [V20, V20_FAST, V15, V10, "doubao-seedance-1-0-pro-fast-251015"]
    assert model_ids(Region.BYTEPLUS) == ["dreamina-seedance-2-0-260128", "dreamina-seedance-2-0-fast-260128",
                                          "seedance-1-5-pro-251215", "seedance-1-0-pro-250528",
                                          "seedance-1-0-pro-fast-251015"]
    assert model_ids() == model_ids(Region.VOLCENGINE) + model_ids(Region.BYTEPLUS)
    assert [m.generation.value for m in MODELS] == ["2.0", "2.0", "1.5 Pro", "1.0 Pro", "1.0 Pro"]
    for model in MODELS:
        assert find_model(model.id) is find_model(model.byteplus_id) is model
        assert region_of(model.byteplus_id) is Region.BYTEPLUS and region_of(model.id) is Region.VOLCENGINE


@pytest.mark.parametrize(("url", "region"), [
    ("https://ark.cn-beijing.volces.com/api/v3", Region.VOLCENGINE),
    ("https://ark.cn-shanghai.volces.com/api/v3/", Region.VOLCENGINE),
    ("https://ark.ap-southeast.bytepluses.com/api/v3", Region.BYTEPLUS),
    ("https://ARK.AP-SOUTHEAST.BYTEPLUSES.COM/api/v3", Region.BYTEPLUS),
    ("http://127.0.0.1:8000/api/v3", None),
    ("https://gateway.example.com/api/v3", None),
    ("https://volces.com.evil.example/api/v3", None),
    ("https://notvolces.com/api/v3", None),
])
def test_the_region_of_a_host(url, region) -> None:
    assert region_of_host(url) is region


def test_unknown_model_is_a_problem_of_model() -> None:
    problems = rule_problems("doubao-seedance-9-9", [T])
    assert [(p.path, p.code) for p in problems] == [("model", INVALID)]


def test_endpoint_id_resolved_by_the_caller() -> None:
    given = body("ep-20250101120000-abcde", [T], priority=3)
    assert paths(check_create_body(given).problems) == ["model"]
    assert check_create_body(given, model=find_model(V20)).ok
    # The resolved model's rules apply, not the id's.
    assert paths(check_create_body(given, model=find_model(V15)).problems) == ["priority"]


def test_content_rules_still_run_for_an_unknown_model() -> None:
    problems = rule_problems("doubao-seedance-9-9", [T, LAST])
    assert sorted(paths(problems)) == ["content[1].role", "model"]


# ---------- every problem at once ----------


def test_check_request_returns_every_problem() -> None:
    checked = check_create_body(
        body(V10, [T, REF, audio()], generate_audio=True, frames=30, priority=2, tools=[{"type": "web_search"}])
    )
    assert checked.request is not None
    found = set(paths(checked.problems))
    assert {"content[1].role", "content[2]", "generate_audio", "frames", "priority", "tools"} <= found
    assert len(checked.problems) >= 6


def test_check_request_takes_a_parsed_request() -> None:
    req = check_create_body(body(V15, [T], seed=1)).request
    assert check_request(req) == []
    assert paths(check_request(req, find_model(V20))) == ["seed"]
