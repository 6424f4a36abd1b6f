"""HTTP routes: parse, authenticate, call the task service, shape the response. No rules here."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Annotated, Any, TypeVar, TypeVarTuple

from fastapi import APIRouter, Depends, Header, Request
from fastapi.responses import FileResponse, JSONResponse, Response
from pydantic import ValidationError
from starlette.concurrency import run_in_threadpool

from dailies.service.access import rate_limits
from dailies.service.access.shared_secrets import RETRY_AFTER_FAILURE_SECONDS, KeysUnavailable
from dailies.service.api.body import read_json_body
from dailies.service.callers import Caller
from dailies.service.errors import ApiError, dependency_unavailable, from_problems, task_not_found, unauthorized
from dailies.service.node.services import Services
from dailies.service.runtime.metrics import CONTENT_TYPE as METRICS_CONTENT_TYPE
from dailies.service.tasks.actions import TaskService
from dailies.service.tasks.records import result_expires_at
from dailies.spec import limits as L
from dailies.spec.models import ListTasksQuery
from dailies.spec.results import MEDIA_TYPES
from dailies.spec.statuses import TaskStatus
from dailies.spec.validation import problems_from_validation_error

TASKS = "/api/v3/contents/generations/tasks"
router = APIRouter()

T = TypeVar("T")
Args = TypeVarTuple("Args")


def services(request: Request) -> Services:
    """The app's `Services` (app.py puts them in the app's state)."""
    found: Services = request.app.state.services
    return found


async def _services_of(request: Request) -> Services:
    # `async`: FastAPI would run a plain `def` dependency in the thread pool (see `caller_of`).
    return services(request)


ServicesOf = Annotated[Services, Depends(_services_of)]


async def caller_of(request: Request, authorization: Annotated[str | None, Header()] = None) -> Caller:
    """The project, member name and limits of the bearer key; 401 when the header is missing,
    malformed or unknown, 503 when the key could not be checked (the database does not answer).
    `async`: FastAPI runs a plain `def` dependency in the thread pool, a round trip per request,
    which only a key that must be looked up in the database pays (`_caller`)."""
    if not authorization:
        raise unauthorized("The Authorization header is missing; send 'Authorization: Bearer <API key>'.")
    if len(set(request.headers.getlist("authorization"))) > 1:
        # FastAPI hands over the first; a proxy in front may have checked (or added) another: acting for
        # one key while something else vouched for a different one is refused, never a silent pick.
        raise unauthorized("The Authorization header was given more than once with different keys; send one.")
    scheme, _, token = authorization.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise unauthorized("The Authorization header must be 'Bearer <API key>'.")
    caller = await _caller(request, token.strip())
    if caller is None:
        raise unauthorized("The API key is not valid.")
    return caller


async def _caller(request: Request, key: str) -> Caller | None:
    """The key's caller: on the event loop when the answer is in memory (the keys of the settings
    or the keys file, a key table read under a second ago or found unreadable a moment ago), else in
    the thread pool, because the table's read can wait for a database that does not answer, and on
    the loop that wait would stop every request of the node, `/healthz` too."""
    service = services(request)
    try:
        if service.api_keys.answers_at_once(key):
            return service.caller(key)
        return await run_in_threadpool(service.caller, key)
    except KeysUnavailable as exc:
        raise KeyNotChecked(str(exc)) from exc


class KeyNotChecked(ApiError):
    """503 as for any request that needed the database and found it down (app.py), naming it; the
    node asks again only after `RETRY_AFTER_FAILURE_SECONDS`, so retrying sooner gets the same."""

    def __init__(self, why: str) -> None:
        down = dependency_unavailable({"database": why})
        super().__init__(down.status, down.code, down.message, down.param)

    def headers(self) -> dict[str, str]:
        return {"Retry-After": f"{RETRY_AFTER_FAILURE_SECONDS:.0f}"}


CallerOf = Annotated[Caller, Depends(caller_of)]


async def admitted(request: Request, caller: Caller, kind: str) -> dict[str, str]:
    """Count the request against the key's per-minute limit (429 when used up); the headers that
    say what is left."""
    if rate_limits.limit_of(caller.options, kind) is None:
        return {}  # most keys: no statement, no thread hop
    allowance = await call_service(request, services(request).tasks.admit, caller, kind, quick_write=True)
    return allowance.headers() if allowance is not None else {}


# A create body up to this size, without a callback URL or inline media, is quick to check: nothing
# to open, no host to resolve (see `call_service`).
QUICK_CREATE_MAX_BYTES = 16 * 1024


def _holds_inline_media(body: object) -> bool:
    """Whether a create body carries a `data:` URL anywhere in its content: its material check opens
    bytes nobody vouches for (PyAV, Pillow), which never runs on the event loop (issue 34)."""
    content = body.get("content") if isinstance(body, dict) else None
    return isinstance(content, list) and "data:" in json.dumps(content).lower()


async def call_service(request: Request, call: Callable[[*Args], T], *args: *Args, reads_only: bool = False,
                       quick_write: bool = False) -> T:
    """Run a call into the task service on the event loop where that cannot make it wait, else in
    the thread pool.

    On SQLite a read (WAL: never waits for a writer) or a quick write takes a fraction of a
    millisecond, less than handing it to a worker thread and back (under load a thread wake-up was
    a quarter of a list's CPU and a third of a create's). A read runs on the loop; a quick write too,
    but only while this process's write lock is free (taken without waiting, held for the call), so
    the loop never waits behind a render slot's transaction or the housekeeper's purge. Anything
    else, and everything on PostgreSQL (each statement a network round trip), goes to the pool."""
    store = services(request).store
    if not store.dialect.postgres:
        if reads_only:
            return call(*args)
        if quick_write:
            with store.write.held_if_free() as held:
                if held:
                    return call(*args)
    return await run_in_threadpool(call, *args)


def base_url(request: Request) -> str:
    return str(request.base_url).rstrip("/")


@router.get("/healthz", tags=["service"], summary="Liveness (no authentication)")
async def healthz() -> dict:
    """The process answers. Says nothing of the database or the bucket: see /readyz. On the event loop,
    never the thread pool: requests held there by a dependency that does not answer must not make an
    orchestrator restart a live process."""
    return {"status": "ok"}


@router.get("/readyz", tags=["service"], summary="Readiness: the database and the storage answer (no authentication)")
def readyz(svc: ServicesOf) -> dict[str, str]:
    """200 when both answer now; 503 in the error shape naming each that does not."""
    readiness = svc.health.check()
    if not readiness.ready:
        error = dependency_unavailable(readiness.problems)
        error.counted = False  # an orchestrator's probe, not a client's request answered with an error
        raise error
    return {"status": "ready", "database": "ok", "storage": "ok"}


@router.get("/metrics", tags=["service"], summary="Prometheus metrics (no authentication)")
def metrics(svc: ServicesOf) -> Response:
    return Response(svc.metrics.exposition(), media_type=METRICS_CONTENT_TYPE)


# No response model: the answer is the dict built here (openapi.py states its schema).
@router.post(TASKS, tags=["tasks"], summary="Create a video generation task", response_model=None)
async def create_task(request: Request, caller: CallerOf, response: Response, svc: ServicesOf,
                      idempotency_key: Annotated[str | None, Header(alias="Idempotency-Key")] = None
                      ) -> dict[str, str]:
    response.headers.update(await admitted(request, caller, "create"))
    _check_idempotency_key(idempotency_key)
    body = await read_json_body(request)
    tasks = svc.tasks
    quick = (int(request.headers.get("content-length") or QUICK_CREATE_MAX_BYTES + 1) <= QUICK_CREATE_MAX_BYTES
             and not (isinstance(body, dict) and body.get("callback_url")) and not _holds_inline_media(body))
    row = await call_service(request, tasks.create, caller, body, idempotency_key, quick_write=quick)
    created = {"id": row.id}
    if row.safety_identifier is not None:
        created["safety_identifier"] = row.safety_identifier
    return created


def _check_idempotency_key(value: str | None) -> None:
    """A key is stored with the task for 24 hours: printable ASCII of a bounded length."""
    if value is None:
        return
    if not 0 < len(value) <= L.IDEMPOTENCY_KEY_MAX_CHARS or not (value.isascii() and value.isprintable()):
        raise ApiError(400, "InvalidParameter", "The Idempotency-Key header must be 1 to "
                       f"{L.IDEMPOTENCY_KEY_MAX_CHARS} printable ASCII characters (a UUID, for instance).",
                       "Idempotency-Key")


# The list's filters (spec 4.2). Array parameters written the qs/axios way (`filter.task_ids[]=a&...`)
# mean the same as the repeated name.
_FILTERS = ("filter.status", "filter.model", "filter.service_tier", "filter.task_ids")
_ARRAY_SPELLINGS = {"filter.task_ids[]": "filter.task_ids"}


def _list_query(request: Request) -> ListTasksQuery:
    params = request.query_params
    for name in params:
        # A filter misspelled or written another way would be ignored and the whole list answered: a
        # script that lists some ids, then deletes what it got, would delete everything.
        if name.startswith("filter") and name not in _FILTERS and name not in _ARRAY_SPELLINGS:
            raise ApiError(400, "InvalidParameter", f"{name} is not a filter of this list; the filters are "
                           f"{', '.join(_FILTERS)} (filter.task_ids may repeat).", name)
    raw: dict[str, object] = {}
    for name in ("page_num", "page_size", "filter.status", "filter.model", "filter.service_tier"):
        if len(params.getlist(name)) > 1:  # only filter.task_ids repeats (spec 4.2): never a silent pick
            raise ApiError(400, "InvalidParameter", f"{name} was given more than once; give it once.", name)
        if name in params:
            raw[name] = params[name]
    task_ids = params.getlist("filter.task_ids") + params.getlist("filter.task_ids[]")
    if task_ids:
        raw["filter.task_ids"] = task_ids
    try:
        return ListTasksQuery.model_validate(raw)
    except ValidationError as exc:
        raise from_problems(problems_from_validation_error(exc)) from exc


# List and get answer with the JSON of the records they built: without a response model FastAPI
# would walk every record again through `jsonable_encoder`, which took longer than building
# them. Their response schemas are declared in openapi.py, from the models of the contract.


@router.get(TASKS, tags=["tasks"], summary="List the tasks of the last 7 days")
async def list_tasks(request: Request, caller: CallerOf, svc: ServicesOf) -> JSONResponse:
    headers = await admitted(request, caller, "read")
    query = _list_query(request)
    base = base_url(request)
    page = await call_service(request, _list_page, svc.tasks, caller.project, query, base, reads_only=True)
    return JSONResponse(page, headers=headers)


def _list_page(svc: TaskService, project: str, query: ListTasksQuery, base: str) -> dict[str, Any]:
    total, rows = svc.list(project, query)
    return {"total": total, "items": [svc.record(row, base) for row in rows]}


@router.get(TASKS + "/{task_id}", tags=["tasks"], summary="Get one task")
async def get_task(request: Request, task_id: str, caller: CallerOf, svc: ServicesOf) -> JSONResponse:
    headers = await admitted(request, caller, "read")
    record = await call_service(request, _one_record, svc.tasks, caller.project, task_id, base_url(request),
                                reads_only=True)
    return JSONResponse(record, headers=headers)


def _one_record(svc: TaskService, project: str, task_id: str, base: str) -> dict[str, Any]:
    return svc.record(svc.get(project, task_id), base)


@router.delete(TASKS + "/{task_id}", tags=["tasks"],
               summary="Cancel a queued task, or delete the record of a finished one")
async def delete_task(request: Request, task_id: str, caller: CallerOf, svc: ServicesOf) -> JSONResponse:
    # Counted with the reads: on a gateway each DELETE may cost an upstream call on the team's key.
    headers = await admitted(request, caller, "read")
    await call_service(request, svc.tasks.delete, caller.project, task_id)
    return JSONResponse({}, headers=headers)


@router.get("/files/{task_id}/{name}", tags=["files"], summary="A result file, by signed URL")
def result_file(svc: ServicesOf, task_id: str, name: str, expires: int = 0, signature: str = "") -> FileResponse:
    path = f"/files/{task_id}/{name}"
    if not signature or not svc.signer.verify(path, expires, signature):
        raise ApiError(403, "AccessDenied", "The signature of this URL is not valid.", "signature")
    if svc.settings.clock() >= expires:
        raise ApiError(403, "AccessDenied", "This result URL has expired (result URLs are valid for 24 hours).",
                       "expires")
    row = svc.store.get_by_id(task_id)
    file = svc.files.path(task_id, name)
    if row is None or file is None or row.status != TaskStatus.SUCCEEDED or result_expires_at(row) != expires:
        raise task_not_found(task_id)
    media_type = MEDIA_TYPES.get(name, "application/octet-stream")
    return FileResponse(file, media_type=media_type, headers={"Cache-Control": "private, max-age=3600"})

