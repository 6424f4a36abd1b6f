"""What `Client` and `AsyncClient` share: configuration, request building, response parsing,
paging, polling and download bookkeeping. Nothing here performs I/O on the network or sleeps,
so the sync and async clients are thin shells that only send, await and sleep.
"""

from __future__ import annotations

import logging
import os
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import quote, urlencode

import httpx
from pydantic import BaseModel, ValidationError

from dailies import __version__  # written once, there (the package's metadata reads it too)
from dailies.spec import limits
from dailies.spec.catalog import find_model
from dailies.spec.models import (
    CreateTaskRequest,
    ListTasksQuery,
    ListTasksResponse,
    ServiceTier,
    TaskRecord,
)
from dailies.spec.statuses import FilterStatus
from dailies.spec.validation import check_create_body, drop_nulls

from ._retry import RetryPolicy
from .errors import (
    APIResponseTooLargeError,
    APIResponseValidationError,
    MissingAPIKeyError,
    NotFoundError,
    RequestRuleError,
    RequestValidationError,
    UnsupportedEndpointError,
)

log = logging.getLogger("dailies.client")

API_KEY_ENV = "ARK_API_KEY"
BASE_URL_ENV = "ARK_BASE_URL"
# The local service that `dailies up` starts, so a fresh checkout needs only a key.
DEFAULT_BASE_URL = "http://127.0.0.1:8000/api/v3"
# Generous reads (a create may carry a 64 MB body), short connects (a dead host fails fast).
DEFAULT_TIMEOUT = httpx.Timeout(60.0, connect=10.0)
IDEMPOTENCY_HEADER = "Idempotency-Key"
_TASKS_PATH = "/contents/generations/tasks"
# Small enough that a progress bar moves smoothly, large enough that writes stay cheap.
DOWNLOAD_CHUNK_BYTES = 256 * 1024
# The most of an answer read into memory (decoded, so a gzip bomb counts at its full size): the
# service's largest, a page of 500 records, is under a megabyte; a dashboard's server reads answers
# of services its visitors name.
MAX_RESPONSE_BYTES = 16 * 1024 * 1024

ProgressCallback = Callable[[int, int | None], Any]
M = TypeVar("M", bound=BaseModel)


def _user_agent() -> str:
    return f"dailies-client/{__version__}"


USER_AGENT = _user_agent()


@dataclass(frozen=True)
class ClientConfig:
    """The resolved settings of one client. `timeout` None means "the HTTP client's own"."""

    api_key: str = field(repr=False)
    base_url: str
    timeout: httpx.Timeout | None
    policy: RetryPolicy
    max_response_bytes: int = MAX_RESPONSE_BYTES


def resolve_config(
    *,
    api_key: str | None,
    base_url: str | httpx.URL | None,
    timeout: float | httpx.Timeout | None,
    max_retries: int,
    env: Mapping[str, str],
    max_response_bytes: int = MAX_RESPONSE_BYTES,
) -> ClientConfig:
    """Constructor arguments first, then `ARK_API_KEY` / `ARK_BASE_URL`, then the local default."""
    env_url, env_key = environment_defaults(env)
    key = api_key if api_key is not None else env_key
    if not key:
        raise MissingAPIKeyError(f"no API key: pass api_key=... or set the {API_KEY_ENV} variable")
    url = str(base_url) if base_url is not None else env_url
    if not isinstance(timeout, httpx.Timeout | None):
        timeout = httpx.Timeout(timeout)
    if max_response_bytes < 1:
        raise ValueError("max_response_bytes must be at least 1")
    return ClientConfig(
        api_key=key,
        base_url=normalize_base_url(url),
        timeout=timeout,
        policy=RetryPolicy(max_retries=max_retries),
        max_response_bytes=max_response_bytes,
    )


def environment_defaults(env: Mapping[str, str]) -> tuple[str, str]:
    """(base URL, API key) a client takes when its constructor is given neither: `ARK_BASE_URL`
    (else the local service) and `ARK_API_KEY` (else "", no key). The dashboard reads its defaults
    here too, so both agree on what the environment means."""
    return env.get(BASE_URL_ENV) or DEFAULT_BASE_URL, env.get(API_KEY_ENV, "")


def base_url_problem(url: str) -> str | None:
    """Why the client refuses `url` as its base URL, or None when it takes it.

    The one rule for a base URL, used by the client and by whatever lets a person type one (the
    dashboard's Settings), so nothing saves an address the client would then refuse: an http(s) URL
    with a host and without a query or fragment (paths are appended to it).
    """
    try:
        parsed = httpx.URL(url.strip())
    except httpx.InvalidURL as exc:
        return f"base_url is not a URL: {url!r} ({exc})"
    if parsed.scheme not in ("http", "https") or not parsed.host:
        return f"base_url must be an http(s) URL such as {DEFAULT_BASE_URL!r}, got {url!r}"
    if parsed.port is not None and not 0 < parsed.port < 65536:
        return f"base_url has no valid port (1 to 65535), got {url!r}"
    if parsed.query or parsed.fragment or url.strip().endswith(("?", "#")):
        return f"base_url must not carry a query or fragment, got {url!r}"
    return None


def normalize_base_url(url: str) -> str:
    """The base URL without a trailing slash, so paths are appended the same way either way.

    It must include the version prefix, as the real service's does (`https://host/api/v3`).
    Raises ValueError with `base_url_problem`'s message when the URL is refused.
    """
    problem = base_url_problem(url)
    if problem is not None:
        raise ValueError(problem)
    return str(httpx.URL(url.strip())).rstrip("/")


def new_idempotency_key() -> str:
    """A fresh key for one logical create; every retry of that create sends the same one."""
    return str(uuid.uuid4())


@dataclass(frozen=True)
class RequestSpec:
    """One HTTP request, described. Built into an `httpx.Request` once and resent as is on retry."""

    method: str
    url: str
    headers: Mapping[str, str]
    params: Sequence[tuple[str, str | int]] | None = None
    json: Any = None

    def build(self, http: httpx.Client | httpx.AsyncClient, timeout: httpx.Timeout | None) -> httpx.Request:
        return http.build_request(
            self.method,
            self.url,
            headers=dict(self.headers),
            params=list(self.params) if self.params is not None else None,
            json=self.json,
            timeout=timeout if timeout is not None else httpx.USE_CLIENT_DEFAULT,
        )


API_PREFIX = "/api/v3"  # the specification's base path; Dailies' own API lives beside it


class Endpoints:
    """The API's requests, as `RequestSpec`s for one configuration."""

    def __init__(self, config: ClientConfig) -> None:
        self._config = config
        self._origin = _origin(httpx.URL(config.base_url))

    def _headers(self, *, auth: bool = True) -> dict[str, str]:
        headers = {"Accept": "application/json", "User-Agent": USER_AGENT}
        if auth:
            headers["Authorization"] = f"Bearer {self._config.api_key}"
        return headers

    def _task_url(self, task_id: str) -> str:
        if not isinstance(task_id, str) or not task_id:
            raise ValueError(f"task_id must be a non-empty string, got {task_id!r}")
        # Quoted whole, so an id can never reach another path (".." or "/" in it).
        return f"{self._config.base_url}{_TASKS_PATH}/{quote(task_id, safe='')}"

    def create(self, request: CreateTaskRequest, idempotency_key: str) -> RequestSpec:
        headers = self._headers() | {IDEMPOTENCY_HEADER: idempotency_key}
        return RequestSpec("POST", self._config.base_url + _TASKS_PATH, headers, json=request.to_json_dict())

    def get(self, task_id: str) -> RequestSpec:
        return RequestSpec("GET", self._task_url(task_id), self._headers())

    def list(self, query: ListTasksQuery) -> RequestSpec:
        url = self._config.base_url + _TASKS_PATH
        return RequestSpec("GET", url, self._headers(), params=query.to_params())

    def delete(self, task_id: str) -> RequestSpec:
        return RequestSpec("DELETE", self._task_url(task_id), self._headers(), json={})

    def callbacks(self, task_id: str) -> RequestSpec:
        self._task_url(task_id)  # the same check of the id
        return RequestSpec("GET", self._own(f"tasks/{quote(task_id, safe='')}/callbacks"), self._headers())

    def _own(self, path: str) -> str:
        """A URL of a Dailies service's own API (`/dailies/v1/...`), beside the `/api/v3` base."""
        return f"{self._config.base_url.removesuffix('/').removesuffix(API_PREFIX)}/dailies/v1/{path}"

    def spend(self, since: date | None) -> RequestSpec:
        params = [("since", since.isoformat())] if since else None
        return RequestSpec("GET", self._own("spend"), self._headers(), params=params)

    def service_info(self) -> RequestSpec:
        return RequestSpec("GET", self._own("service"), self._headers())

    def me(self) -> RequestSpec:
        return RequestSpec("GET", self._own("me"), self._headers())

    def members(self) -> RequestSpec:
        return RequestSpec("GET", self._own("members"), self._headers())

    def cancel_only(self, task_id: str) -> RequestSpec:
        self._task_url(task_id)  # the same check of the id
        return RequestSpec("POST", self._own(f"tasks/{quote(task_id, safe='')}/cancel"), self._headers(), json={})

    def task_request(self, task_id: str) -> RequestSpec:
        self._task_url(task_id)  # the same check of the id
        return RequestSpec("GET", self._own(f"tasks/{quote(task_id, safe='')}/request"), self._headers())

    def notification_targets(self) -> RequestSpec:
        return RequestSpec("GET", self._own("notifications/targets"), self._headers())

    def add_notification_target(self, body: dict[str, object]) -> RequestSpec:
        return RequestSpec("POST", self._own("notifications/targets"), self._headers(), json=body)

    def remove_notification_target(self, target_id: str) -> RequestSpec:
        return RequestSpec("DELETE", self._own(f"notifications/targets/{quote(target_id, safe='')}"), self._headers())

    def notify(self, body: dict[str, object]) -> RequestSpec:
        return RequestSpec("POST", self._own("notifications/events"), self._headers(), json=body)

    def guest_grant(self, body: dict[str, object]) -> RequestSpec:
        return RequestSpec("POST", self._own("notifications/guest-grants"), self._headers(), json=body)

    def notify_as_guest(self, body: dict[str, object]) -> RequestSpec:
        return RequestSpec("POST", self._own("notifications/guest-events"), self._headers(), json=body)

    def live(self, path: str = "", method: str = "GET", body: dict[str, object] | None = None,
             params: dict[str, str] | None = None) -> RequestSpec:
        url = self._own("live") + path
        if params:
            url += "?" + urlencode(params)
        return RequestSpec(method, url, self._headers(), json=body)

    def charges(self, task_ids: Sequence[str]) -> RequestSpec:
        return RequestSpec("POST", self._own("charges"), self._headers(), json={"task_ids": list(task_ids)})

    def download(self, url: str) -> RequestSpec:
        """A GET of a result file. Relative URLs are taken from the base URL's host. The key is sent
        only to the base URL's own origin: result URLs are signed, and may point at a CDN."""
        target = httpx.URL(self._config.base_url).join(url)
        if target.scheme not in ("http", "https"):
            raise ValueError(f"can only download http(s) URLs, got {url!r}")
        headers = self._headers(auth=_origin(target) == self._origin)
        headers["Accept"] = "*/*"
        return RequestSpec("GET", str(target), headers)


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    default_port = {"http": 80, "https": 443}.get(url.scheme)
    return (url.scheme, url.host, url.port or default_port)


def coerce_create_request(request: CreateTaskRequest | Mapping[str, Any]) -> CreateTaskRequest:
    """A create body as the request model, validated by the same model the server uses."""
    if isinstance(request, CreateTaskRequest):
        return request
    if not isinstance(request, Mapping):
        raise TypeError(f"expected CreateTaskRequest or a mapping, got {type(request).__name__}")
    try:
        # As the service reads a body: a null means "not given" (the official SDK sends every field).
        return CreateTaskRequest.model_validate(drop_nulls(dict(request)))
    except ValidationError as exc:
        raise RequestValidationError.from_pydantic("create request", exc) from None


def check_catalog_rules(request: CreateTaskRequest) -> None:
    """Refuse, before sending, a request the catalog's rules say its model does not take.

    The same check as the service's and the dashboard's (`spec.validation.check_create_body`: text
    commands read as fields, then every cross-field and per-model rule), raised as one
    `RequestRuleError` listing every problem with its field path. Only a model id in the catalog is
    judged: an endpoint id (`ep-...`) or an id the catalog does not know goes to the service as is,
    and the service decides.
    """
    if find_model(request.model) is None:
        return
    checked = check_create_body(request.to_json_dict())
    if checked.problems:
        raise RequestRuleError.from_problems(request.model, checked.problems)


def list_query(
    *,
    page_num: int,
    page_size: int,
    status: FilterStatus | None,
    task_ids: Sequence[str] | None,
    model: str | None,
    service_tier: ServiceTier,
) -> ListTasksQuery:
    """The list query, checked locally against the spec's ranges and enumerations."""
    if isinstance(task_ids, str):  # a lone id would otherwise become one id per character
        task_ids = [task_ids]
    try:
        # By field name (the model also takes its query-string aliases, `filter.status` ...).
        return ListTasksQuery.model_validate({
            "page_num": page_num,
            "page_size": page_size,
            "status": status,
            "task_ids": list(task_ids) if task_ids is not None else None,
            "model": model,
            "service_tier": service_tier,
        })
    except ValidationError as exc:
        raise RequestValidationError.from_pydantic("list query", exc) from None


class BodyCollector:
    """Gathers a streamed answer's decoded chunks, refusing it once it passes `limit` bytes."""

    def __init__(self, response: httpx.Response, limit: int) -> None:
        self.response = response
        self.limit = limit
        self.body = bytearray()

    def add(self, chunk: bytes) -> None:
        self.body += chunk
        if len(self.body) > self.limit:
            raise APIResponseTooLargeError(
                f"{self.response.request.method} {loggable(self.response.request.url)} answered "
                f"{self.response.status_code} with more than {self.limit:,} bytes; nothing was read "
                "(max_response_bytes)",
                request=self.response.request, status_code=self.response.status_code, limit=self.limit)

    def response_read(self) -> httpx.Response:
        """The answer as if read whole: the same status, headers and request, the collected body."""
        source = self.response
        # The body is already decoded: a kept Content-Encoding would have httpx decode it again.
        headers = [(k, v) for k, v in source.headers.multi_items()
                   if k.lower() not in ("content-encoding", "content-length", "transfer-encoding")]
        return httpx.Response(source.status_code, headers=headers, content=bytes(self.body),
                              request=source.request, extensions=source.extensions, history=source.history)


def parse_model(response: httpx.Response, model: type[M]) -> M:
    """A 2xx body as `model`, or APIResponseValidationError naming what did not fit."""
    try:
        body = response.json()
    except ValueError:
        raise APIResponseValidationError(
            f"expected a JSON body from {response.request.method} {response.request.url}, "
            f"got {response.headers.get('content-type', 'no content type')}",
            response=response,
            body=response.text,
        ) from None
    try:
        return model.model_validate(body)
    except ValidationError as exc:
        raise APIResponseValidationError(
            f"response is not a {model.__name__}: {exc.error_count()} problem(s): {exc}",
            response=response,
            body=body,
        ) from None


# The code of the 404 for a task that is not there (or is another project's), spec section 7.
TASK_NOT_FOUND_CODE = "NotFound.Task"


def charge_batches(task_ids: Iterable[str]) -> list[list[str]]:
    """The ids of a `charges` call, once each, in requests of at most a page (what the endpoint takes)."""
    if isinstance(task_ids, str):
        raise ValueError("task_ids must be a list of task ids, not one string")
    ids = list(dict.fromkeys(task_ids))
    for task_id in ids:
        if not isinstance(task_id, str) or not task_id:
            raise ValueError(f"a task id must be a non-empty string, got {task_id!r}")
    size = limits.TASK_IDS_FILTER_MAX
    return [ids[start:start + size] for start in range(0, len(ids), size)]


def unless_task_not_found(error: NotFoundError) -> NotFoundError:
    """A 404 of a Dailies endpoint about one task: the endpoint's own `NotFound.Task` as it is, any
    other 404 (the real Ark's or an older Dailies' for a path it does not have) as
    `UnsupportedEndpointError`."""
    return error if error.code == TASK_NOT_FOUND_CODE else UnsupportedEndpointError.of(error)


class Pager:
    """Walks the pages of a list query. The caller fetches; `take` says what is new and what next.

    Ends on an empty page, once the pages fetched cover `total`, or at the last page number the
    API accepts. Tasks created while paging shift the list, so a task may come back on the next
    page; it is yielded once.
    """

    def __init__(self, first: ListTasksQuery) -> None:
        self._query: ListTasksQuery | None = first
        self._seen: set[str] = set()

    def next_query(self) -> ListTasksQuery | None:
        return self._query

    def take(self, page: ListTasksResponse) -> list[TaskRecord]:
        query = self._query
        assert query is not None, "take() after the last page"
        covered = query.page_num * query.page_size
        if not page.items or covered >= page.total or query.page_num >= limits.PAGE_NUM_MAX:
            self._query = None
        else:
            self._query = query.model_copy(update={"page_num": query.page_num + 1})
        fresh = [record for record in page.items if record.id not in self._seen]
        self._seen.update(record.id for record in fresh)
        return fresh


# The least a poll of `wait` sent just before its deadline is given to be answered.
POLL_MIN_SECONDS = 1.0


def timeout_within_deadline(timeout: httpx.Timeout | None, deadline: float | None, now: float) -> httpx.Timeout | None:
    """The HTTP timeout of a request: the client's, each part cut to the time a `wait`'s poll has left
    before `deadline` (on the clock's `now()`), so a service that takes the connection and never answers
    cannot hold a 5 s wait for 3 minutes (60 s reads, retried twice)."""
    if deadline is None:
        return timeout
    left = max(deadline - now, POLL_MIN_SECONDS)
    base = timeout if timeout is not None else DEFAULT_TIMEOUT

    def cut(seconds: float | None) -> float:
        return left if seconds is None else min(seconds, left)

    return httpx.Timeout(connect=cut(base.connect), read=cut(base.read), write=cut(base.write), pool=cut(base.pool))


def retry_past_deadline(delay: float, deadline: float | None, now: float) -> bool:
    """Whether a poll's retry after `delay` would start past its wait's deadline (then it is not made)."""
    return deadline is not None and now + delay >= deadline


def next_poll_delay(deadline: float | None, now: float, poll_interval: float) -> float | None:
    """How long `wait` sleeps before the next poll, or None when the deadline has passed.

    The last sleep is cut short so one more poll happens exactly at the deadline.
    """
    if deadline is None:
        return poll_interval
    remaining = deadline - now
    if remaining <= 0:
        return None
    return min(poll_interval, remaining)


def poll_failed_for_now(error: Exception) -> bool:
    """Whether a poll of `wait` failed only for now (no connection, a timeout, 408, 429, a 5xx: a
    restart, a blip) after the client's own retries: `wait` polls again at its next interval
    instead of giving up on a task that is still running."""
    from .errors import APIConnectionError, APIStatusError  # errors imports this module

    if isinstance(error, APIConnectionError):
        return True
    return isinstance(error, APIStatusError) and (error.status_code in (408, 429) or error.status_code >= 500)


def check_wait_args(timeout: float | None, poll_interval: float) -> None:
    if timeout is not None and timeout < 0:
        raise ValueError("timeout must be >= 0 (or None to wait without a deadline)")
    if poll_interval <= 0:
        raise ValueError("poll_interval must be > 0")


def loggable(url: httpx.URL) -> str:
    """A URL for a log line: result URLs carry their signature in the query."""
    return str(url.copy_with(query=None))


def content_total(response: httpx.Response) -> int | None:
    """Size of a download in decoded bytes, when the response tells it."""
    # Content-Length counts encoded bytes; with gzip on the wire it says nothing about the file.
    if response.headers.get("content-encoding", "identity") != "identity":
        return None
    try:
        total = int(response.headers["content-length"])
    except (KeyError, ValueError):
        return None
    return total if total >= 0 else None


@contextmanager
def replacing(path: str | os.PathLike[str]) -> Iterator[Path]:
    """A temporary file beside `path` that replaces it only when the block succeeds.

    A download that fails halfway never leaves a truncated video under the final name.
    """
    target = Path(path)
    partial = target.with_name(f".{target.name}.{uuid.uuid4().hex[:8]}.part")
    try:
        yield partial
        os.replace(partial, target)
    except BaseException:
        with suppress(FileNotFoundError):
            partial.unlink()
        raise
