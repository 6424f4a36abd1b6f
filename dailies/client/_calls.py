"""Every call of the client, written once as a sans-I/O plan that `Client` and `AsyncClient` both run.

A plan is a generator. It yields what it needs done (`Send` this request, `Sleep` this long, `Notify`
`wait`'s caller of a record, `Save` a streamed body to a file) and is sent back what happened: the
response, or the `httpx.TransportError` a `Send` met; anything else a step raised is raised inside the
plan where it asked. It reads the clock's `now()`/`time()` (not I/O) and never sleeps itself.

Here: the retry loop (`Calls.exchange`), `wait`'s polling, paging, each endpoint's parsing and error
mapping, and the public methods themselves (`ClientBase`, `TasksBase`: each a `Method` made of its
plan, typed per client). `sync.py` and `async_.py` only carry out the steps, one blocking, one awaited.
"""

from __future__ import annotations

import inspect
import os
import random
from collections.abc import AsyncIterator, Callable, Coroutine, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import date
from functools import wraps
from pathlib import Path
from typing import Any, Concatenate, Generic, ParamSpec, Protocol, TypeVar, overload
from urllib.parse import quote

import httpx
from pydantic import BaseModel

from dailies.spec.models import (
    CallbackLog,
    CreateTaskRequest,
    CreateTaskResponse,
    Identity,
    ListTasksResponse,
    LiveSession,
    Members,
    NotificationTarget,
    NotificationTargets,
    ServiceInfo,
    ServiceTier,
    SpendReport,
    TaskRecord,
    TaskRequest,
)
from dailies.spec.prices import Charge, Charges
from dailies.spec.statuses import FilterStatus

from ._base import (
    DEFAULT_TIMEOUT,
    MAX_RESPONSE_BYTES,
    ClientConfig,
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

T = TypeVar("T")
M = TypeVar("M", bound=BaseModel)
P = ParamSpec("P")
C = TypeVar("C")
C_co = TypeVar("C_co", covariant=True)


@dataclass(frozen=True)
class Send:
    """Send `request`; answer with its response, read whole (up to `max_response_bytes`) unless it is
    a 2xx of a `stream` send, or with the `httpx.TransportError` that stopped it."""

    request: httpx.Request
    stream: bool = False
    follow_redirects: bool = False

    def reads_whole(self, response: httpx.Response) -> bool:
        return not (self.stream and response.is_success)


@dataclass(frozen=True)
class Sleep:
    """Sleep `seconds` on the client's clock; answer with None."""

    seconds: float


@dataclass(frozen=True)
class Notify:
    """Call `callback` with `record` (awaited by the async client when it returns an awaitable)."""

    callback: Callable[[TaskRecord], Any]
    record: TaskRecord


@dataclass
class Save:
    """Write the streamed `response`'s body to `path` (through `_base.replacing`, so a broken download
    leaves no partial file), calling `wrote` after each chunk; close the response either way."""

    response: httpx.Response
    path: str | os.PathLike[str]
    progress: ProgressCallback | None
    total: int | None
    done: int = 0

    def wrote(self, chunk: bytes) -> None:
        self.done += len(chunk)
        if self.progress is not None:
            self.progress(self.done, self.total)


Step = Send | Sleep | Notify | Save
# What a plan is sent back: a Send's response or transport error, None after the other steps.
Outcome = httpx.Response | httpx.TransportError | None
Plan = Generator[Step, Outcome, T]


class Runner(Generic[T]):
    """Steps a plan for a driver: the driver carries out `step` and gives back what it gave (a response,
    None, or the exception it raised), until `step` is None and `result` holds the plan's value."""

    result: T

    def __init__(self, plan: Plan[T]) -> None:
        self._plan = plan
        self.step: Step | None = None
        self.answer(None)

    def answer(self, outcome: httpx.Response | Exception | None) -> None:
        try:
            self.step = self._next(outcome)
        except StopIteration as stop:
            self.step = None
            self.result = stop.value

    def _next(self, outcome: httpx.Response | Exception | None) -> Step:
        if isinstance(outcome, httpx.TransportError) and isinstance(self.step, Send):
            return self._plan.send(outcome)  # no response: the plan decides whether to retry
        if isinstance(outcome, Exception):
            return self._plan.throw(outcome)
        return self._plan.send(outcome)


class Calls:
    """The client's own calls (and `exchange`, the retry loop under every call), as plans over one
    configuration, clock and jitter source. `tasks` holds the task endpoints' plans."""

    def __init__(
        self, config: ClientConfig, http: httpx.Client | httpx.AsyncClient, clock: Clock, rng: Callable[[], float]
    ) -> None:
        self._config = config
        self._http = http  # only to build requests (its headers, cookies, base settings): no I/O here
        self._clock = clock
        self._rng = rng
        self.endpoints = Endpoints(config)
        self.tasks = TaskCalls(self)

    def exchange(
        self, spec: RequestSpec, *, stream: bool = False, follow_redirects: bool = False,
        deadline: float | None = None, attempts: Attempts | None = None,
    ) -> Plan[httpx.Response]:
        """Send with retries; return a 2xx response or raise the mapped error.

        `deadline` is a `wait`'s (on the clock's `now()`): each attempt's timeout is cut to the time
        left and no retry starts past it. `attempts` learns whether a retried attempt may have been
        carried out (see `Attempts`). The request is built once and resent as is.
        """
        timeout = timeout_within_deadline(self._config.timeout, deadline, self._clock.now())
        send = Send(spec.build(self._http, timeout), stream, follow_redirects)
        response: httpx.Response | None
        error: httpx.TransportError | None
        attempt = 0
        while True:
            outcome = yield send
            if outcome is None:
                raise TypeError("a Send is answered with a response or a transport error, not None")
            if isinstance(outcome, httpx.Response):
                if outcome.is_success:
                    return outcome
                response, error, reason = outcome, None, f"HTTP {outcome.status_code}"
            else:
                response, error, reason = None, outcome, repr(outcome)
            delay = retry_delay(attempt, self._config.policy, self._rng, self._clock.time(), response=response)
            if delay is None or retry_past_deadline(delay, deadline, self._clock.now()):
                if isinstance(outcome, httpx.Response):
                    raise status_error_for(outcome)
                raise connection_error_for(outcome) from outcome
            if attempts is not None:
                attempts.failed(error=error, response=response)
            attempt += 1
            log.info("%s %s: %s; retry %d in %.2f s", spec.method, loggable(send.request.url), reason, attempt, delay)
            yield Sleep(delay)

    def call(self, spec: RequestSpec, model: type[M], *, deadline: float | None = None) -> Plan[M]:
        """`exchange`, then the 2xx body parsed as `model`."""
        return parse_model((yield from self.exchange(spec, deadline=deadline)), model)

    # ---- the client's own methods; their docstrings are the public methods' ----

    def spend(self, since: date | None = None) -> Plan[SpendReport]:
        """A project's spend and budgets from a Dailies service's ledger (`/dailies/v1/spend`, beyond the
        specification): the real service answers 404 (`NotFoundError`)."""
        return (yield from self.call(self.endpoints.spend(since), SpendReport))

    def me(self) -> Plan[Identity]:
        """The key's project and member name on a Dailies service (`/dailies/v1/me`, beyond the
        specification): other services answer 404 (`NotFoundError`)."""
        return (yield from self.call(self.endpoints.me(), Identity))

    def members(self) -> Plan[Members]:
        """The member names of the key's project on a Dailies service (`/dailies/v1/members`, beyond the
        specification), for `@name` in comments. Raises `UnsupportedEndpointError` on a service without
        it (the real Ark, an older Dailies)."""
        try:
            response = yield from self.exchange(self.endpoints.members())
        except NotFoundError as exc:  # the endpoint answers no 404 of its own: a service without it
            raise UnsupportedEndpointError.of(exc) from None
        return parse_model(response, Members)

    def notification_targets(self) -> Plan[NotificationTargets]:
        """The project's notification targets on a Dailies service (`/dailies/v1/notifications/targets`,
        beyond the specification). Raises `UnsupportedEndpointError` on a service without them."""
        return parse_model((yield from self._own_call(self.endpoints.notification_targets())), NotificationTargets)

    def add_notification_target(self, kind: str, address: str, events: Sequence[str],
                                owner: str | None = None) -> Plan[NotificationTarget]:
        """Add a target: `kind` webhook, slack, mattermost or email; `owner` a person for their own
        target (a member's key: only its member), None for the project's. A bad field is a `BadRequestError`."""
        body: dict[str, object] = {"kind": kind, "address": address, "events": list(events)}
        if owner:
            body["owner"] = owner
        return parse_model((yield from self._own_call(self.endpoints.add_notification_target(body))),
                           NotificationTarget)

    def remove_notification_target(self, target_id: str) -> Plan[None]:
        """Remove a target and what still waits for it; `NotFoundError` for one the project does not have."""
        yield from self.exchange(self.endpoints.remove_notification_target(target_id))

    def notify(self, happening: dict[str, object]) -> Plan[int]:
        """Tell a Dailies service of a comment or a review status (`kind`, `task_id`, `text`, `shot`, `maker`,
        `reply_to`, `status`, `link`): queued for each target that takes it; how many did.
        Raises `UnsupportedEndpointError` on a service without notifications (the real Ark)."""
        return _reached((yield from self._own_call(self.endpoints.notify(happening))))

    def guest_grant(self, task_ids: Sequence[str], expires_at: int) -> Plan[str]:
        """A grant for a share's page to tell of its guests' comments and statuses on `task_ids` until
        `expires_at` (unix seconds): kept with the share, used by `notify_as_guest`. Raises
        `UnsupportedEndpointError` on a service without notifications (the real Ark)."""
        body: dict[str, object] = {"task_ids": list(task_ids), "expires_at": int(expires_at)}
        response = yield from self._own_call(self.endpoints.guest_grant(body))
        return str(response.json()["grant"])

    def notify_as_guest(self, happening: dict[str, object]) -> Plan[int]:
        """As `notify`, from a client made with a guest grant as its key: a guest's comment or status on
        one of the grant's versions, signed as a guest (`actor`: the name they gave)."""
        return _reached((yield from self._own_call(self.endpoints.notify_as_guest(happening))))

    def live_sessions(self) -> Plan[list[LiveSession]]:
        """The project's open live review sessions (`/dailies/v1/live`, beyond the specification)."""
        response = yield from self._own_call(self.endpoints.live())
        items = response.json().get("items") if response.content else None
        return [LiveSession.model_validate(i) for i in items or []]

    def start_live(self, versions: Sequence[tuple[str, str]], title: str = "",
                   presenter: str | None = None) -> Plan[LiveSession]:
        """Start a live session on `versions` ((task id, label) pairs), presented by the key's member (or
        `presenter`, for a key without a member name); the answer holds its control and follow tokens."""
        listed = [{"task_id": task_id, "label": label} for task_id, label in versions]
        body: dict[str, object] = {"title": title, "versions": listed}
        if presenter:
            body["presenter"] = presenter
        return parse_model((yield from self._own_call(self.endpoints.live("", "POST", body))), LiveSession)

    def live_session(self, session_id: str) -> Plan[LiveSession]:
        """A live session of the key's project, with its versions' video URLs and its state."""
        path = f"/{quote(session_id, safe='')}"
        return parse_model((yield from self._own_call(self.endpoints.live(path))), LiveSession)

    def live_control(self, session_id: str, presenter: str | None = None) -> Plan[str]:
        """A new control token for the session's presenter (this key's member, or `presenter`)."""
        path = f"/{quote(session_id, safe='')}/control"
        params = {"presenter": presenter} if presenter else None
        response = yield from self._own_call(self.endpoints.live(path, "POST", {}, params))
        return str(response.json()["control_token"])

    def hand_over_live(self, session_id: str, to: str, presenter: str | None = None) -> Plan[LiveSession]:
        """Hand the session to `to` (only its presenter may)."""
        path = f"/{quote(session_id, safe='')}/handover"
        params = {"presenter": presenter} if presenter else None
        return parse_model((yield from self._own_call(self.endpoints.live(path, "POST", {"to": to}, params))),
                           LiveSession)

    def end_live(self, session_id: str) -> Plan[None]:
        yield from self._own_call(self.endpoints.live(f"/{quote(session_id, safe='')}/end", "POST", {}))

    def _own_call(self, spec: RequestSpec) -> Plan[httpx.Response]:
        """An exchange with an endpoint of our own whose route answers no 404 itself: a 404 is a service
        without it."""
        try:
            return (yield from self.exchange(spec))
        except NotFoundError as exc:
            raise UnsupportedEndpointError.of(exc) from None

    def service_info(self) -> Plan[ServiceInfo]:
        """What a Dailies service is: the local preview renderer or a gateway, and its upstream's region
        (`/dailies/v1/service`, beyond the specification): other services answer 404 (`NotFoundError`)."""
        return (yield from self.call(self.endpoints.service_info(), ServiceInfo))

    def task_request(self, task_id: str) -> Plan[TaskRequest]:
        """A task's stored request, its prompt and inputs, from a Dailies service
        (`/dailies/v1/tasks/{id}/request`, beyond the specification): inline images come as small
        thumbnails, inline videos and audio as their type and size; no `callback_url`.

        Raises `NotFoundError` for a task the service does not have (or another project's), and its
        subclass `UnsupportedEndpointError` when the service has no such endpoint (the real Ark, an
        older Dailies), so a caller can tell "no such task" from "not available here".
        """
        try:
            response = yield from self.exchange(self.endpoints.task_request(task_id))
        except NotFoundError as exc:
            raise unless_task_not_found(exc) from None
        return parse_model(response, TaskRequest)

    def charges(self, task_ids: Iterable[str]) -> Plan[dict[str, Charge]]:
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
                response = yield from self.exchange(self.endpoints.charges(batch))
            except NotFoundError as exc:  # the endpoint answers no 404 of its own: a service without it
                raise UnsupportedEndpointError.of(exc) from None
            found.update((charge.task_id, charge) for charge in parse_model(response, Charges).items)
        return found

    def wait(
        self,
        task_id: str,
        *,
        timeout: float | None = 600.0,
        poll_interval: float = 2.0,
        on_update: Callable[[TaskRecord], Any] | None = None,
    ) -> Plan[TaskRecord]:
        """Poll a task until it is `succeeded`, `failed`, `expired` or `cancelled`; return its record.

        Raises `WaitTimeout` (with the last record seen) once `timeout` seconds have passed;
        `timeout=None` waits without a deadline. `on_update` is called with every record polled
        (by `AsyncClient`, and awaited when it returns an awaitable).
        The deadline bounds the polling and each poll: its requests are cut to the time left (at
        least a second) and not retried past it.
        """
        check_wait_args(timeout, poll_interval)
        deadline = None if timeout is None else self._clock.now() + timeout
        record: TaskRecord | None = None
        while True:
            try:
                record = yield from self.call(self.endpoints.get(task_id), TaskRecord, deadline=deadline)
            except DailiesError as exc:
                # The service restarting or out of reach for a while: the task goes on there.
                if not poll_failed_for_now(exc) or (deadline is not None and self._clock.now() >= deadline):
                    raise
                log.warning("waiting for %s: %s; polling again", task_id, exc)
            else:
                if on_update is not None:
                    yield Notify(on_update, record)
                if record.is_terminal:
                    return record
            delay = next_poll_delay(deadline, self._clock.now(), poll_interval)
            if delay is None:
                raise WaitTimeout(task_id, timeout or 0.0, record)
            yield Sleep(delay)

    def iter_tasks(
        self,
        *,
        status: FilterStatus | None = None,
        task_ids: Sequence[str] | None = None,
        model: str | None = None,
        service_tier: ServiceTier = "default",
        page_size: int = 100,
    ) -> Iterator[Plan[list[TaskRecord]]]:
        """Every task matching the filters, page after page, each yielded once."""
        pager = Pager(list_query(
            page_num=1, page_size=page_size, status=status,
            task_ids=task_ids, model=model, service_tier=service_tier,
        ))
        while (query := pager.next_query()) is not None:
            yield self._page(pager, self.endpoints.list(query))

    def _page(self, pager: Pager, spec: RequestSpec) -> Plan[list[TaskRecord]]:
        return pager.take((yield from self.call(spec, ListTasksResponse)))

    def download(
        self, url: str, path: str | os.PathLike[str], *, progress: ProgressCallback | None = None
    ) -> Plan[Path]:
        """Save a result file (video or last frame) to `path`; return the path.

        Written to a temporary file beside `path` and renamed at the end, so `path` never holds a
        partial file. `progress(bytes_done, bytes_total_or_None)` is called after every chunk.
        A URL past its 24 h validity raises `PermissionDeniedError`. The API key is sent only
        when `url` is on the base URL's origin. Redirects are followed (httpx drops the key on a
        redirect to another origin).
        """
        response = yield from self.exchange(self.endpoints.download(url), stream=True, follow_redirects=True)
        try:
            yield Save(response, path, progress, content_total(response))
        except httpx.TransportError as exc:  # the connection broke mid-body: not retried
            raise connection_error_for(exc) from exc
        return Path(path)


def _reached(response: httpx.Response) -> int:
    """How many notification targets an event reached, as the service answers it."""
    reached = response.json().get("reached") if response.content else None
    return reached if isinstance(reached, int) else 0


class TaskCalls:
    """The task endpoints' plans (`client.tasks`); their docstrings are the public methods'."""

    def __init__(self, calls: Calls) -> None:
        self._calls = calls

    def create(
        self,
        request: CreateTaskRequest | Mapping[str, Any],
        *,
        idempotency_key: str | None = None,
        check_rules: bool = True,
    ) -> Plan[CreateTaskResponse]:
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
        return (yield from self._calls.call(self._calls.endpoints.create(body, key), CreateTaskResponse))

    def get(self, task_id: str) -> Plan[TaskRecord]:
        """One task's record."""
        return (yield from self._calls.call(self._calls.endpoints.get(task_id), TaskRecord))

    def delete(self, task_id: str) -> Plan[None]:
        """Cancel a queued task, or delete the record of a finished one (409 while running). Retried
        after an attempt whose answer was lost, the earlier attempt's work ("already cancelled", "no
        such task") counts as done."""
        attempts = Attempts()
        try:
            yield from self._calls.exchange(self._calls.endpoints.delete(task_id), attempts=attempts)
        except APIStatusError as exc:
            if not done_by_earlier_attempt(attempts, exc.status_code, exc.code):
                raise

    def cancel_only(self, task_id: str) -> Plan[None]:
        """Cancel a task that has not started, and never delete one: a Dailies service's own endpoint
        (`/dailies/v1/tasks/{id}/cancel`). `delete` (the spec's DELETE) deletes a finished task for
        good, so a cancel sent as the task ends deletes its result; this one answers 409
        (`ConflictError`, code `InvalidAction.TaskFinished`) instead. A task cancelled already counts
        as done. Raises `UnsupportedEndpointError` on a service without it (the real Ark)."""
        try:
            yield from self._calls.exchange(self._calls.endpoints.cancel_only(task_id))
        except NotFoundError as exc:
            raise unless_task_not_found(exc) from None

    def callbacks(self, task_id: str) -> Plan[CallbackLog]:
        """The task's callback delivery log, an endpoint of the local service beyond the specification:
        the real service answers 404 (`NotFoundError`), as it does for a task it does not have."""
        return (yield from self._calls.call(self._calls.endpoints.callbacks(task_id), CallbackLog))

    # Last in the class: below it, `list` would name this method, not the builtin.
    def list(
        self,
        *,
        page_num: int = 1,
        page_size: int = 20,
        status: FilterStatus | None = None,
        task_ids: Sequence[str] | None = None,
        model: str | None = None,
        service_tier: ServiceTier = "default",
    ) -> Plan[ListTasksResponse]:
        """One page of the tasks of the last 7 days. See the client's `iter_tasks` for all of them."""
        query = list_query(
            page_num=page_num, page_size=page_size, status=status,
            task_ids=task_ids, model=model, service_tier=service_tier,
        )
        return (yield from self._calls.call(self._calls.endpoints.list(query), ListTasksResponse))


# ---- the public methods: each plan above, run by the client that owns it ----


class Blocking(Protocol[C_co]):
    """An owner of methods whose plans run to their end before the call returns (`Client`, `Tasks`)."""

    @property
    def _calls(self) -> C_co: ...

    def _run(self, plan: Plan[T]) -> T: ...


class Awaiting(Protocol[C_co]):
    """An owner of methods whose plans run when the call is awaited (`AsyncClient`, `AsyncTasks`)."""

    @property
    def _calls(self) -> C_co: ...

    def _run(self, plan: Plan[T]) -> Coroutine[Any, Any, T]: ...


class _Public:
    """What `Method` and `Pages` share: the plan's docstring and parameters shown as the public method's,
    and a call on the class (`Tasks.get(tasks, task_id)`) working as it would for a function there."""

    def __init__(self, plan: Callable[..., Any], returns: str, awaited_returns: str) -> None:
        self._plan = plan
        self.__doc__ = plan.__doc__
        signature = inspect.signature(plan)
        self.__signature__ = signature.replace(return_annotation=returns)
        unbound = signature.replace(parameters=list(signature.parameters.values())[1:])
        self._signatures = {False: unbound.replace(return_annotation=returns),
                            True: unbound.replace(return_annotation=awaited_returns)}

    def _bind(self, instance: Any) -> Callable[..., Any]:
        raise NotImplementedError

    def _dressed(self, method: Callable[..., Any], instance: Any, awaiting: bool) -> Callable[..., Any]:
        """`method` named and documented as its plan, with its public signature (not the plan's, which
        a `__wrapped__` would show)."""
        wraps(self._plan, assigned=("__module__", "__name__", "__doc__"), updated=())(method)
        method.__qualname__ = f"{type(instance).__qualname__}.{self._plan.__name__}"
        method.__signature__ = self._signatures[awaiting]  # type: ignore[attr-defined]
        return method

    def __call__(self, instance: Any, /, *args: Any, **kwargs: Any) -> Any:
        return self._bind(instance)(*args, **kwargs)


def _value_of(plan: Callable[..., Any]) -> str:
    # `Plan[X]` (a string: annotations are postponed here) -> `X`, what the public method returns.
    text = str(inspect.signature(plan).return_annotation)
    return text.removeprefix("Plan[").removesuffix("]") if text.startswith("Plan[") else text


class Method(_Public, Generic[C, P, T]):
    """A public method made of a plan: on a blocking owner it returns the plan's value, on an awaiting
    one it is a coroutine function."""

    def __init__(self, plan: Callable[Concatenate[C, P], Plan[T]]) -> None:
        super().__init__(plan, _value_of(plan), _value_of(plan))

    @overload
    def __get__(self, instance: None, owner: type[Any]) -> Method[C, P, T]: ...
    @overload
    def __get__(self, instance: Blocking[C], owner: type[Any]) -> Callable[P, T]: ...
    @overload
    def __get__(self, instance: Awaiting[C], owner: type[Any]) -> Callable[P, Coroutine[Any, Any, T]]: ...

    def __get__(self, instance: Any, owner: type[Any]) -> Any:
        return self if instance is None else self._bind(instance)

    def _bind(self, instance: Any) -> Callable[..., Any]:
        plan, calls, run = self._plan, instance._calls, instance._run
        if inspect.iscoroutinefunction(run):
            async def awaited(*args: Any, **kwargs: Any) -> Any:
                return await run(plan(calls, *args, **kwargs))
            return self._dressed(awaited, instance, awaiting=True)

        def method(*args: Any, **kwargs: Any) -> Any:
            return run(plan(calls, *args, **kwargs))
        return self._dressed(method, instance, awaiting=False)


class Pages(_Public, Generic[C, P]):
    """A public method made of a plan of pages: an iterator over their records (`async for` on an
    awaiting owner), each page fetched when the records before it are used."""

    def __init__(self, pages: Callable[Concatenate[C, P], Iterator[Plan[list[TaskRecord]]]]) -> None:
        super().__init__(pages, "Iterator[TaskRecord]", "AsyncIterator[TaskRecord]")

    @overload
    def __get__(self, instance: None, owner: type[Any]) -> Pages[C, P]: ...
    @overload
    def __get__(self, instance: Blocking[C], owner: type[Any]) -> Callable[P, Iterator[TaskRecord]]: ...
    @overload
    def __get__(self, instance: Awaiting[C], owner: type[Any]) -> Callable[P, AsyncIterator[TaskRecord]]: ...

    def __get__(self, instance: Any, owner: type[Any]) -> Any:
        return self if instance is None else self._bind(instance)

    def _bind(self, instance: Any) -> Callable[..., Any]:
        pages, calls, run = self._plan, instance._calls, instance._run
        if inspect.iscoroutinefunction(run):
            async def records(*args: Any, **kwargs: Any) -> Any:
                for page in pages(calls, *args, **kwargs):
                    for record in await run(page):
                        yield record
            return self._dressed(records, instance, awaiting=True)

        def blocking_records(*args: Any, **kwargs: Any) -> Any:
            for page in pages(calls, *args, **kwargs):
                yield from run(page)
        return self._dressed(blocking_records, instance, awaiting=False)


class TasksBase:
    """The task endpoints, as `client.tasks`: each a plan of `TaskCalls` that the client runs."""

    def __init__(self, client: ClientBase[Any, Any, Any]) -> None:
        self._client = client  # whose `_run` carries out the plans
        self._calls = client._calls.tasks

    create = Method(TaskCalls.create)
    get = Method(TaskCalls.get)
    delete = Method(TaskCalls.delete)
    cancel_only = Method(TaskCalls.cancel_only)
    callbacks = Method(TaskCalls.callbacks)
    cancel = delete
    list = Method(TaskCalls.list)


HttpT = TypeVar("HttpT", bound=httpx.Client | httpx.AsyncClient)
TransportT = TypeVar("TransportT", bound=httpx.BaseTransport | httpx.AsyncBaseTransport)
TasksT = TypeVar("TasksT")


class ClientBase(Generic[HttpT, TransportT, TasksT]):
    """What `Client` and `AsyncClient` are made of alike: settings, an HTTP client, a clock, the plans."""

    tasks: TasksT

    def __init__(
        self,
        *,
        api_key: str | None = None,
        base_url: str | httpx.URL | None = None,
        timeout: float | httpx.Timeout | None = None,
        max_retries: int = 2,
        transport: TransportT | None = None,
        http_client: HttpT | None = None,
        clock: Clock | None = None,
        rng: Callable[[], float] | None = None,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
    ) -> None:
        """Settings come from the arguments, else from `ARK_API_KEY` / `ARK_BASE_URL`, else the base URL
        defaults to the local service, `http://127.0.0.1:8000/api/v3`.

        Args:
            api_key: bearer token; required here or in `ARK_API_KEY` (`MissingAPIKeyError`).
            base_url: `https://host/api/v3`; a trailing slash is ignored.
            timeout: seconds or an `httpx.Timeout`; default 60 s (10 s to connect).
            max_retries: retries after the first attempt, on connection errors, 408, 429 and 5xx.
            transport: an httpx transport, blocking for `Client`, async for `AsyncClient`
                (`httpx.MockTransport` in tests; `httpx.ASGITransport(app=...)` for an in-process
                service, async only).
            http_client: a ready `httpx.Client` (`httpx.AsyncClient`), left open by `close()` because
                the caller owns it.
            clock: where the client reads time and sleeps (tests pass a fake one).
            rng: source of backoff jitter, returning floats in [0, 1).
            max_response_bytes: the most of an answer read into memory (16 MB); a larger one raises
                `APIResponseTooLargeError` (result downloads stream to a file and are not counted).
        """
        if http_client is not None and transport is not None:
            raise ValueError("pass transport= or http_client=, not both")
        self._config = resolve_config(
            api_key=api_key, base_url=base_url, timeout=timeout, max_retries=max_retries, env=os.environ,
            max_response_bytes=max_response_bytes,
        )
        self._owns_http = http_client is None
        self._http: HttpT = http_client or self._new_http(transport, self._config.timeout or DEFAULT_TIMEOUT)
        self._clock: Clock = clock or SystemClock()
        self._rng = rng or random.random
        self._calls = Calls(self._config, self._http, self._clock, self._rng)
        self.tasks = self._new_tasks()

    def _new_http(self, transport: TransportT | None, timeout: httpx.Timeout) -> HttpT:
        raise NotImplementedError

    def _new_tasks(self) -> TasksT:
        raise NotImplementedError

    @property
    def base_url(self) -> str:
        return self._config.base_url

    @property
    def max_retries(self) -> int:
        return self._config.policy.max_retries

    def __repr__(self) -> str:
        return f"{type(self).__name__}(base_url={self.base_url!r})"

    spend = Method(Calls.spend)
    me = Method(Calls.me)
    members = Method(Calls.members)
    notification_targets = Method(Calls.notification_targets)
    add_notification_target = Method(Calls.add_notification_target)
    remove_notification_target = Method(Calls.remove_notification_target)
    notify = Method(Calls.notify)
    guest_grant = Method(Calls.guest_grant)
    notify_as_guest = Method(Calls.notify_as_guest)
    live_sessions = Method(Calls.live_sessions)
    start_live = Method(Calls.start_live)
    live_session = Method(Calls.live_session)
    live_control = Method(Calls.live_control)
    hand_over_live = Method(Calls.hand_over_live)
    end_live = Method(Calls.end_live)
    service_info = Method(Calls.service_info)
    task_request = Method(Calls.task_request)
    charges = Method(Calls.charges)
    wait = Method(Calls.wait)
    iter_tasks = Pages(Calls.iter_tasks)
    download = Method(Calls.download)
