"""`AsyncClient`: the asyncio/trio client, the twin of `sync.Client`; both share `_base`."""

from __future__ import annotations

import inspect
import os
import random
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import Any

import anyio
import httpx

from dailies.spec.models import (
    CallbackLog,
    CreateTaskRequest,
    CreateTaskResponse,
    FilterStatus,
    Identity,
    ListTasksResponse,
    ServiceInfo,
    ServiceTier,
    SpendReport,
    TaskRecord,
    TaskRequest,
)
from dailies.spec.prices import Charge, Charges

from ._base import (
    DEFAULT_TIMEOUT,
    DOWNLOAD_CHUNK_BYTES,
    MAX_RESPONSE_BYTES,
    BodyCollector,
    Endpoints,
    Pager,
    ProgressCallback,
    RequestSpec,
    charge_batches,
    check_catalog_rules,
    check_wait_args,
    coerce_create_request,
    content_total,
    list_query,
    log,
    loggable,
    new_idempotency_key,
    next_poll_delay,
    parse_model,
    poll_failed_for_now,
    polling_until,
    replacing,
    resolve_config,
    retry_past_deadline,
    timeout_within_deadline,
    unless_task_not_found,
)
from ._clock import Clock, SystemClock
from ._retry import Attempts, done_by_earlier_attempt, retry_delay
from .errors import (
    APIStatusError,
    DailiesError,
    NotFoundError,
    UnsupportedEndpointError,
    WaitTimeout,
    connection_error_for,
    status_error_for,
)


class AsyncTasks:
    """The task endpoints, as `client.tasks`."""

    def __init__(self, client: AsyncClient) -> None:
        self._client = client

    async def create(
        self,
        request: CreateTaskRequest | Mapping[str, Any],
        *,
        idempotency_key: str | None = None,
        check_rules: bool = True,
    ) -> CreateTaskResponse:
        """Create a video generation task; returns its id.

        A mapping is validated against `CreateTaskRequest` first (`RequestValidationError`). When the
        model id is in the catalog, the catalog's rules for that model are applied too, text commands
        included (`RequestRuleError`, every problem with its field path); `check_rules=False` sends
        the body with the schema check only, for a service that has moved ahead of the catalog.
        Endpoint ids and ids outside the catalog are always left to the service.
        One `Idempotency-Key` (a fresh UUID unless given) is sent on every retry of this call, so a
        retry after a lost response never creates, nor bills, a second task.
        """
        body = coerce_create_request(request)
        if check_rules:
            check_catalog_rules(body)
        key = idempotency_key or new_idempotency_key()
        spec = self._client._endpoints.create(body, key)
        return parse_model(await self._client._send(spec), CreateTaskResponse)

    async def get(self, task_id: str) -> TaskRecord:
        """One task's record."""
        spec = self._client._endpoints.get(task_id)
        return parse_model(await self._client._send(spec), TaskRecord)

    async def list(
        self,
        *,
        page_num: int = 1,
        page_size: int = 20,
        status: FilterStatus | None = None,
        task_ids: Sequence[str] | None = None,
        model: str | None = None,
        service_tier: ServiceTier = "default",
    ) -> ListTasksResponse:
        """One page of the tasks of the last 7 days. See `AsyncClient.iter_tasks` for all of them."""
        query = list_query(
            page_num=page_num, page_size=page_size, status=status,
            task_ids=task_ids, model=model, service_tier=service_tier,
        )
        return parse_model(await self._client._send(self._client._endpoints.list(query)), ListTasksResponse)

    async def delete(self, task_id: str) -> None:
        """Cancel a queued task, or delete the record of a finished one (409 while running). Retried
        after an attempt whose answer was lost, the earlier attempt's work ("already cancelled", "no
        such task") counts as done."""
        attempts = Attempts()
        try:
            await self._client._send(self._client._endpoints.delete(task_id), attempts=attempts)
        except APIStatusError as exc:
            if not done_by_earlier_attempt(attempts, exc.status_code, exc.code):
                raise

    async def cancel_only(self, task_id: str) -> None:
        """Cancel a task that has not started, and never delete one: a Dailies service's own endpoint
        (`/dailies/v1/tasks/{id}/cancel`). `delete` (the spec's DELETE) deletes a finished task for
        good, so a cancel sent as the task ends deletes its result; this one answers 409
        (`ConflictError`, code `InvalidAction.TaskFinished`) instead. A task cancelled already counts
        as done. Raises `UnsupportedEndpointError` on a service without it (the real Ark)."""
        try:
            await self._client._send(self._client._endpoints.cancel_only(task_id))
        except NotFoundError as exc:
            raise unless_task_not_found(exc) from None

    async def callbacks(self, task_id: str) -> CallbackLog:
        """The task's callback delivery log, an endpoint of the local service beyond the specification:
        the real service answers 404 (`NotFoundError`), as it does for a task it does not have."""
        return parse_model(await self._client._send(self._client._endpoints.callbacks(task_id)), CallbackLog)

    cancel = delete


class AsyncClient:
    """An async client of the video task API; every method of `Client`, awaited.

    Settings come from the arguments, else from `ARK_API_KEY` / `ARK_BASE_URL`, else the base URL
    defaults to the local service, `http://127.0.0.1:8000/api/v3`. The base URL includes the
    version prefix, as the real service's: `https://ark.cn-beijing.volces.com/api/v3`.

    Args:
        api_key: bearer token; required here or in `ARK_API_KEY` (`MissingAPIKeyError`).
        base_url: `https://host/api/v3`; a trailing slash is ignored.
        timeout: seconds or an `httpx.Timeout`; default 60 s (10 s to connect).
        max_retries: retries after the first attempt, on connection errors, 408, 429 and 5xx.
        transport: an httpx async transport (`httpx.MockTransport` in tests,
            `httpx.ASGITransport(app=...)` for an in-process service).
        http_client: a ready `httpx.AsyncClient`, left open by `close()` because the caller owns it.
        clock: where the client reads time and sleeps (tests pass a fake one).
        rng: source of backoff jitter, returning floats in [0, 1).
        max_response_bytes: the most of an answer read into memory (16 MB); a larger one raises
            `APIResponseTooLargeError` (result downloads stream to a file and are not counted).

    Use as an async context manager, or `await close()`.
    """

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | httpx.URL | None = None,
        timeout: float | httpx.Timeout | None = None,
        max_retries: int = 2,
        transport: httpx.AsyncBaseTransport | None = None,
        http_client: httpx.AsyncClient | None = None,
        clock: Clock | None = None,
        rng: Callable[[], float] | None = None,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
    ) -> None:
        if http_client is not None and transport is not None:
            raise ValueError("pass transport= or http_client=, not both")
        self._config = resolve_config(
            api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries, env=os.environ,
            max_response_bytes=max_response_bytes,
        )
        self._owns_http = http_client is None
        self._http = http_client or httpx.AsyncClient(
            transport=transport, timeout=self._config.timeout or DEFAULT_TIMEOUT
        )
        self._endpoints = Endpoints(self._config)
        self._clock: Clock = clock or SystemClock()
        self._rng = rng or random.random
        self.tasks = AsyncTasks(self)

    @property
    def base_url(self) -> str:
        return self._config.base_url

    @property
    def max_retries(self) -> int:
        return self._config.policy.max_retries

    def __repr__(self) -> str:
        return f"AsyncClient(base_url={self.base_url!r})"

    # ---- transport with retries ----

    async def _send(
        self, spec: RequestSpec, *, stream: bool = False, follow_redirects: bool = False,
        attempts: Attempts | None = None,
    ) -> httpx.Response:
        """Send with retries; return a 2xx response or raise the mapped error. `attempts` learns
        whether a retried attempt may have been carried out (see `Attempts`)."""
        request = spec.build(self._http, timeout_within_deadline(self._config.timeout, self._clock.now()))
        attempt = 0
        while True:
            try:
                response = await self._http.send(request, stream=True, follow_redirects=follow_redirects)
                if not (stream and response.is_success):
                    response = await self._read_capped(response)
            except httpx.TransportError as exc:
                delay = retry_delay(attempt, self._config.policy, self._rng, self._clock.time())
                if delay is None or retry_past_deadline(delay, self._clock.now()):
                    raise connection_error_for(exc) from exc
                if attempts is not None:
                    attempts.failed(error=exc)
                reason = repr(exc)
            else:
                if response.is_success:
                    return response
                delay = retry_delay(
                    attempt, self._config.policy, self._rng, self._clock.time(), response=response
                )
                if delay is None or retry_past_deadline(delay, self._clock.now()):
                    raise status_error_for(response)
                if attempts is not None:
                    attempts.failed(response=response)
                reason = f"HTTP {response.status_code}"
            attempt += 1
            log.info("%s %s: %s; retry %d in %.2f s", spec.method, loggable(request.url), reason, attempt, delay)
            await self._clock.asleep(delay)

    async def _read_capped(self, response: httpx.Response) -> httpx.Response:
        """The streamed answer read whole, unless it passes `max_response_bytes` (then refused)."""
        collector = BodyCollector(response, self._config.max_response_bytes)
        try:
            async for chunk in response.aiter_bytes():
                collector.add(chunk)
        finally:
            await response.aclose()
        return collector.response_read()

    # ---- conveniences over the endpoints ----

    async def spend(self, since: date | None = None) -> SpendReport:
        """A project's spend and budgets from a Dailies service's ledger (`/dailies/v1/spend`, beyond the
        specification): the real service answers 404 (`NotFoundError`)."""
        return parse_model(await self._send(self._endpoints.spend(since)), SpendReport)

    async def me(self) -> Identity:
        """The key's project and member name on a Dailies service (`/dailies/v1/me`, beyond the
        specification): other services answer 404 (`NotFoundError`)."""
        return parse_model(await self._send(self._endpoints.me()), Identity)

    async def service_info(self) -> ServiceInfo:
        """What a Dailies service is: the local preview renderer or a gateway, and its upstream's region
        (`/dailies/v1/service`, beyond the specification): other services answer 404 (`NotFoundError`)."""
        return parse_model(await self._send(self._endpoints.service_info()), ServiceInfo)

    async def task_request(self, task_id: str) -> TaskRequest:
        """A task's stored request, its prompt and inputs, from a Dailies service
        (`/dailies/v1/tasks/{id}/request`, beyond the specification): inline images come as small
        thumbnails, inline videos and audio as their type and size; no `callback_url`.

        Raises `NotFoundError` for a task the service does not have (or another project's), and its
        subclass `UnsupportedEndpointError` when the service has no such endpoint (the real Ark, an
        older Dailies), so a caller can tell "no such task" from "not available here".
        """
        try:
            response = await self._send(self._endpoints.task_request(task_id))
        except NotFoundError as exc:
            raise unless_task_not_found(exc) from None
        return parse_model(response, TaskRequest)

    async def charges(self, task_ids: Iterable[str]) -> dict[str, Charge]:
        """What a Dailies service's ledger holds for each of these tasks, by task id
        (`POST /dailies/v1/charges`, beyond the specification): reserved at create, then settled (what
        the task cost) or released (nothing), with amount and currency. The service's own figure: a
        gateway's task in its upstream region's currency, a task the upstream made but whose result
        could not be taken at its estimate.

        Ids the service does not have, or another project has, are left out. More than a page of ids
        (500) is asked in several requests, each counted as one read. Raises
        `UnsupportedEndpointError` when the service keeps no ledger (the real Ark, an older Dailies).
        """
        found: dict[str, Charge] = {}
        for batch in charge_batches(task_ids):
            try:
                response = await self._send(self._endpoints.charges(batch))
            except NotFoundError as exc:  # the endpoint answers no 404 of its own: a service without it
                raise UnsupportedEndpointError.of(exc) from None
            found.update((charge.task_id, charge) for charge in parse_model(response, Charges).items)
        return found

    async def wait(
        self,
        task_id: str,
        *,
        timeout: float | None = 600.0,
        poll_interval: float = 2.0,
        on_update: Callable[[TaskRecord], Any] | None = None,
    ) -> TaskRecord:
        """Poll a task until it is `succeeded`, `failed`, `expired` or `cancelled`; return its record.

        Raises `WaitTimeout` (with the last record seen) once `timeout` seconds have passed;
        `timeout=None` waits without a deadline. `on_update` is called with every record polled,
        and awaited when it returns an awaitable.
        The deadline bounds the polling and each poll: its requests are cut to the time left (at
        least a second) and not retried past it.
        """
        check_wait_args(timeout, poll_interval)
        deadline = None if timeout is None else self._clock.now() + timeout
        record: TaskRecord | None = None
        while True:
            try:
                with polling_until(deadline):
                    record = await self.tasks.get(task_id)
            except DailiesError as exc:
                # The service restarting or out of reach for a while: the task goes on there.
                if not poll_failed_for_now(exc) or (deadline is not None and self._clock.now() >= deadline):
                    raise
                log.warning("waiting for %s: %s; polling again", task_id, exc)
            else:
                if on_update is not None and inspect.isawaitable(result := on_update(record)):
                    await result
                if record.is_terminal:
                    return record
            delay = next_poll_delay(deadline, self._clock.now(), poll_interval)
            if delay is None:
                raise WaitTimeout(task_id, timeout or 0.0, record)
            await self._clock.asleep(delay)

    async def iter_tasks(
        self,
        *,
        status: FilterStatus | None = None,
        task_ids: Sequence[str] | None = None,
        model: str | None = None,
        service_tier: ServiceTier = "default",
        page_size: int = 100,
    ) -> AsyncIterator[TaskRecord]:
        """Every task matching the filters, page after page, each yielded once."""
        pager = Pager(list_query(
            page_num=1, page_size=page_size, status=status,
            task_ids=task_ids, model=model, service_tier=service_tier,
        ))
        while (query := pager.next_query()) is not None:
            page = parse_model(await self._send(self._endpoints.list(query)), ListTasksResponse)
            for record in pager.take(page):
                yield record

    async def download(
        self, url: str, path: str | os.PathLike[str], *, progress: ProgressCallback | None = None
    ) -> Path:
        """Save a result file (video or last frame) to `path`; return the path.

        Written to a temporary file beside `path` and renamed at the end, so `path` never holds a
        partial file. `progress(bytes_done, bytes_total_or_None)` is called after every chunk.
        A URL past its 24 h validity raises `PermissionDeniedError`. The API key is sent only
        when `url` is on the base URL's origin. Redirects are followed (httpx drops the key on a
        redirect to another origin).
        """
        response = await self._send(self._endpoints.download(url), stream=True, follow_redirects=True)
        total = content_total(response)
        done = 0
        try:
            with replacing(path) as partial:
                # Writes run in a worker thread, so a slow disk does not stall the event loop.
                async with await anyio.open_file(partial, "xb") as file:
                    async for chunk in response.aiter_bytes(DOWNLOAD_CHUNK_BYTES):
                        await file.write(chunk)
                        done += len(chunk)
                        if progress is not None:
                            progress(done, total)
        except httpx.TransportError as exc:  # the connection broke mid-body: not retried
            raise connection_error_for(exc) from exc
        finally:
            await response.aclose()
        return Path(path)

    # ---- lifetime ----

    async def close(self) -> None:
        """Close the HTTP connections, unless the caller passed its own `http_client`."""
        if self._owns_http:
            await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        await self.close()
