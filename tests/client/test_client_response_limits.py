"""The client reads no answer larger than `max_response_bytes` into memory.

A dashboard's server reads the answers of services its visitors name: one that answered a list with
gigabytes (or an endless body, or a gzip bomb) would take the server's memory for every session.
"""

from __future__ import annotations

import gzip
import json

import httpx
import pytest

from dailies.client import APIResponseTooLargeError, AsyncClient, Client

LIMIT = 4096
EMPTY_LIST = {"items": [], "total": 0}


class Endless(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A body that never ends, counting what was taken from it."""

    def __init__(self) -> None:
        self.chunks_taken = 0

    def _next(self) -> bytes:
        self.chunks_taken += 1
        return b"[" * 1024

    def __iter__(self):
        while True:
            yield self._next()

    async def __aiter__(self):
        while True:
            yield self._next()


def _client(handler, **kwargs) -> Client:
    return Client(api_key="k", base_url="http://svc.test/api/v3", transport=httpx.MockTransport(handler),
                  max_retries=0, max_response_bytes=LIMIT, **kwargs)


def test_an_answer_within_the_limit_is_read_as_before():
    client = _client(lambda request: httpx.Response(200, json=EMPTY_LIST))
    assert client.tasks.list().total == 0


def test_an_endless_answer_is_refused_after_the_limit_and_not_read_further():
    body = Endless()
    client = _client(lambda request: httpx.Response(200, stream=body))
    with pytest.raises(APIResponseTooLargeError) as caught:
        client.tasks.list()
    assert caught.value.limit == LIMIT and caught.value.status_code == 200
    assert "max_response_bytes" in str(caught.value)
    assert body.chunks_taken <= LIMIT // 1024 + 2


def test_a_gzip_bomb_counts_at_its_decoded_size():
    padded = json.dumps({"items": [], "total": 0, "pad": " " * (LIMIT * 50)}).encode()
    packed = gzip.compress(padded)
    assert len(packed) < LIMIT  # small on the wire
    headers = {"Content-Encoding": "gzip", "Content-Type": "application/json"}
    client = _client(lambda request: httpx.Response(200, content=packed, headers=headers))
    with pytest.raises(APIResponseTooLargeError):
        client.tasks.list()


def test_a_small_gzip_answer_is_decoded_once():
    packed = gzip.compress(json.dumps(EMPTY_LIST).encode())
    headers = {"Content-Encoding": "gzip", "Content-Type": "application/json"}
    client = _client(lambda request: httpx.Response(200, content=packed, headers=headers))
    assert client.tasks.list().total == 0


def test_a_huge_error_answer_is_refused_too():
    client = _client(lambda request: httpx.Response(500, stream=Endless()))
    with pytest.raises(APIResponseTooLargeError) as caught:
        client.tasks.get("cgt-20260101000000-abcde")
    assert caught.value.status_code == 500


def test_an_error_answer_within_the_limit_still_maps_to_its_class():
    from dailies.client import NotFoundError

    error = {"error": {"message": "gone. Request ID: r1", "type": "NotFound", "code": "NotFound.Task", "param": ""}}
    client = _client(lambda request: httpx.Response(404, json=error))
    with pytest.raises(NotFoundError) as caught:
        client.tasks.get("cgt-20260101000000-abcde")
    assert caught.value.code == "NotFound.Task" and caught.value.request_id == "r1"


def test_a_download_streams_to_its_file_whatever_its_size(tmp_path):
    video = b"\0" * (LIMIT * 10)
    client = _client(lambda request: httpx.Response(200, content=video))
    path = client.download("http://svc.test/files/a.mp4", tmp_path / "a.mp4")
    assert path.read_bytes() == video


def test_the_async_client_refuses_an_endless_answer_too():
    import anyio

    body = Endless()

    async def main():
        async with AsyncClient(api_key="k", base_url="http://svc.test/api/v3", max_retries=0,
                               max_response_bytes=LIMIT,
                               transport=httpx.MockTransport(lambda request: httpx.Response(200, stream=body))) as c:
            with pytest.raises(APIResponseTooLargeError):
                await c.tasks.list()

    anyio.run(main)
    assert body.chunks_taken <= LIMIT // 1024 + 2


def test_a_limit_below_one_byte_is_refused():
    with pytest.raises(ValueError, match="max_response_bytes"):
        Client(api_key="k", max_response_bytes=0)
