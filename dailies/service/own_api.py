"""Endpoints beyond the specification, under their own prefix `/dailies/v1` (never `/api/v3`, which
stays exactly the contract real clients expect). Same authentication and error shape.

- `GET /dailies/v1/me`: the caller's project and member name (never the key) and its limits.
- `GET /dailies/v1/service`: local preview or gateway; a gateway's upstream, region and key health.
- `GET /dailies/v1/spend?since=YYYY-MM-DD`: the project's spend per day, member, model and state,
  and its budgets with what is left (budgets.py).
"""

from __future__ import annotations

from datetime import date
from typing import Annotated

from fastapi import APIRouter, Query, Request

from . import budgets
from .api_errors import ApiError
from .routes import CallerOf, call_service, services

PREFIX = "/dailies/v1"
router = APIRouter(prefix=PREFIX, tags=["dailies"])


@router.get("/me", summary="Who the key is: project and member name")
async def me(caller: CallerOf) -> dict:
    return {"project": caller.project, "member": caller.member or None,
            "limits": {"rpm": caller.options.rpm, "read_rpm": caller.options.read_rpm}}


@router.get("/service", summary="What this service is: local preview renderer or a gateway, and its upstream")
async def service(request: Request, caller: CallerOf) -> dict:
    """A gateway names its upstream, region and the health of its keys (by name, never the key);
    the dashboard picks the catalog of the upstream's region from it."""
    return services(request).info()


@router.get("/spend", summary="The project's spend and budgets")
async def spend(request: Request, caller: CallerOf, since: Annotated[str | None, Query()] = None) -> dict:
    try:
        since_day = date.fromisoformat(since) if since else None
    except ValueError:
        raise ApiError(400, "InvalidParameter", "since must be a date, YYYY-MM-DD.", "since") from None
    svc = services(request)
    return await call_service(request, _spend, svc.engine, caller.project, since_day, svc.settings.clock(),
                              reads_only=True)


def _spend(engine, project: str, since: date | None, now: float) -> dict:
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
