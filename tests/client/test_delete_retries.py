"""A DELETE retried after an attempt whose answer was lost (the service did it; the client saw a read
timeout): the retry's "already cancelled" (409) or "no such task" (404) is the first attempt's work,
so the call succeeds. An attempt that never reached the service (no connection) proves nothing:
then a 404 is still an error. Against the service in this process."""

from __future__ import annotations

import httpx
import pytest

from dailies.client import AsyncClient, NotFoundError
from dailies.client._retry import Attempts, done_by_earlier_attempt

from ..conftest import Backend
from ..service.conftest import KEY_A, FakeGenerator, service_env, text_body
from .client_fakes import FakeClock

pytestmark = pytest.mark.anyio


class LosesFirstAnswer(httpx.AsyncBaseTransport):
    """Passes every request to the app; the first DELETE's answer is lost (or, `unsent`, the first
    DELETE never gets a connection)."""

    def __init__(self, app, unsent: bool = False) -> None:
        self.inner = httpx.ASGITransport(app=app)
        self.unsent = unsent
        self.deletes: list[int | str] = []

    async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
        first = request.method == "DELETE" and not self.deletes
        if first and self.unsent:
            self.deletes.append("no connection")
            raise httpx.ConnectError("refused", request=request)
        response = await self.inner.handle_async_request(request)
        await response.aread()
        if request.method == "DELETE":
            self.deletes.append(response.status_code)
        if first:
            raise httpx.ReadTimeout("answer lost", request=request)
        return response


def client(transport: httpx.AsyncBaseTransport) -> AsyncClient:
    return AsyncClient(api_key=KEY_A, base_url="http://testserver/api/v3", transport=transport, rng=lambda: 0.0,
                       clock=FakeClock())


async def test_a_cancel_whose_answer_was_lost_is_done(tmp_path):
    async with service_env(tmp_path, Backend("sqlite"), FakeGenerator()) as env:
        task_id = (await env.create(text_body())).json()["id"]
        transport = LosesFirstAnswer(env.app)
        async with client(transport) as dailies:
            await dailies.tasks.cancel(task_id)
        assert transport.deletes == [200, 409]
        assert (await env.get(task_id)).json()["status"] == "cancelled"


async def test_a_delete_whose_answer_was_lost_is_done(tmp_path):
    async with service_env(tmp_path, Backend("sqlite"), FakeGenerator()) as env:
        task_id = (await env.create(text_body())).json()["id"]
        env.run_all()
        transport = LosesFirstAnswer(env.app)
        async with client(transport) as dailies:
            await dailies.tasks.delete(task_id)
        assert transport.deletes == [200, 404]
        assert (await env.get(task_id)).status_code == 404


async def test_a_404_after_an_attempt_that_never_connected_is_still_an_error(tmp_path):
    async with service_env(tmp_path, Backend("sqlite"), FakeGenerator()) as env:
        transport = LosesFirstAnswer(env.app, unsent=True)
        async with client(transport) as dailies:
            with pytest.raises(NotFoundError):
                await dailies.tasks.delete("cgt-20260101000000-nosuch")
        assert transport.deletes == ["no connection", 404]


def test_which_failures_may_have_been_carried_out():
    request = httpx.Request("DELETE", "http://x/t/1")
    for error, maybe in ((httpx.ConnectError("x"), False), (httpx.ConnectTimeout("x"), False),
                         (httpx.ReadTimeout("x"), True), (httpx.RemoteProtocolError("x"), True)):
        attempts = Attempts()
        attempts.failed(error=error)
        assert attempts.maybe_applied is maybe, error
    for status, maybe in ((429, False), (408, True), (502, True), (503, True)):
        attempts = Attempts()
        attempts.failed(response=httpx.Response(status, request=request))
        assert attempts.maybe_applied is maybe, status
    after_lost = Attempts(maybe_applied=True)
    assert done_by_earlier_attempt(after_lost, 404, "NotFound.Task")
    assert done_by_earlier_attempt(after_lost, 409, "InvalidAction.CancelledTaskDeletion")
    assert not done_by_earlier_attempt(after_lost, 409, "InvalidAction.RunningTaskDeletion")
    assert not done_by_earlier_attempt(Attempts(), 404, "NotFound.Task")
