"""`client.task_request(id)`: a task's stored request from a Dailies service, typed; "no such task"
(`NotFoundError`) told apart from "this service has no such endpoint" (`UnsupportedEndpointError`)."""

from __future__ import annotations

import httpx
import pytest

from dailies.client import NotFoundError, UnsupportedEndpointError
from dailies.spec.models import TaskRequest

from .client_fakes import API_KEY, ScriptedServer, error_body, reply

TASK_ID = "cgt-20250101000000-abcde"
REQUEST_URL = f"http://127.0.0.1:8000/dailies/v1/tasks/{TASK_ID}/request"
STORED = {
    "id": TASK_ID, "model": "doubao-seedance-1-0-pro-250528", "created_by": "alice", "created_at": 1_700_000_000,
    "prompt": "a kite --rs 480p", "resolution": "480p", "seed": 7, "a_newer_field": "kept",
    "content": [
        {"type": "text", "text": "a kite --rs 480p"},
        {"type": "image_url", "role": "first_frame", "image_url": {
            "url": "data:image/jpeg;base64,/9j/", "inline": {"media_type": "image/png", "bytes": 5_000_000,
                                                             "width": 1920, "height": 1080}}},
        {"type": "video_url", "role": "reference_video",
         "video_url": {"url": None, "inline": {"media_type": "video/mp4", "bytes": 1234}}},
        {"type": "image_url", "role": "reference_image", "image_url": {"url": "https://img.example/a.png"}},
    ],
}


def test_task_request_is_typed_and_asks_the_dailies_path(make_client):
    server = ScriptedServer(reply(200, STORED))
    got = make_client(server).task_request(TASK_ID)
    assert isinstance(got, TaskRequest)
    assert (got.created_by, got.prompt, got.resolution, got.seed) == ("alice", "a kite --rs 480p", "480p", 7)
    first, video, url = got.content[1:]
    assert (first.role, first.image_url.inline.width, first.image_url.inline.bytes) == ("first_frame", 1920, 5_000_000)
    assert video.video_url.url is None and video.video_url.inline.media_type == "video/mp4"
    assert url.image_url.url == "https://img.example/a.png" and url.image_url.inline is None
    request = server.requests[0]
    assert (request.method, str(request.url)) == ("GET", REQUEST_URL)
    assert request.headers["Authorization"] == f"Bearer {API_KEY}"


def test_an_unknown_task_is_not_found_and_a_service_without_the_endpoint_is_unsupported(make_client):
    server = ScriptedServer(reply(404, error_body("NotFound.Task", "NotFound", "id")))
    with pytest.raises(NotFoundError) as raised:
        make_client(server).task_request(TASK_ID)
    assert type(raised.value) is NotFoundError and raised.value.code == "NotFound.Task"

    # The real Ark, or an older Dailies: a 404 of its own for a path it does not have (JSON or not).
    for answer in (reply(404, error_body("NotFound", "NotFound")),
                   lambda request: httpx.Response(404, text="<html>404 page not found</html>")):
        server = ScriptedServer(answer)
        with pytest.raises(UnsupportedEndpointError) as raised:
            make_client(server).task_request(TASK_ID)
        assert isinstance(raised.value, NotFoundError) and raised.value.status_code == 404
        assert server.calls == 1  # a 404 is not retried


def test_the_task_id_cannot_escape_its_path(make_client):
    server = ScriptedServer(reply(200, STORED))
    make_client(server).task_request("../x")
    assert server.requests[0].url.raw_path == b"/dailies/v1/tasks/..%2Fx/request"
    with pytest.raises(ValueError):
        make_client(server).task_request("")


@pytest.mark.anyio
async def test_the_async_twin(make_async_client):
    server = ScriptedServer(reply(200, STORED), reply(404, error_body("NotFound", "NotFound")))
    async with make_async_client(server) as client:
        got = await client.task_request(TASK_ID)
        assert got.id == TASK_ID and got.content[1].image_url.inline.height == 1080
        with pytest.raises(UnsupportedEndpointError):
            await client.task_request(TASK_ID)
    assert str(server.requests[0].url) == REQUEST_URL
