"""Requests in the shapes real third-party clients send, each answered as that client expects.

The bodies are replayed from the clients' own code (docs/research/real-clients.md has the detail):

- official Python SDK, `volcengine-python-sdk` `volcenginesdkarkruntime/resources/content_generation/tasks.py`
  (5.0.54): every optional field as null, `output_format` and `omni_reference_task_type` among them;
- official Go SDK, `volcengine/volcengine-go-sdk` `service/arkruntime/model/content_generation.go` and
  `service/arkruntime/example/content_generation/main.go`: no nulls, keys sorted, an endpoint id, a
  text command (`--ratio 1:1`), a role-less image;
- LiteLLM, `BerriAI/litellm` `litellm/llms/volcengine/videos/transformation.py` and its test
  `tests/test_litellm/llms/volcengine/videos/test_volcengine_video_transformation.py`: an endpoint id,
  a lone `reference_image`;
- ComfyUI, `Comfy-Org/ComfyUI` `comfy_api_nodes/nodes_bytedance.py` and `apis/bytedance.py`: the 1.x
  nodes put every parameter in the text as commands, the 2.x nodes send BytePlus ids and body fields,
  and its `TaskStatusResponse` needs `content` absent (or with a string `video_url`) and a status
  among queued/running/cancelled/succeeded/failed;
- Vercel AI SDK, `vercel/ai` `packages/bytedance/src/bytedance-video-model.ts` (V3): BytePlus ids, a
  role-less first image followed by a `last_frame` image; reads `content.video_url` and
  `usage.completion_tokens`; its recorded real response echoes the BytePlus id in `model`;
- new-api, `QuantumNous/new-api` `relay/channel/task/doubao/adaptor.go`: Volcengine ids, role-less
  images placed before the text.
"""

from __future__ import annotations

import pytest

from tests.service.conftest import TASKS

pytestmark = pytest.mark.anyio


async def create_ok(env, body: dict, **headers) -> str:
    response = await env.create(body, **headers)
    assert response.status_code == 200, response.text
    assert set(response.json()) == {"id"}
    return response.json()["id"]


def comfy_accepts(record: dict) -> None:
    """What ComfyUI's `TaskStatusResponse` model validates."""
    assert isinstance(record["id"], str) and isinstance(record["model"], str)
    assert record["status"] in ("queued", "running", "cancelled", "succeeded", "failed")
    content = record.get("content")
    assert content is None or isinstance(content.get("video_url"), str)


async def test_official_python_sdk_body_with_every_field_null(env):
    body = {"model": "seedance-1-0-pro-250528",
            "content": [{"type": "text", "text": "a cat --rs 720p --dur 5"}],
            **{name: None for name in (
                "safety_identifier", "callback_url", "return_last_frame", "service_tier",
                "execution_expires_after", "priority", "generate_audio", "draft", "camera_fixed", "watermark",
                "seed", "resolution", "ratio", "duration", "frames", "tools", "output_format",
                "omni_reference_task_type")}}
    task_id = await create_ok(env, body)
    record = (await env.get(task_id)).json()
    assert record["model"] == "seedance-1-0-pro-250528"  # BytePlus family in, BytePlus family out
    assert record["resolution"] == "720p" and record["duration"] == 5


async def test_official_go_sdk_example_with_an_endpoint_id_and_a_text_command(env):
    env.services.settings.endpoints["ep-20250101123456-abcde"] = "doubao-seedance-1-0-pro-250528"
    body = {"content": [{"text": "龙与地下城女骑士背景是起伏的平原，目光从镜头转向平原 --ratio 1:1", "type": "text"},
                        {"image_url": {"url": "https://example.com/first.png"}, "type": "image_url"}],
            "model": "ep-20250101123456-abcde"}
    task_id = await create_ok(env, body)
    record = (await env.get(task_id)).json()
    assert record["model"] == "doubao-seedance-1-0-pro-250528" and record["ratio"] == "1:1"
    env.clock.advance(1)  # the list window ends before the current second
    by_endpoint = (await env.list([("filter.model", "ep-20250101123456-abcde")])).json()
    assert [t["id"] for t in by_endpoint["items"]] == [task_id]


async def test_litellm_endpoint_id_with_a_lone_reference_image(env):
    env.services.settings.endpoints["ep-test-123"] = "doubao-seedance-2-0-260128"
    body = {"model": "ep-test-123",
            "content": [{"type": "text", "text": "Create a polished fruit tea ad"},
                        {"type": "image_url", "image_url": {"url": "https://example.com/reference.png"},
                         "role": "reference_image"}],
            "ratio": "16:9", "duration": 11, "generate_audio": True}
    task_id = await create_ok(env, body)
    record = (await env.get(task_id)).json()
    assert (record["model"], record["ratio"], record["duration"]) == ("doubao-seedance-2-0-260128", "16:9", 11)


@pytest.mark.parametrize("body", [
    {"model": "seedance-1-0-pro-fast-251015",
     "content": [{"type": "text", "text": "A red fox trots through snow --resolution 720p --ratio 16:9 --duration 5 "
                                          "--seed 0 --camerafixed false --watermark false"}]},
    {"model": "seedance-1-5-pro-251215",
     "content": [{"type": "text", "text": "A red fox trots through snow --resolution 1080p --ratio adaptive "
                                          "--duration 4 --seed 42 --camerafixed false --watermark false"},
                 {"type": "image_url", "image_url": {"url": "https://example.com/first.png"}}],
     "generate_audio": False},
    {"model": "seedance-1-0-pro-250528",
     "content": [{"type": "text", "text": "Morph --resolution 480p --ratio 16:9 --duration 3 --seed 7 "
                                          "--camerafixed true --watermark false"},
                 {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}, "role": "first_frame"},
                 {"type": "image_url", "image_url": {"url": "https://example.com/b.png"}, "role": "last_frame"}]},
], ids=["1.0 pro fast text", "1.5 pro first frame", "1.0 pro first and last"])
async def test_comfyui_seedance_1_nodes_send_parameters_as_text_commands(env, body):
    task_id = await create_ok(env, body)
    record = (await env.get(task_id)).json()
    comfy_accepts(record)
    assert record["model"] == body["model"]
    text = body["content"][0]["text"]
    resolution = text.split("--resolution ")[1].split()[0]
    seed = int(text.split("--seed ")[1].split()[0])
    duration = int(text.split("--duration ")[1].split()[0])
    assert (record["resolution"], record["seed"], record["duration"]) == (resolution, seed, duration)
    env.run_all()
    done = (await env.get(task_id)).json()
    comfy_accepts(done)
    assert done["status"] == "succeeded" and done["seed"] == seed


async def test_comfyui_seedance_2_nodes_send_byteplus_ids_and_asset_urls(env):
    body = {"model": "dreamina-seedance-2-0-fast-260128",
            "content": [{"type": "text", "text": "Walks toward camera"},
                        {"type": "image_url", "image_url": {"url": "asset://asset-20260101000000-abcde"},
                         "role": "first_frame"}],
            "generate_audio": True, "resolution": "480p", "ratio": "adaptive", "duration": 5, "seed": 0,
            "watermark": False}
    # ComfyUI sends its 2.x bodies to its own proxy with a seed; the spec says generation 2.0 takes
    # none, and this service follows the spec: a 400 that names the field, then the same body
    # without it goes through.
    refused = await env.create(body)
    assert refused.status_code == 400 and refused.json()["error"]["param"] == "seed"
    body.pop("seed")
    task_id = await create_ok(env, body)
    record = (await env.get(task_id)).json()
    comfy_accepts(record)
    assert record["model"] == "dreamina-seedance-2-0-fast-260128" and record["resolution"] == "480p"


async def test_vercel_ai_sdk_role_less_first_image_then_last_frame(env):
    body = {"model": "seedance-1-5-pro-251215",
            "content": [{"type": "text", "text": "A futuristic city with flying cars"},
                        {"type": "image_url", "image_url": {"url": "https://example.com/first-frame.png"}},
                        {"type": "image_url", "image_url": {"url": "https://example.com/last-frame.png"},
                         "role": "last_frame"}]}
    # An image without a role beside a last frame can only be the first frame (dailies.spec.scenarios).
    task_id = await create_ok(env, body)
    plain = {"model": "seedance-1-0-pro-250528",
             "content": [{"type": "text", "text": "A futuristic city with flying cars"}], "ratio": "16:9"}
    plain_id = await create_ok(env, plain)
    env.run_all()
    record = (await env.get(plain_id)).json()
    assert record["model"] == "seedance-1-0-pro-250528"
    assert record["content"]["video_url"] and record["usage"]["completion_tokens"] > 0
    first_last = (await env.get(task_id)).json()
    assert first_last["model"] == "seedance-1-5-pro-251215" and first_last["status"] == "succeeded"
    assert first_last["content"]["video_url"] and first_last["usage"]["completion_tokens"] > 0


async def test_new_api_role_less_image_before_the_text(env):
    body = {"model": "doubao-seedance-1-5-pro-251215",
            "content": [{"type": "image_url", "image_url": {"url": "https://example.com/first.png"}},
                        {"type": "text", "text": "the camera pulls back --dur 5"}]}
    task_id = await create_ok(env, body)
    record = (await env.get(task_id)).json()
    assert record["model"] == "doubao-seedance-1-5-pro-251215" and record["duration"] == 5


async def test_the_1_0_pro_fast_model_takes_no_last_frame(env):
    body = {"model": "seedance-1-0-pro-fast-251015",
            "content": [{"type": "text", "text": "x"},
                        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}, "role": "first_frame"},
                        {"type": "image_url", "image_url": {"url": "https://example.com/b.png"}, "role": "last_frame"}]}
    response = await env.create(body)
    assert response.status_code == 400 and response.json()["error"]["param"] == "content[2].role"


async def test_a_bad_or_conflicting_text_command_names_the_text(env):
    bad = await env.create({"model": "seedance-1-0-pro-250528", "content": [{"type": "text", "text": "x --rs 2k"}]})
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "content[0].text"
    clash = await env.create({"model": "seedance-1-0-pro-250528",
                              "content": [{"type": "text", "text": "x --dur 5"}], "duration": 8})
    error = clash.json()["error"]
    assert clash.status_code == 400 and error["param"] == "content[0].text"
    assert "--dur 5" in error["message"] and "duration: 8" in error["message"]


async def test_a_draft_made_with_one_family_is_finalised_with_the_other(env):
    draft_id = await create_ok(env, {"model": "seedance-1-5-pro-251215", "draft": True,
                                     "content": [{"type": "text", "text": "a lighthouse"}]})
    env.run_all()
    final = {"model": "doubao-seedance-1-5-pro-251215",
             "content": [{"type": "draft_task", "draft_task": {"id": draft_id}}]}
    final_id = await create_ok(env, final)
    record = (await env.get(final_id)).json()
    assert record["model"] == "doubao-seedance-1-5-pro-251215" and record["draft_task_id"] == draft_id


async def test_unknown_models_of_either_family_are_404(env):
    for model in ("seedance-9-9-pro-991231", "dreamina-seedance-9-0-991231"):
        response = await env.client.post(TASKS, json={"model": model, "content": [{"type": "text", "text": "x"}]},
                                         headers={"Authorization": "Bearer key-a"})
        assert response.status_code == 404 and response.json()["error"]["code"] == "InvalidEndpointOrModel.NotFound"
