"""`Client`: the blocking client. It carries out the plans of `_calls` with blocking I/O; its async
twin, `async_.AsyncClient`, carries out the same plans awaited. Its methods are declared, once for
both, on `_calls.ClientBase` and `_calls.TasksBase`."""

from __future__ import annotations

import httpx

from ._base import DOWNLOAD_CHUNK_BYTES, BodyCollector, replacing
from ._calls import ClientBase, Notify, Plan, Runner, Save, Send, Sleep, Step, T, TasksBase


class Tasks(TasksBase):
    """The task endpoints, as `client.tasks`."""

    _client: Client

    def _run(self, plan: Plan[T]) -> T:
        return self._client._run(plan)


class Client(ClientBase[httpx.Client, httpx.BaseTransport, Tasks]):
    """A blocking client of the video task API.

    Settings come from the arguments, else from `ARK_API_KEY` / `ARK_BASE_URL`, else the base URL
    defaults to the local service, `http://127.0.0.1:8000/api/v3`. The base URL includes the
    version prefix, as the real service's: `https://ark.cn-beijing.volces.com/api/v3`. The arguments
    are described at `__init__`; `transport` is a blocking one: httpx has no blocking ASGI transport,
    so for a service in the same process use `AsyncClient` with `ASGITransport`.

    Use as a context manager, or call `close()`.
    """

    def _new_http(self, transport: httpx.BaseTransport | None, timeout: httpx.Timeout) -> httpx.Client:
        return httpx.Client(transport=transport, timeout=timeout)

    def _new_tasks(self) -> Tasks:
        return Tasks(self)

    # ---- carrying out a plan's steps, blocking ----

    def _run(self, plan: Plan[T]) -> T:
        run = Runner(plan)
        while run.step is not None:
            run.answer(self._carry_out(run.step))
        return run.result

    def _carry_out(self, step: Step) -> httpx.Response | Exception | None:
        """Do one step; what it raised is handed to the plan, which raises it where it asked."""
        try:
            match step:
                case Send():
                    return self._send(step)
                case Sleep(seconds):
                    self._clock.sleep(seconds)
                case Notify(callback, record):
                    callback(record)
                case Save():
                    self._save(step)
        except Exception as exc:
            return exc
        return None

    def _send(self, step: Send) -> httpx.Response:
        response = self._http.send(step.request, stream=True, follow_redirects=step.follow_redirects)
        if not step.reads_whole(response):
            return response
        # Read whole, unless it passes `max_response_bytes` (then refused).
        collector = BodyCollector(response, self._config.max_response_bytes)
        try:
            for chunk in response.iter_bytes():
                collector.add(chunk)
        finally:
            response.close()
        return collector.response_read()

    def _save(self, step: Save) -> None:
        try:
            with replacing(step.path) as partial, partial.open("xb") as file:
                for chunk in step.response.iter_bytes(DOWNLOAD_CHUNK_BYTES):
                    file.write(chunk)
                    step.wrote(chunk)
        finally:
            step.response.close()

    # ---- lifetime ----

    def close(self) -> None:
        """Close the HTTP connections, unless the caller passed its own `http_client`."""
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
