"""Hostile input, category 3: every field of spec 2.1 and 2.2 with wrong types and out-of-range
values, from the spec's tables (section 2 and the limits of section 8). Each is a 4xx naming the
field."""

from __future__ import annotations

import pytest

from dailies.spec import limits as L
from tests.service.conftest import MODEL_1_0, MODEL_1_5, MODEL_2_0, text_body
from tests.service.hostile import assert_refused, hostile_service, module_anyio_backend  # noqa: F401 - fixtures

pytestmark = pytest.mark.anyio

TEXT = {"type": "text", "text": "a heron"}
IMAGE = {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}


def content(*items) -> dict:
    return {"model": MODEL_2_0, "content": list(items)}


TOP_LEVEL = [
    # model
    ({"content": [TEXT]}, "model", "MissingParameter"),
    ({"model": None, "content": [TEXT]}, "model", "MissingParameter"),
    ({"model": 7, "content": [TEXT]}, "model", "InvalidParameter"),
    ({"model": "", "content": [TEXT]}, "model", "InvalidParameter"),
    ({"model": [MODEL_2_0], "content": [TEXT]}, "model", "InvalidParameter"),
    ({"model": {"id": MODEL_2_0}, "content": [TEXT]}, "model", "InvalidParameter"),
    # content
    ({"model": MODEL_2_0}, "content", "MissingParameter"),
    ({"model": MODEL_2_0, "content": []}, "content", "MissingParameter"),
    ({"model": MODEL_2_0, "content": "a heron"}, "content", "InvalidParameter"),
    ({"model": MODEL_2_0, "content": TEXT}, "content", "InvalidParameter"),
    ({"model": MODEL_2_0, "content": [None]}, "content[0]", "InvalidParameter"),
    ({"model": MODEL_2_0, "content": ["a heron"]}, "content[0]", "InvalidParameter"),
    ({"model": MODEL_2_0, "content": [[TEXT]]}, "content[0]", "InvalidParameter"),
    # callback_url
    (text_body(callback_url=7), "callback_url", "InvalidParameter"),
    (text_body(callback_url=""), "callback_url", "InvalidParameter"),
    (text_body(callback_url=["https://example.com/hook"]), "callback_url", "InvalidParameter"),
    # return_last_frame, generate_audio, draft, camera_fixed, watermark: booleans only
    (text_body(return_last_frame="true"), "return_last_frame", "InvalidParameter"),
    (text_body(return_last_frame=1), "return_last_frame", "InvalidParameter"),
    (text_body(generate_audio="yes"), "generate_audio", "InvalidParameter"),
    (text_body(generate_audio=0), "generate_audio", "InvalidParameter"),
    (text_body(model=MODEL_1_5, draft=1), "draft", "InvalidParameter"),
    (text_body(model=MODEL_1_5, draft="false"), "draft", "InvalidParameter"),
    (text_body(model=MODEL_1_5, camera_fixed="no"), "camera_fixed", "InvalidParameter"),
    (text_body(watermark=[]), "watermark", "InvalidParameter"),
    (text_body(watermark={}), "watermark", "InvalidParameter"),
    # service_tier
    (text_body(service_tier="cheap"), "service_tier", "InvalidParameter"),
    (text_body(service_tier="DEFAULT"), "service_tier", "InvalidParameter"),
    (text_body(service_tier=1), "service_tier", "InvalidParameter"),
    (text_body(service_tier="flex"), "service_tier", "InvalidParameter"),  # 2.0 is default only
    # execution_expires_after: 3600 to 259200 seconds
    (text_body(execution_expires_after=L.EXECUTION_EXPIRES_MIN - 1), "execution_expires_after", "InvalidParameter"),
    (text_body(execution_expires_after=L.EXECUTION_EXPIRES_MAX + 1), "execution_expires_after", "InvalidParameter"),
    (text_body(execution_expires_after=-1), "execution_expires_after", "InvalidParameter"),
    (text_body(execution_expires_after="3600"), "execution_expires_after", "InvalidParameter"),
    (text_body(execution_expires_after=3600.5), "execution_expires_after", "InvalidParameter"),
    (text_body(execution_expires_after=True), "execution_expires_after", "InvalidParameter"),
    # tools: generation 2.0 only, type web_search only
    (text_body(tools="web_search"), "tools", "InvalidParameter"),
    (text_body(tools=[{"type": "code_interpreter"}]), "tools[0].type", "InvalidParameter"),
    (text_body(tools=[{}]), "tools[0].type", "MissingParameter"),
    (text_body(tools=[{"type": "web_search", "query": "x"}]), "tools[0].query", "InvalidParameter"),
    (text_body(tools=["web_search"]), "tools[0]", "InvalidParameter"),
    (text_body(model=MODEL_1_5, tools=[{"type": "web_search"}]), "tools", "InvalidParameter"),
    # safety_identifier: at most 64 ASCII characters
    (text_body(safety_identifier="x" * (L.SAFETY_IDENTIFIER_MAX_CHARS + 1)), "safety_identifier",
     "InvalidParameter"),
    (text_body(safety_identifier="usér"), "safety_identifier", "InvalidParameter"),
    (text_body(safety_identifier=12345), "safety_identifier", "InvalidParameter"),
    # priority: 0 to 9, generation 2.0 only
    (text_body(priority=L.PRIORITY_MIN - 1), "priority", "InvalidParameter"),
    (text_body(priority=L.PRIORITY_MAX + 1), "priority", "InvalidParameter"),
    (text_body(priority="5"), "priority", "InvalidParameter"),
    (text_body(priority=True), "priority", "InvalidParameter"),
    (text_body(model=MODEL_1_5, priority=3), "priority", "InvalidParameter"),
    # resolution, ratio: enumerations
    (text_body(resolution="8k"), "resolution", "InvalidParameter"),
    (text_body(resolution=720), "resolution", "InvalidParameter"),
    (text_body(resolution="720P"), "resolution", "InvalidParameter"),
    (text_body(model=MODEL_1_5, resolution="4k"), "resolution", "InvalidParameter"),
    (text_body(ratio="2:1"), "ratio", "InvalidParameter"),
    (text_body(ratio=1.77), "ratio", "InvalidParameter"),
    (text_body(ratio="16:9 "), "ratio", "InvalidParameter"),
    # duration and frames, per generation
    (text_body(duration=5.5), "duration", "InvalidParameter"),
    (text_body(duration="5"), "duration", "InvalidParameter"),
    (text_body(duration=16), "duration", "InvalidParameter"),
    (text_body(duration=0), "duration", "InvalidParameter"),
    (text_body(duration=-2), "duration", "InvalidParameter"),
    (text_body(model=MODEL_1_0, duration=-1), "duration", "InvalidParameter"),
    (text_body(frames=121), "frames", "InvalidParameter"),  # not for 2.0
    (text_body(model=MODEL_1_0, frames=30), "frames", "InvalidParameter"),
    (text_body(model=MODEL_1_0, frames=293), "frames", "InvalidParameter"),
    (text_body(model=MODEL_1_0, frames="121"), "frames", "InvalidParameter"),
    # seed: -1 to 4294967295, not for 2.0
    (text_body(model=MODEL_1_5, seed=L.SEED_MIN - 1), "seed", "InvalidParameter"),
    (text_body(model=MODEL_1_5, seed=L.SEED_MAX + 1), "seed", "InvalidParameter"),
    (text_body(model=MODEL_1_5, seed="42"), "seed", "InvalidParameter"),
    (text_body(seed=42), "seed", "InvalidParameter"),
    # the closed schema
    (text_body(colour="red"), "colour", "InvalidParameter"),
    (text_body(**{"": 1}), "", "InvalidParameter"),
    (text_body(output_format="mp4"), "output_format", "InvalidParameter"),
    (text_body(Model=MODEL_2_0), "Model", "InvalidParameter"),
]


@pytest.mark.parametrize(("body", "param", "code"), TOP_LEVEL)
async def test_top_level_fields(hostile, body, param, code):
    assert_refused(await hostile.create(body), param, code=code)


CONTENT_ITEMS = [
    (content({"text": "x"}), "content[0].type", "MissingParameter"),
    (content({"type": "picture", "text": "x"}), "content[0].type", "InvalidParameter"),
    (content({"type": 1}), "content[0].type", "InvalidParameter"),
    (content({"type": "text"}), "content[0].text", "MissingParameter"),
    (content({"type": "text", "text": 5}), "content[0].text", "InvalidParameter"),
    (content({"type": "text", "text": ["a"]}), "content[0].text", "InvalidParameter"),
    (content({"type": "text", "text": "   "}), "content[0].text", "InvalidParameter"),
    (content({"type": "text", "text": "x", "image_url": {"url": "https://a.example/a.png"}}),
     "content[0].image_url", "InvalidParameter"),
    (content(TEXT, {"type": "image_url"}), "content[1].image_url", "MissingParameter"),
    (content(TEXT, {"type": "image_url", "image_url": "https://a.example/a.png"}), "content[1].image_url",
     "InvalidParameter"),
    (content(TEXT, {"type": "image_url", "image_url": {}}), "content[1].image_url.url", "MissingParameter"),
    (content(TEXT, {"type": "image_url", "image_url": {"url": ""}}), "content[1].image_url.url", "InvalidParameter"),
    (content(TEXT, {"type": "image_url", "image_url": {"url": 5}}), "content[1].image_url.url", "InvalidParameter"),
    (content(TEXT, {"type": "image_url", "image_url": {"url": "https://a.example/a.png", "detail": "high"}}),
     "content[1].image_url.detail", "InvalidParameter"),
    (content(TEXT, {**IMAGE, "role": "background"}), "content[1].role", "InvalidParameter"),
    (content(TEXT, {**IMAGE, "role": "reference_video"}), "content[1].role", "InvalidParameter"),
    (content(TEXT, {**IMAGE, "role": 1}), "content[1].role", "InvalidParameter"),
    (content(TEXT, {"type": "video_url", "video_url": {"url": ["https://a.example/v.mp4"]}}),
     "content[1].video_url.url", "InvalidParameter"),
    (content(TEXT, {"type": "audio_url", "audio_url": None}), "content[1].audio_url", "MissingParameter"),
    ({"model": MODEL_1_5, "content": [{"type": "draft_task", "draft_task": {"id": 7}}]},
     "content[0].draft_task.id", "InvalidParameter"),
    ({"model": MODEL_1_5, "content": [{"type": "draft_task", "draft_task": {"id": ""}}]},
     "content[0].draft_task.id", "InvalidParameter"),
    ({"model": MODEL_1_5, "content": [{"type": "draft_task", "draft_task": {"id": "../../etc/passwd"}}]},
     "content[0].draft_task.id", "NotFound.Task"),
    (content(TEXT, TEXT), "content[1]", "InvalidParameter"),
    (content(TEXT, {**IMAGE, "role": "first_frame"}, {**IMAGE, "role": "first_frame"}), "content[2].role",
     "InvalidParameter"),
    (content(*[TEXT] + [{**IMAGE, "role": "reference_image"}] * (L.REFERENCE_IMAGES_MAX + 1)),
     f"content[{L.REFERENCE_IMAGES_MAX + 1}]", "InvalidParameter"),
]


@pytest.mark.parametrize(("body", "param", "code"), CONTENT_ITEMS)
async def test_content_items(hostile, body, param, code):
    status = 404 if code == "NotFound.Task" else 400
    assert_refused(await hostile.create(body), param, status=status, code=code)


@pytest.mark.parametrize(("model", "status", "code"), [
    ("doubao-nope", 404, "InvalidEndpointOrModel.NotFound"),
    ("ep-does-not-exist", 404, "InvalidEndpointOrModel.NotFound"),
    ("' OR 1=1 --", 404, "InvalidEndpointOrModel.NotFound"),
    ("x" * 100_000, 404, "InvalidEndpointOrModel.NotFound"),
])
async def test_unknown_models(hostile, model, status, code):
    error = assert_refused(await hostile.create(text_body(model=model)), "model", status=status, code=code)
    assert len(error["message"]) < 1000  # a huge value is not echoed back whole
