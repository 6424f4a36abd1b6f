"""`AsyncClient`: the asyncio/trio client. It carries out the plans of `_calls` awaited; its blocking
twin, `sync.Client`, carries out the same plans. Its methods are declared, once for both, on
`_calls.ClientBase` and `_calls.TasksBase`."""

from __future__ import annotations

import inspect

import anyio
import httpx

from ._base import DOWNLOAD_CHUNK_BYTES, BodyCollector, replacing
from ._calls import ClientBase, Notify, Plan, Runner, Save, Send, Sleep, Step, T, TasksBase


class AsyncTasks(TasksBase):
    """The task endpoints, as `client.tasks`, awaited."""

    _client: AsyncClient

    async def _run(self, plan: Plan[T]) -> T:
        return await self._client._run(plan)


class AsyncClient(ClientBase[httpx.AsyncClient, httpx.AsyncBaseTransport, AsyncTasks]):
    """An async client of the video task API; every method of `Client`, awaited (the arguments are
    described at `__init__`). `transport` is an async one: `httpx.ASGITransport(app=...)` serves an
    in-process service. `wait`'s `on_update` may be a coroutine function.

    Use as an async context manager, or `await close()`.
    """

    def _new_http(self, transport: httpx.AsyncBaseTransport | None, timeout: httpx.Timeout) -> httpx.AsyncClient:
        return httpx.AsyncClient(transport=transport, timeout=timeout)

    def _new_tasks(self) -> AsyncTasks:
        return AsyncTasks(self)

    # ---- carrying out a plan's steps, awaited ----

    async def _run(self, plan: Plan[T]) -> T:
        run = Runner(plan)
        while run.step is not None:
            run.answer(await self._carry_out(run.step))
        return run.result

    async def _carry_out(self, step: Step) -> httpx.Response | Exception | None:
        """Do one step; what it raised is handed to the plan, which raises it where it asked."""
        try:
            match step:
                case Send():
                    return await self._send(step)
                case Sleep(seconds):
                    await self._clock.asleep(seconds)
                case Notify(callback, record):
                    if inspect.isawaitable(result := callback(record)):
                        await result
                case Save():
                    await self._save(step)
        except Exception as exc:
            return exc
        return None

    async def _send(self, step: Send) -> httpx.Response:
        response = await self._http.send(step.request, stream=True, follow_redirects=step.follow_redirects)
        if step.reads_whole(response):
            # Read whole, unless it passes `max_response_bytes` (then refused).
            collector = BodyCollector(response, self._config.max_response_bytes)
            try:
                async for chunk in response.aiter_bytes():
                    collector.add(chunk)
            finally:
                await response.aclose()
            response = collector.response_read()
        return response

    async def _save(self, step: Save) -> None:
        try:
            with replacing(step.path) as partial:
                # Writes run in a worker thread, so a slow disk does not stall the event loop.
                async with await anyio.open_file(partial, "xb") as file:
                    async for chunk in step.response.aiter_bytes(DOWNLOAD_CHUNK_BYTES):
                        await file.write(chunk)
                        step.wrote(chunk)
        finally:
            await step.response.aclose()

    # ---- lifetime ----

    async def close(self) -> None:
        """Close the HTTP connections, unless the caller passed its own `http_client`."""
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
