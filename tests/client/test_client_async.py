"""`AsyncClient` against httpx.MockTransport: the same behaviour as `Client`, awaited."""

from __future__ import annotations

import json

import httpx
import pytest

from dailies.client import (
    APIConnectionError,
    APITimeoutError,
    AsyncClient,
    BadRequestError,
    ConflictError,
    InternalServerError,
    MissingAPIKeyError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    RequestValidationError,
    WaitTimeout,
)
from dailies.spec.models import CallbackLog, ListTasksResponse, TaskRecord

from .client_fakes import (
    API_KEY,
    BASE_URL,
    OWN_TASKS_URL,
    TASKS_URL,
    ScriptedServer,
    error_body,
    hung,
    record,
    reply,
)

pytestmark = pytest.mark.anyio

TASK_ID = "cgt-20250101000000-abcde"
CREATE_BODY = {"model": "doubao-seedance-2-0-260128", "content": [{"type": "text", "text": "a red kite"}]}
VIDEO = b"\x00\x01" * 300_000


def created(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, json={"id": TASK_ID})


async def test_missing_key_is_refused_and_env_vars_are_fallbacks(monkeypatch):
    with pytest.raises(MissingAPIKeyError):
        AsyncClient()
    monkeypatch.setenv("ARK_API_KEY", "sk-env")
    monkeypatch.setenv("ARK_BASE_URL", "https://ark.ap-southeast.bytepluses.com/api/v3/")
    server = ScriptedServer(reply(200, record(TASK_ID)))
    async with AsyncClient(transport=httpx.MockTransport(server)) as client:
        await client.tasks.get(TASK_ID)
    request = server.requests[0]
    assert request.headers["Authorization"] == "Bearer sk-env"
    assert str(request.url) == f"https://ark.ap-southeast.bytepluses.com/api/v3/contents/generations/tasks/{TASK_ID}"


async def test_callbacks_returns_the_typed_delivery_log(make_async_client):
    log = {"items": [{"webhook_id": "msg_1", "status": "queued", "attempt": 1, "at": 1.5, "status_code": 204,
                      "latency_ms": 3.0, "error": None}]}
    server = ScriptedServer(reply(200, log))
    async with make_async_client(server) as client:
        found = await client.tasks.callbacks(TASK_ID)
    assert isinstance(found, CallbackLog) and [a.status_code for a in found.items] == [204]
    assert (server.requests[0].method, str(server.requests[0].url)) == ("GET", f"{OWN_TASKS_URL}/{TASK_ID}/callbacks")


async def test_create_get_list_delete(make_async_client):
    server = ScriptedServer(created, reply(200, record(TASK_ID, "running")),
                            reply(200, {"total": 1, "items": [record(TASK_ID)]}), reply(200, {}))
    async with make_async_client(server) as client:
        assert (await client.tasks.create(CREATE_BODY)).id == TASK_ID
        assert isinstance(await client.tasks.get(TASK_ID), TaskRecord)
        page = await client.tasks.list(task_ids=[TASK_ID, "other"])
        assert isinstance(page, ListTasksResponse) and page.total == 1
        assert await client.tasks.cancel(TASK_ID) is None
    post, get, list_, delete = server.requests
    assert (post.method, str(post.url)) == ("POST", TASKS_URL)
    assert json.loads(post.content) == CREATE_BODY and post.headers["Authorization"] == f"Bearer {API_KEY}"
    assert (get.method, str(get.url)) == ("GET", f"{TASKS_URL}/{TASK_ID}")
    assert list_.url.params.get_list("filter.task_ids") == [TASK_ID, "other"]
    assert (delete.method, str(delete.url), delete.content) == ("DELETE", f"{TASKS_URL}/{TASK_ID}", b"{}")


@pytest.mark.parametrize(
    ("status", "cls"),
    [(400, BadRequestError), (403, PermissionDeniedError), (404, NotFoundError), (409, ConflictError),
     (429, RateLimitError), (500, InternalServerError)],
)
async def test_statuses_map_to_errors(make_async_client, status, cls):
    server = ScriptedServer(reply(status, error_body("Some.Code", "SomeType", "model", request_id="rid-7")))
    async with make_async_client(server, max_retries=0) as client:
        with pytest.raises(cls) as caught:
            await client.tasks.create(CREATE_BODY)
    assert caught.value.status_code == status
    assert (caught.value.code, caught.value.param, caught.value.type) == ("Some.Code", "model", "SomeType")
    assert caught.value.request_id == "rid-7"


async def test_retries_keep_one_idempotency_key(make_async_client, clock):
    server = ScriptedServer(reply(503), httpx.ConnectError("reset"), created, reply(502), created)
    async with make_async_client(server) as client:
        await client.tasks.create(CREATE_BODY)
        await client.tasks.create(CREATE_BODY)
    keys = [r.headers["Idempotency-Key"] for r in server.requests]
    assert len(keys) == 5
    assert len(set(keys[:3])) == 1 and len(set(keys[3:])) == 1 and keys[0] != keys[3]
    assert clock.sleeps == [0.25, 0.5, 0.25]


async def test_retries_are_bounded_and_400_is_not_retried(make_async_client):
    server = ScriptedServer(reply(503))
    async with make_async_client(server, max_retries=2) as client:
        with pytest.raises(InternalServerError):
            await client.tasks.list()
    assert server.calls == 3

    server = ScriptedServer(reply(400, error_body("InvalidParameter", "BadRequest")))
    async with make_async_client(server) as client:
        with pytest.raises(BadRequestError):
            await client.tasks.list()
    assert server.calls == 1


async def test_retry_after_is_honoured(make_async_client, clock):
    server = ScriptedServer(reply(429, headers={"Retry-After": "3"}), created)
    async with make_async_client(server) as client:
        await client.tasks.create(CREATE_BODY)
    assert clock.sleeps == [3.0]


async def test_connect_errors_end_in_a_connection_error(make_async_client):
    server = ScriptedServer(httpx.ConnectError("refused"))
    async with make_async_client(server) as client:
        with pytest.raises(APIConnectionError):
            await client.tasks.get(TASK_ID)
    assert server.calls == 3


async def test_validation_happens_before_sending(make_async_client):
    server = ScriptedServer(created)
    async with make_async_client(server) as client:
        with pytest.raises(RequestValidationError):
            await client.tasks.create({"model": "m"})
        with pytest.raises(RequestValidationError):
            await client.tasks.list(page_size=0)
    assert server.calls == 0


async def test_wait_honours_its_deadline(make_async_client, clock):
    server = ScriptedServer(reply(200, record(TASK_ID, "queued")))
    async with make_async_client(server) as client:
        with pytest.raises(WaitTimeout) as caught:
            await client.wait(TASK_ID, timeout=7, poll_interval=2)
    assert clock.sleeps == [2, 2, 2, 1] and clock.elapsed == 7
    assert caught.value.last.status == "queued"


async def test_a_wait_against_a_service_that_never_answers_ends_at_its_deadline(make_async_client, clock):
    never = hung(clock)
    async with make_async_client(ScriptedServer(never)) as client:
        with pytest.raises(APITimeoutError):
            await client.wait(TASK_ID, timeout=5, poll_interval=2)
    assert never.read_timeouts == [5.0] and clock.elapsed < 6


async def test_wait_returns_the_terminal_record_with_sync_or_async_callbacks(make_async_client):
    server = ScriptedServer(reply(200, record(TASK_ID, "running")), reply(200, record(TASK_ID, "succeeded")))
    seen: list[str] = []

    async def on_update(task: TaskRecord) -> None:
        seen.append(task.status)

    async with make_async_client(server) as client:
        assert (await client.wait(TASK_ID, on_update=on_update)).status == "succeeded"
        assert (await client.wait(TASK_ID, on_update=lambda t: seen.append("sync"))).status == "succeeded"
    assert seen == ["running", "succeeded", "sync"]


async def test_iter_tasks_walks_three_pages(make_async_client):
    def handler(request: httpx.Request) -> httpx.Response:
        num = int(request.url.params["page_num"])
        items = [record(f"p{num}-{i}") for i in range(2 if num < 3 else 1)]
        return httpx.Response(200, json={"total": 5, "items": items})

    server = ScriptedServer(handler)
    async with make_async_client(server) as client:
        ids = [task.id async for task in client.iter_tasks(page_size=2, model="ep-1")]
    assert ids == ["p1-0", "p1-1", "p2-0", "p2-1", "p3-0"]
    assert [r.url.params["page_num"] for r in server.requests] == ["1", "2", "3"]
    assert all(r.url.params["filter.model"] == "ep-1" for r in server.requests)


async def test_download_with_progress_and_no_key_to_a_foreign_host(make_async_client, tmp_path):
    def serve(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=VIDEO)

    server = ScriptedServer(serve)
    progress: list[tuple[int, int | None]] = []
    async with make_async_client(server) as client:
        await client.download(f"{BASE_URL}/files/a.mp4", tmp_path / "a.mp4")
        path = await client.download("https://cdn.example.com/b.mp4", tmp_path / "b.mp4",
                                     progress=lambda *a: progress.append(a))
    assert path.read_bytes() == VIDEO and (tmp_path / "a.mp4").read_bytes() == VIDEO
    assert progress[-1] == (len(VIDEO), len(VIDEO)) and len(progress) == 3
    own, cdn = server.requests
    assert "Authorization" in own.headers and "Authorization" not in cdn.headers
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.mp4", "b.mp4"]


async def test_download_of_an_expired_url(make_async_client, tmp_path):
    server = ScriptedServer(reply(403, error_body("AccessDenied", "Forbidden")))
    async with make_async_client(server) as client:
        with pytest.raises(PermissionDeniedError):
            await client.download("/files/a.mp4", tmp_path / "a.mp4")
    assert list(tmp_path.iterdir()) == []


class BrokenStream(httpx.AsyncByteStream):
    async def __aiter__(self):
        yield b"x" * 10
        raise httpx.ReadError("reset")


async def test_a_download_cut_short_leaves_no_file(make_async_client, tmp_path):
    server = ScriptedServer(lambda request: httpx.Response(200, stream=BrokenStream()))
    async with make_async_client(server) as client:
        with pytest.raises(APIConnectionError):
            await client.download("/files/a.mp4", tmp_path / "a.mp4")
    assert list(tmp_path.iterdir()) == []


async def test_a_callers_http_client_is_left_open(clock):
    server = ScriptedServer(reply(200, record(TASK_ID)))
    http = httpx.AsyncClient(transport=httpx.MockTransport(server))
    async with AsyncClient(api_key=API_KEY, http_client=http, clock=clock) as client:
        await client.tasks.get(TASK_ID)
    assert not http.is_closed
    await http.aclose()


async def test_close_closes_the_own_http_client():
    client = AsyncClient(api_key=API_KEY, transport=httpx.MockTransport(created))
    await client.close()
    assert client._http.is_closed
