"""Hostile input, categories 2, 5 and 9: wrong and missing headers, oversized bodies, wrong
methods, and slow clients holding connections open against a real server. Each answer is a 4xx
in the error shape naming the header or `body`; a stalled client never keeps anyone else waiting."""

from __future__ import annotations

import logging
import socket
from collections.abc import Iterator

import httpx
import pytest
from sqlalchemy import func, select

from dailies.service.db.tables import tasks
from dailies.spec import limits as L
from tests.service.conftest import TASKS, text_body
from tests.service.hostile import ACCEPTED, AUTH, JSON, assert_refused, hostile_service, module_anyio_backend  # noqa: F401
from tests.support.live_service import API_KEY, start_live_service
from tests.support.waiting import wait_until

pytestmark = pytest.mark.anyio

BODY = text_body("a heron in the reeds")

# ---------- Authorization ----------

BAD_AUTHORIZATION = [
    pytest.param(None, id="missing"),
    pytest.param("", id="empty"),
    pytest.param("Bearer", id="scheme-only"),
    pytest.param("Bearer ", id="empty-token"),
    pytest.param("Bearer    ", id="blank-token"),
    pytest.param("Basic a2V5LWE6", id="basic"),
    pytest.param("Token key-a", id="other-scheme"),
    pytest.param("key-a", id="no-scheme"),
    pytest.param("Bearer key-b-not-known", id="unknown-key"),
    pytest.param("Bearer key-a key-a", id="two-tokens"),
    pytest.param("Bearer\tkey-a", id="tab-separator"),
    pytest.param("Bearer " + "k" * 20_000, id="huge-token"),
    pytest.param("Bearer ' OR 1=1 --", id="injection"),
]


@pytest.mark.parametrize("authorization", BAD_AUTHORIZATION)
@pytest.mark.parametrize("operation", ["create", "list", "get", "delete"])
async def test_missing_and_wrong_authorization(hostile, operation, authorization):
    headers = {"Content-Type": "application/json"}
    if authorization is not None:
        headers["Authorization"] = authorization
    task_id = next(iter(hostile.seeded))
    client = hostile.client
    response = {
        "create": lambda: client.post(TASKS, json=BODY, headers=headers),
        "list": lambda: client.get(TASKS, headers=headers),
        "get": lambda: client.get(f"{TASKS}/{task_id}", headers=headers),
        "delete": lambda: client.delete(f"{TASKS}/{task_id}", headers=headers),
    }[operation]
    error = assert_refused(await response(), "Authorization", status=401, code="AuthenticationError")
    assert "k" * 100 not in error["message"]  # no part of a key is echoed


async def test_authorization_comes_before_the_body(hostile):
    response = await hostile.post(b"\xff not json", {"Authorization": "Bearer nope", "Content-Type": "text/plain"})
    assert_refused(response, "Authorization", status=401)


# ---------- Content-Type ----------

BAD_CONTENT_TYPES = [
    None, "", "text/plain", "text/plain; charset=utf-8", "text/json", "application/x-www-form-urlencoded",
    "multipart/form-data; boundary=xyz", "application/xml", "application/octet-stream", "application/jsonp",
    "application/json-patch", "json", "*/*", "application/*", "application/json; charset=utf-16",
    "application/json; charset=latin-1", "image/png",
]


@pytest.mark.parametrize("content_type", BAD_CONTENT_TYPES)
async def test_bodies_that_are_not_declared_json(hostile, content_type):
    headers = dict(AUTH)
    if content_type is not None:
        headers["Content-Type"] = content_type
    response = await hostile.client.post(TASKS, content=httpx.Request("POST", "/", json=BODY).content, headers=headers)
    error = assert_refused(response, "Content-Type", status=415, code="UnsupportedMediaType")
    assert error["type"] == "UnsupportedMediaType"


@pytest.mark.parametrize("content_type", [
    "application/json", "application/json; charset=utf-8", "application/json;charset=UTF-8", "Application/JSON",
    'application/json; charset="utf-8"', "application/vnd.api+json",
])
async def test_json_media_types_are_accepted(hostile, content_type):
    response = await hostile.client.post(TASKS, content=httpx.Request("POST", "/", json=BODY).content,
                                         headers={**ACCEPTED, "Content-Type": content_type})
    assert response.status_code == 200, response.text


# ---------- Idempotency-Key ----------


@pytest.mark.parametrize("key", [b"", b"k" * (L.IDEMPOTENCY_KEY_MAX_CHARS + 1), b"caf\xe9", b"a\tb", b"\x7f"])
async def test_unusable_idempotency_keys(hostile, key):
    response = await hostile.client.post(TASKS, json=BODY, headers={**AUTH, "Idempotency-Key": key})
    assert_refused(response, "Idempotency-Key", code="InvalidParameter")


# ---------- oversized bodies ----------


async def never_read() -> Iterator[bytes]:
    raise AssertionError("the body must not be read")
    yield b""  # pragma: no cover


@pytest.mark.parametrize("declared", [L.REQUEST_BODY_MAX_BYTES + 1, 10 * L.REQUEST_BODY_MAX_BYTES, 10**30])
async def test_declared_oversized_bodies_are_refused_unread(hostile, declared):
    response = await hostile.client.post(TASKS, content=never_read(),
                                         headers={**JSON, "Content-Length": str(declared)})
    assert_refused(response, "body", status=413, code="RequestEntityTooLarge")


async def test_a_chunked_body_is_cut_off_once_past_the_limit(hostile):
    chunk = b" " * L.MB
    sent = 0

    async def chunks():
        nonlocal sent
        for _ in range(2 * L.REQUEST_BODY_MAX_BYTES // L.MB):
            sent += 1
            yield chunk

    response = await hostile.client.post(TASKS, content=chunks(), headers=JSON)
    assert_refused(response, "body", status=413, code="RequestEntityTooLarge")
    assert sent <= L.REQUEST_BODY_MAX_BYTES // L.MB + 2  # reading stopped at the limit, not at the end


async def test_a_data_url_past_the_limit_is_refused(hostile):
    # Declared honestly, so refused before a byte is read.
    url = "data:image/png;base64," + "A" * L.REQUEST_BODY_MAX_BYTES
    body = {"model": BODY["model"], "content": [BODY["content"][0], {"type": "image_url", "image_url": {"url": url}}]}
    assert_refused(await hostile.create(body), "body", status=413)


# ---------- methods ----------


@pytest.mark.parametrize(("method", "path"), [
    ("PUT", TASKS), ("PATCH", TASKS), ("DELETE", TASKS), ("POST", TASKS + "/cgt-20250101000000-abcde"),
    ("PUT", TASKS + "/cgt-20250101000000-abcde"), ("POST", "/healthz"), ("DELETE", "/files/a/b"),
])
async def test_wrong_methods(hostile, method, path):
    response = await hostile.client.request(method, path, headers=JSON, content=b"{}")
    assert_refused(response, "", status=405, code="MethodNotAllowed")


# ---------- slow clients, against a real server ----------


@pytest.fixture
def live(tmp_path):
    service = start_live_service(tmp_path, workers=0)
    yield service
    service.stop()


def stalled(port: int, first_bytes: bytes) -> socket.socket:
    sock = socket.create_connection(("127.0.0.1", port), timeout=10)
    sock.sendall(first_bytes)
    return sock


SLOW = [
    pytest.param(b"POST /api/v3/contents/generations/tasks HTTP/1.1\r\nHost: x\r\n", id="headers-never-end"),
    pytest.param(b"GET /healthz HTT", id="request-line-never-ends"),
    pytest.param(b"POST /api/v3/contents/generations/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                 + API_KEY.encode() + b"\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n"
                 + b'{"model": ', id="body-never-ends"),
]


@pytest.mark.parametrize("first_bytes", SLOW)
def test_slow_clients_holding_connections_do_not_block_others(live, caplog, first_bytes):
    port = int(live.root.rsplit(":", 1)[1])
    auth = {"Authorization": f"Bearer {live.api_key}"}
    with httpx.Client(base_url=live.root, timeout=30) as client:
        before = client.post("/api/v3/contents/generations/tasks", json=BODY, headers=auth).json()["id"]
        caplog.set_level(logging.WARNING)
        sockets = [stalled(port, first_bytes) for _ in range(25)]
        try:
            connections = live.server.server_state.connections
            wait_until(lambda: len(connections) >= 25, "the server has accepted every stalled connection")
            # Answered while 25 connections sit half-sent:
            assert client.get("/healthz").json() == {"status": "ok"}
            created = client.post("/api/v3/contents/generations/tasks", json=BODY, headers=auth)
            assert created.status_code == 200, created.text
            refused = client.post("/api/v3/contents/generations/tasks", content=b"{", headers={
                **auth, "Content-Type": "application/json"})
            assert_refused(refused, "body")
        finally:
            for sock in sockets:
                sock.close()
        wait_until(lambda: len(connections) <= 1, "the server has let go of the closed connections")
        assert client.get(f"/api/v3/contents/generations/tasks/{before}", headers=auth).json()["status"] == "queued"
        assert client.get("/healthz").status_code == 200
    # A client that went away mid-body is not a server error.
    assert not [r for r in caplog.records if r.levelno >= logging.ERROR and r.name.startswith("dailies")]


def test_a_client_that_disconnects_mid_body_leaves_no_task(live):
    port = int(live.root.rsplit(":", 1)[1])
    auth = {"Authorization": f"Bearer {live.api_key}"}
    sock = stalled(port, b"POST /api/v3/contents/generations/tasks HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer "
                         + live.api_key.encode() + b"\r\nContent-Type: application/json\r\nContent-Length: 500\r\n\r\n"
                         + b'{"model": "doubao-seedance-2-0-260128", "content": [')
    connections = live.server.server_state.connections
    wait_until(lambda: len(connections) >= 1, "the server has the half-sent request")
    sock.close()
    wait_until(lambda: len(connections) == 0, "the server has dropped the closed connection")
    with live.app.state.services.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(tasks)).scalar_one() == 0
    with httpx.Client(base_url=live.root, timeout=30) as client:
        assert client.get("/healthz").status_code == 200
        assert client.post("/api/v3/contents/generations/tasks", json=BODY, headers=auth).status_code == 200
