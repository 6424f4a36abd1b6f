"""Test doubles for the client tests: a fake clock and a scripted server for httpx.MockTransport.

A module of its own (not conftest) so test modules can import these names directly.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import httpx

BASE_URL = "http://127.0.0.1:8000/api/v3"
TASKS_URL = BASE_URL + "/contents/generations/tasks"
OWN_TASKS_URL = "http://127.0.0.1:8000/dailies/v1/tasks"
API_KEY = "sk-test-key"


class FakeClock:
    """Time that moves only when the client sleeps (or a test advances it)."""

    def __init__(self, start: float = 1000.0, wall: float = 1_700_000_000.0) -> None:
        self._start = start
        self._now = start
        self._wall = wall
        self.sleeps: list[float] = []

    def now(self) -> float:
        return self._now

    def time(self) -> float:
        return self._wall + (self._now - self._start)

    def sleep(self, seconds: float) -> None:
        assert seconds >= 0, seconds
        self.sleeps.append(seconds)
        self._now += seconds

    async def asleep(self, seconds: float) -> None:
        self.sleep(seconds)

    @property
    def elapsed(self) -> float:
        return self._now - self._start


Reply = httpx.Response | Exception | Callable[[httpx.Request], httpx.Response]


class ScriptedServer:
    """A MockTransport handler answering from a script, one item per request.

    An item is a response factory (called with the request), or an exception to raise. The last
    item answers every request after the script runs out. Every request is recorded.
    """

    def __init__(self, *script: Reply) -> None:
        assert script, "a server needs at least one reply"
        self.script = list(script)
        self.requests: list[httpx.Request] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        # A request read here is one the client finished sending: its body can be inspected later.
        request.read()
        self.requests.append(request)
        item = self.script.pop(0) if len(self.script) > 1 else self.script[0]
        if isinstance(item, Exception):
            raise item
        if isinstance(item, httpx.Response):
            return item
        return item(request)

    @property
    def calls(self) -> int:
        return len(self.requests)


def reply(status: int = 200, json: Any = None, headers: dict[str, str] | None = None, **kw: Any):
    """A factory of fresh responses (an httpx.Response can answer one request only)."""

    def make(request: httpx.Request) -> httpx.Response:
        if json is None and "content" not in kw:
            return httpx.Response(status, headers=headers, **kw)
        return httpx.Response(status, json=json, headers=headers, **kw)

    return make


def error_body(code: str, type_: str, param: str | None = None, request_id: str = "req-123") -> dict:
    message = f"something is wrong with {param or 'the request'}. Request ID: {request_id}"
    return {"error": {"message": message, "type": type_, "param": param, "code": code}}


def record(task_id: str = "cgt-20250101000000-abcde", status: str = "queued", **fields: Any) -> dict:
    return {"id": task_id, "model": "doubao-seedance-1-5-pro-251215", "status": status,
            "created_at": 1_700_000_000, "updated_at": 1_700_000_000, **fields}


def hung(clock: FakeClock) -> Callable[[httpx.Request], httpx.Response]:
    """A service that takes the connection and never answers: each request waits out its read timeout
    (on the fake clock) and times out. Records the read timeout each request was sent with."""
    def answer(request: httpx.Request) -> httpx.Response:
        read = request.extensions["timeout"]["read"]
        answer.read_timeouts.append(read)
        clock.sleep(read)
        raise httpx.ReadTimeout("timed out", request=request)

    answer.read_timeouts = []
    return answer

