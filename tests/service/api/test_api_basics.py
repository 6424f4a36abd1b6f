"""Create, get, list and delete through the HTTP API, in process."""

from __future__ import annotations

import logging
import re

import httpx
import pytest

from dailies.service.api.app import create_app
from dailies.service.settings import Settings
from tests.service.conftest import (
    KEY_A,
    KEY_B,
    MODEL_1_0,
    MODEL_1_5,
    MODEL_2_0,
    TASKS,
    FakeClock,
    FakeGenerator,
    text_body,
)

pytestmark = pytest.mark.anyio


def assert_error(response, status: int, code: str, param: str | None = None) -> dict:
    assert response.status_code == status, response.text
    error = response.json()["error"]
    assert set(error) >= {"message", "type", "param", "code"}
    assert error["code"] == code
    if param is not None:
        assert error["param"] == param
    request_id = response.headers["X-Request-Id"]
    assert error["message"].endswith(f"Request ID: {request_id}")
    return error


async def test_healthz_needs_no_key(env):
    response = await env.client.get("/healthz")
    assert response.status_code == 200 and response.json() == {"status": "ok"}


@pytest.mark.parametrize("header", [None, "Bearer", "Basic key-a", "Bearer nope", "key-a"])
async def test_bad_or_missing_key_is_401(env, header):
    headers = {"Authorization": header} if header is not None else {}
    response = await env.client.post(TASKS, json=text_body(), headers=headers)
    error = assert_error(response, 401, "AuthenticationError")
    assert error["type"] == "Unauthorized"


async def test_create_returns_task_id_and_echoes_safety_identifier(env):
    response = await env.create(text_body(safety_identifier="user-hash-1"))
    assert response.status_code == 200, response.text
    body = response.json()
    assert re.fullmatch(r"cgt-\d{14}-[a-z0-9]{5}", body["id"])
    assert body["safety_identifier"] == "user-hash-1"
    plain = (await env.create(text_body())).json()
    assert "safety_identifier" not in plain


async def test_sdk_style_nulls_are_not_given(env):
    body = text_body(seed=None, frames=None, tools=None, output_format=None, omni_reference_task_type=None)
    response = await env.create(body)
    assert response.status_code == 200, response.text


@pytest.mark.parametrize(
    ("body", "code", "param"),
    [
        (text_body(colour="red"), "InvalidParameter", "colour"),
        (text_body(duration=5.5), "InvalidParameter", "duration"),
        (text_body(watermark="yes"), "InvalidParameter", "watermark"),
        (text_body(priority=True), "InvalidParameter", "priority"),
        (text_body(priority=10), "InvalidParameter", "priority"),
        (text_body(execution_expires_after=3599), "InvalidParameter", "execution_expires_after"),
        (text_body(ratio="2:1"), "InvalidParameter", "ratio"),
        (text_body(seed=7), "InvalidParameter", "seed"),
        (text_body(service_tier="flex"), "InvalidParameter", "service_tier"),
        (text_body(model=MODEL_1_5, resolution="4k"), "InvalidParameter", "resolution"),
        (text_body(model=MODEL_1_0, frames=30), "InvalidParameter", "frames"),
        ({"content": [{"type": "text", "text": "x"}]}, "MissingParameter", "model"),
        ({"model": MODEL_2_0}, "MissingParameter", "content"),
        ({"model": MODEL_2_0, "content": []}, "MissingParameter", "content"),
        ({"model": MODEL_2_0, "content": [{"type": "image_url"}]}, "MissingParameter", "content[0].image_url"),
        ({"model": MODEL_2_0, "content": [{"type": "text", "text": "x", "role": "first_frame"}]},
         "InvalidParameter", "content[0].role"),
        ({"model": MODEL_2_0, "content": [{"type": "audio_url", "audio_url": {"url": "asset://a"}}]},
         "InvalidParameter", "content[0]"),
        ({"model": MODEL_2_0, "content": [
            {"type": "image_url", "image_url": {"url": "asset://a"}, "role": "first_frame"},
            {"type": "image_url", "image_url": {"url": "asset://b"}, "role": "reference_image"}]},
         "InvalidParameter", "content[1].role"),
        ({"model": MODEL_2_0, "content": [
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,@@@"}}]},
         "InvalidParameter", "content[0].image_url.url"),
        (text_body(callback_url="ftp://example.invalid/x"), "InvalidParameter", "callback_url"),
        (text_body(callback_url="http://10.1.2.3/hook"), "InvalidParameter", "callback_url"),
    ],
)
async def test_bad_requests_are_400_naming_the_field(env, body, code, param):
    assert_error(await env.create(body), 400, code, param)


async def test_every_problem_is_listed(env):
    error = assert_error(await env.create(text_body(seed=7, duration=99, priority=3, tools=[{"type": "web_search"}],
                                                    model=MODEL_1_5)), 400, "InvalidParameter")
    for field in ("duration", "priority", "tools"):
        assert field in error["message"]


@pytest.mark.parametrize("raw", [b"{", b"[1, 2]", b"", b"\xff\xfe", b'"text"'])
async def test_unreadable_bodies_are_400(env, raw):
    response = await env.client.post(TASKS, content=raw, headers={"Authorization": f"Bearer {KEY_A}",
                                                                  "Content-Type": "application/json"})
    assert response.status_code == 400
    assert response.json()["error"]["type"] == "BadRequest"


async def test_declared_oversized_body_is_413_unread(env):
    async def never_read():
        raise AssertionError("the body must not be read")
        yield b""  # pragma: no cover

    response = await env.client.post(TASKS, content=never_read(), headers={
        "Authorization": f"Bearer {KEY_A}", "Content-Length": str(64 * 1024 * 1024 + 1)})
    assert_error(response, 413, "RequestEntityTooLarge")


async def test_streamed_oversized_body_is_413(env):
    chunk = b" " * (1024 * 1024)
    sent = 0

    async def chunks():
        nonlocal sent
        for _ in range(80):
            sent += 1
            yield chunk

    response = await env.client.post(TASKS, content=chunks(), headers={"Authorization": f"Bearer {KEY_A}",
                                                                       "Content-Type": "application/json"})
    assert_error(response, 413, "RequestEntityTooLarge")


async def test_unknown_model_is_404_and_endpoint_ids_work(env):
    assert_error(await env.create(text_body(model="doubao-nope")), 404, "InvalidEndpointOrModel.NotFound", "model")
    endpoint = next(ep for ep, m in env.services.settings.endpoints.items() if m == MODEL_2_0)
    created = (await env.create(text_body(model=endpoint))).json()
    record = (await env.get(created["id"])).json()
    assert record["model"] == MODEL_2_0
    env.clock.advance(1)
    by_endpoint = (await env.list([("filter.model", endpoint)])).json()
    assert [t["id"] for t in by_endpoint["items"]] == [created["id"]]
    assert (await env.list([("filter.model", MODEL_2_0)])).json()["total"] == 0


async def test_other_projects_tasks_are_404_everywhere(env):
    task_id = (await env.create(text_body())).json()["id"]
    env.clock.advance(1)
    assert_error(await env.get(task_id, key=KEY_B), 404, "NotFound.Task")
    assert_error(await env.delete(task_id, key=KEY_B), 404, "NotFound.Task")
    assert (await env.list(key=KEY_B)).json() == {"total": 0, "items": []}
    assert (await env.list([("filter.task_ids", task_id)], key=KEY_B)).json()["total"] == 0
    assert (await env.get(task_id)).status_code == 200


async def test_unknown_route_and_method_use_the_error_shape(env):
    assert_error(await env.client.get("/api/v3/nothing"), 404, "NotFound")
    response = await env.client.put(TASKS, headers={"Authorization": f"Bearer {KEY_A}"})
    assert response.status_code == 405
    assert response.json()["error"]["code"] == "MethodNotAllowed"
    assert set(response.headers["Allow"].replace(" ", "").split(",")) == {"GET", "POST"}  # RFC 9110


async def test_a_path_cannot_write_lines_of_its_own_into_the_request_log(tmp_path, caplog):
    """The logged path is percent-decoded: %0A was a line break, and anyone without a key could add a line
    ("DELETE .../tasks/cgt-... -> 200") to the log an operator reads to learn who did what, or a NUL."""
    settings = Settings(data_dir=tmp_path, api_keys={KEY_A: "alpha"}, workers=0, clock=FakeClock(), log_requests=True)
    app = create_app(settings, generator=FakeGenerator(), start_background=False)
    caplog.set_level(logging.INFO, logger="dailies")
    forged = "/x%0A2026-11-25 19:21:00,000 INFO dailies.http: DELETE /api/v3/tasks/cgt-1 -> 200%00"
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as client:
        assert (await client.get(forged)).status_code == 404
    app.state.services.engine.dispose()
    [line] = [r.getMessage() for r in caplog.records if r.name == "dailies.http"]
    assert "\n" not in line and "\x00" not in line and line.isprintable(), line
    assert line.startswith("GET /x\\n2026-11-25 19:21:00,000 INFO dailies.http: DELETE"), line


async def test_one_log_line_per_request_and_per_state_change(tmp_path, caplog):
    settings = Settings(data_dir=tmp_path, api_keys={KEY_A: "alpha"}, workers=0, clock=FakeClock(), log_requests=True)
    app = create_app(settings, generator=FakeGenerator(), start_background=False)
    auth = {"Authorization": f"Bearer {KEY_A}"}
    caplog.set_level(logging.INFO, logger="dailies")
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as client:
        created = await client.post(TASKS, json=text_body(), headers=auth)
        task_id = created.json()["id"]
        row = app.state.services.store.claim_next("w1", settings.clock())
        app.state.services.workers.run_one(row, "w1")
        await client.get(f"{TASKS}/{task_id}", headers=auth)
        await client.get(TASKS, headers={"Authorization": "Bearer nope"})
        await client.delete(f"{TASKS}/{task_id}", headers=auth)
    app.state.services.engine.dispose()
    requests = [r.getMessage() for r in caplog.records if r.name == "dailies.http"]
    assert len(requests) == 4, requests
    assert requests[0].startswith(f"POST {TASKS} -> 200 in ")
    assert requests[2].startswith(f"GET {TASKS} -> 401 in ")
    request_id = created.headers["X-Request-Id"]
    assert requests[0].endswith(f"(request {request_id})")
    changes = [r.getMessage() for r in caplog.records if r.name == "dailies.tasks" and task_id in r.getMessage()]
    assert [c.split(" (")[0] for c in changes] == [
        f"task {task_id} created -> queued", f"task {task_id} -> running", f"task {task_id} -> succeeded",
        f"task {task_id} deleted"], changes


async def test_a_filter_the_list_does_not_know_is_refused_not_ignored(env):
    """Ignored, a misspelled filter answered the whole list: a script listing some ids to delete them would
    delete everything. qs/axios arrays (`filter.task_ids[]=`) mean the repeated name."""
    ids = [(await env.create(text_body(f"shot {n}"))).json()["id"] for n in range(2)]
    env.clock.advance(1)
    for name in ("filter.bogus", "filter[status]", "filter.task_id", "filters.status"):
        assert_error(await env.list([(name, "succeeded")]), 400, "InvalidParameter", name)
    listed = (await env.list([("filter.task_ids[]", ids[0])])).json()
    assert [item["id"] for item in listed["items"]] == [ids[0]]
    both = (await env.list([("filter.task_ids[]", ids[0]), ("filter.task_ids", ids[1])])).json()
    assert sorted(item["id"] for item in both["items"]) == sorted(ids)
    assert (await env.list([("page_size", "5"), ("anything_else", "1")])).status_code == 200


async def test_two_authorization_headers_with_different_keys_are_refused(env):
    """FastAPI takes the first; a proxy may have checked or added the other. Acting for one key while
    another was vouched for is refused; the same key twice is one key."""
    both = [("Authorization", f"Bearer {KEY_A}"), ("Authorization", f"Bearer {KEY_B}")]
    error = assert_error(await env.client.get(TASKS, headers=both), 401, "AuthenticationError")
    assert "more than once" in error["message"]
    assert KEY_A not in error["message"] and KEY_B not in error["message"]
    same = [("Authorization", f"Bearer {KEY_A}")] * 2
    assert (await env.client.get(TASKS, headers=same)).status_code == 200


async def test_a_compressed_body_is_refused_as_compressed_not_as_bad_text(env):
    """It was "The request body is not UTF-8 (byte 0x8b at 1)": a client that gzips its bodies learns
    nothing from that."""
    import gzip
    import json

    body = gzip.compress(json.dumps(text_body()).encode())
    response = await env.client.post(TASKS, content=body, headers={
        "Authorization": f"Bearer {KEY_A}", "Content-Type": "application/json", "Content-Encoding": "gzip"})
    error = assert_error(response, 415, "UnsupportedMediaType", "Content-Encoding")
    assert "uncompressed" in error["message"]
    plain = await env.client.post(TASKS, json=text_body(), headers={
        "Authorization": f"Bearer {KEY_A}", "Content-Encoding": "identity"})
    assert plain.status_code == 200, plain.text
