"""The upstream's callbacks to a gateway: a faster signal than polling that a forwarded task changed.

A gateway started with a public address (`--public-url`, `DAILIES_PUBLIC_URL`) sends each upstream
create a `callback_url` of its own, `<public url>/dailies/v1/upstream/callback/<task id>?signature=...`
(never a member's: members' receivers are called by Dailies from its own records). The signature is an
HMAC of the path under the service's URL-signing secret, so only the holder of that exact URL (the
upstream) can knock, and only for that task.

The body is not trusted beyond its `id`: a callback only wakes the render that follows the task (in
whichever process: a PostgreSQL NOTIFY, wakeups.py), which then reads the task from the upstream itself
with its key. A lost or forged callback therefore changes nothing but timing; the poll stays the safety
net. The route answers 200 for every validly signed callback (also for a task no longer followed), so
the upstream does not retry what there is nothing to do about.
"""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Query, Request
from sqlalchemy import select

from ..spec.statuses import TaskStatus
from .api_errors import ApiError
from .db import tasks
from .own_api import PREFIX
from .routes import call_service, services
from .signing import UrlSigner

router = APIRouter(prefix=PREFIX, tags=["dailies"])
ROUTE = "/upstream/callback/{task_id}"
# Signed like a result URL that never expires: the path alone says what it is for.
_NEVER = 0


def _path(task_id: str) -> str:
    return PREFIX + ROUTE.format(task_id=task_id)


def callback_url(public_url: str, task_id: str, signer: UrlSigner) -> str:
    """What the upstream is given as `callback_url` for our task `task_id`."""
    path = _path(task_id)
    return f"{public_url.rstrip('/')}{path}?signature={signer.signature(path, _NEVER)}"


@router.post(ROUTE, include_in_schema=False)
async def upstream_callback(request: Request, task_id: str, signature: Annotated[str, Query()] = "") -> dict:
    svc = services(request)
    if not svc.settings.upstream_url or not svc.signer.verify(_path(task_id), _NEVER, signature):
        raise ApiError(401, "AuthenticationError", "This callback URL is not one this gateway gave its upstream.",
                       "signature")
    try:
        upstream_id = (json.loads(await request.body()) or {}).get("id")
    except (ValueError, AttributeError):
        upstream_id = None
    if not isinstance(upstream_id, str) or not upstream_id:
        raise ApiError(400, "InvalidParameter", "The callback's body must be the upstream task, with its id.", "id")
    await call_service(request, _signal, svc, task_id, upstream_id)
    return {}


def _signal(svc, task_id: str, upstream_id: str) -> None:
    """Wake the follower of the task, if it still runs here as that upstream task. Counted in
    `dailies_upstream_calls_total{call="callback"}`: `followed`, or `not_followed` (ended, another id)."""
    with svc.engine.begin() as conn:
        row = conn.execute(select(tasks.c.status, tasks.c.generator_state).where(tasks.c.id == task_id)).first()
        followed = (row is not None and row.status == TaskStatus.RUNNING and bool(row.generator_state)
                    and json.loads(row.generator_state).get("upstream_id") == upstream_id)
        if followed:
            svc.wakeups.signal_upstream(conn, upstream_id)
    svc.metrics.upstream_call("callback", "followed" if followed else "not_followed", 0.0)
