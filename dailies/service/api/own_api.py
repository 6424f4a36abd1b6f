"""Endpoints beyond the specification, under their own prefix `/dailies/v1` (never `/api/v3`, which
stays exactly the contract real clients expect). Same authentication and error shape.

- `GET /dailies/v1/me`: the caller's project and member name (never the key) and its limits.
- `GET /dailies/v1/service`: local preview or gateway; a gateway's upstream, region and key health.
- `GET /dailies/v1/spend?since=YYYY-MM-DD`: the project's spend per day, member, model and state,
  and its budgets with what is left (budgets.py).
- `GET /dailies/v1/tasks/{task_id}/callbacks`: the delivery log of a task's callbacks (callbacks.py).
- `POST /dailies/v1/tasks/{task_id}/cancel`: cancel a task that has not started, never delete one (a
  finished task is a 409 `InvalidAction.TaskFinished`; one cancelled already is answered as done).
- `GET /dailies/v1/tasks/{task_id}/request`: a task's stored request, its prompt and inputs (inline
  images as thumbnails, never the data; stored_requests.py), and the member who created it; made by
  the first read and kept (shown_requests.py). A task of another project answers 404 exactly as an
  unknown one, as `GET /api/v3/.../tasks/{id}` does.
- `POST /dailies/v1/charges` `{"task_ids": [...]}`: the ledger's line of each of these tasks (up to a
  page, 500): reserved, settled or released, amount and currency. What a task costs, shown anywhere,
  is this line (a gateway bills in its upstream region's currency, 2.0 with a video input at its own
  price, a task the upstream made but whose result could not be taken at its estimate): a client
  never prices a Dailies service's task a second time. Ids another project has are left out exactly
  as unknown ones. A POST because a page of ids does not fit a URL; it reads only.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from typing import Annotated, Any

from fastapi import APIRouter, Query, Request
from fastapi.responses import JSONResponse, Response
from sqlalchemy import Engine, select

from dailies.service.api.body import read_json_body
from dailies.service.api.routes import CallerOf, ServicesOf, admitted, call_service
from dailies.service.billing import budgets
from dailies.service.db.tables import ledger
from dailies.service.errors import ApiError
from dailies.service.node.services import Services
from dailies.service.own_paths import PREFIX
from dailies.service.tasks import shown_requests
from dailies.spec import limits as L
from dailies.spec.statuses import TaskStatus

router = APIRouter(prefix=PREFIX, tags=["dailies"])


@router.get("/me", summary="Who the key is: project and member name")
async def me(caller: CallerOf) -> dict:
    return {"project": caller.project, "member": caller.member or None,
            "limits": {"rpm": caller.options.rpm, "read_rpm": caller.options.read_rpm}}


@router.get("/members", summary="The member names of the key's project, for @name in comments")
async def members(request: Request, caller: CallerOf, svc: ServicesOf) -> JSONResponse:
    """Names only (never a key), counted as a read against the key's per-minute limit."""
    headers = await admitted(request, caller, "read")
    names = await call_service(request, svc.api_keys.members, caller.project, reads_only=True)
    return JSONResponse({"project": caller.project, "members": names}, headers=headers)


@router.get("/service", summary="What this service is: local preview renderer or a gateway, and its upstream")
async def service(caller: CallerOf, svc: ServicesOf) -> dict:
    """A gateway names its upstream, region and the health of its keys (by name, never the key);
    the dashboard picks the catalog of the upstream's region from it."""
    return svc.info()


@router.get("/spend", summary="The project's spend and budgets", response_model=None)
async def spend(request: Request, caller: CallerOf, svc: ServicesOf,
                since: Annotated[str | None, Query()] = None) -> JSONResponse:
    """Counted as a read against the key's per-minute limit (two aggregates over the ledger)."""
    try:
        since_day = date.fromisoformat(since) if since else None
    except ValueError:
        raise ApiError(400, "InvalidParameter", "since must be a date, YYYY-MM-DD.", "since") from None
    headers = await admitted(request, caller, "read")
    body = await call_service(request, _spend, svc.engine, caller.project, since_day, svc.settings.clock(),
                              reads_only=True)
    return JSONResponse(body, headers=headers)


def _spend(engine: Engine, project: str, since: date | None, now: float) -> dict[str, Any]:
    with engine.connect() as conn:
        rows = budgets.spend(conn, project, since)
        statuses = budgets.budget_status(conn, project, now)
    micros = budgets.MICROS
    return {
        "items": [row.as_dict() for row in rows],
        "budgets": [{"member": s.member or None, "period": s.period_label, "currency": s.currency,
                     "amount": str(s.amount / micros), "spent": str(s.settled / micros),
                     "reserved": str(s.reserved / micros), "left": str(s.left / micros)} for s in statuses],
    }


# Ids per charges request: a page of the list endpoint holds at most this many tasks.
CHARGES_IDS_MAX = L.TASK_IDS_FILTER_MAX
# A body of that many ids of the longest length, quoted and separated, with room to spare.
CHARGES_BODY_MAX_BYTES = CHARGES_IDS_MAX * (L.TASK_ID_MAX_CHARS + 4) + 1024


@router.post("/charges", response_model=None,
             summary="What the ledger charges for each of these tasks: reserved, settled or released",
             responses={413: {"description": "More than a page of ids"}, 415: {"description": "Not JSON"}},
             openapi_extra={"requestBody": {"required": True, "content": {"application/json": {"schema": {
                 "type": "object", "required": ["task_ids"], "properties": {"task_ids": {
                     "type": "array", "maxItems": CHARGES_IDS_MAX,
                     "items": {"type": "string", "minLength": 1, "maxLength": L.TASK_ID_MAX_CHARS}}}}}}}})
async def charges(request: Request, caller: CallerOf, svc: ServicesOf) -> JSONResponse:
    """Counted as one read against the key's per-minute limit, as a list is (one page of ids, one
    indexed statement)."""
    headers = await admitted(request, caller, "read")
    task_ids = _task_ids(await read_json_body(request, CHARGES_BODY_MAX_BYTES))
    items = await call_service(request, _charges, svc.engine, caller.project, task_ids, reads_only=True)
    return JSONResponse({"items": items}, headers=headers)


def _task_ids(body: object) -> list[str]:
    ids = body.get("task_ids") if isinstance(body, dict) else None
    if not isinstance(ids, list) or not all(isinstance(i, str) and 0 < len(i) <= L.TASK_ID_MAX_CHARS for i in ids):
        raise ApiError(400, "InvalidParameter", f"Send {{\"task_ids\": [...]}}: a list of task ids, each a string of "
                       f"1 to {L.TASK_ID_MAX_CHARS} characters.", "task_ids")
    if len(ids) > CHARGES_IDS_MAX:
        raise ApiError(400, "InvalidParameter", f"At most {CHARGES_IDS_MAX} task ids at once (a page); "
                       f"got {len(ids)}.", "task_ids")
    return list(dict.fromkeys(ids))


def _charges(engine: Engine, project: str, task_ids: list[str]) -> list[dict[str, Any]]:
    """The project's ledger lines of these tasks; another project's are not read at all."""
    if not task_ids:
        return []
    with engine.connect() as conn:
        rows = conn.execute(select(ledger.c.task_id, ledger.c.model, ledger.c.state, ledger.c.currency,
                                   ledger.c.amount, ledger.c.tokens)
                            .where(ledger.c.project == project, ledger.c.task_id.in_(task_ids))).all()
    return [{"task_id": r.task_id, "model": r.model, "state": r.state, "currency": r.currency or None,
             "amount": str(Decimal(r.amount) / budgets.MICROS), "tokens": int(r.tokens)} for r in rows]


@router.get("/tasks/{task_id}/request", response_model=None,
            summary="A task's stored request: prompt and inputs (inline images as thumbnails)")
async def task_request(request: Request, task_id: str, caller: CallerOf, svc: ServicesOf) -> Response:
    """Counted as a read against the key's per-minute limit, as a get is. The answer is made by the
    first read (its images decoded once, never on the event loop) and kept (shown_requests.py)."""
    headers = await admitted(request, caller, "read")
    answer = await call_service(request, _kept_answer, svc, caller.project, task_id, reads_only=True)
    if answer is None:
        answer = await shown_requests.made(svc.engine, svc.store.write, task_id)
    return Response(answer, media_type="application/json", headers=headers)


@router.get("/tasks/{task_id}/callbacks", response_model=None,
            summary="A task's callback deliveries: each attempt, its answer and when")
async def callback_log(request: Request, task_id: str, caller: CallerOf, svc: ServicesOf) -> JSONResponse:
    """Counted as a read against the key's per-minute limit, as a get is."""
    headers = await admitted(request, caller, "read")
    items = await call_service(request, _callback_log, svc, caller.project, task_id, reads_only=True)
    return JSONResponse({"items": items}, headers=headers)


@router.post("/tasks/{task_id}/cancel", response_model=None,
             summary="Cancel a task that has not started; never delete (a finished task is a 409)")
async def cancel(request: Request, task_id: str, caller: CallerOf, svc: ServicesOf) -> JSONResponse:
    """The spec's DELETE cancels a queued task but deletes a finished one for good: a cancel sent as
    its task ends deletes the result. This one only cancels. Counted as a read, as DELETE is."""
    headers = await admitted(request, caller, "read")
    await call_service(request, svc.tasks.cancel, caller.project, task_id)
    return JSONResponse({"id": task_id, "status": TaskStatus.CANCELLED.value}, headers=headers)


def _callback_log(svc: Services, project: str, task_id: str) -> list[dict]:
    svc.tasks.get(project, task_id)  # 404 for another project's task, as for an unknown one
    return svc.callbacks.log_for(task_id)


def _kept_answer(svc: Services, project: str, task_id: str) -> str | None:
    """The task's kept answer, None before its first read (404 `NotFound.Task` for another
    project's task, as for an unknown one)."""
    svc.tasks.get(project, task_id)
    with svc.engine.connect() as conn:
        return shown_requests.kept(conn, task_id)
