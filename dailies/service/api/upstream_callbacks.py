"""The route an upstream calls back on (gateway/callbacks.py says what a callback may do: wake a follower)."""

from __future__ import annotations

import json
from typing import Annotated

from fastapi import APIRouter, Query, Request

from dailies.service.api.routes import ServicesOf, call_service
from dailies.service.errors import ApiError
from dailies.service.gateway import callbacks as upstream_callbacks
from dailies.service.own_paths import PREFIX

router = APIRouter(prefix=PREFIX, tags=["dailies"])


@router.post(upstream_callbacks.ROUTE, include_in_schema=False)
async def upstream_callback(request: Request, task_id: str, svc: ServicesOf,
                            signature: Annotated[str, Query()] = "") -> dict:
    path = upstream_callbacks.path_of(task_id)
    if not svc.settings.upstream_url or not svc.signer.verify(path, upstream_callbacks.NEVER, signature):
        raise ApiError(401, "AuthenticationError", "This callback URL is not one this gateway gave its upstream.",
                       "signature")
    try:
        upstream_id = (json.loads(await request.body()) or {}).get("id")
    except (ValueError, AttributeError):
        upstream_id = None
    if not isinstance(upstream_id, str) or not upstream_id:
        raise ApiError(400, "InvalidParameter", "The callback's body must be the upstream task, with its id.", "id")
    await call_service(request, upstream_callbacks.signal, svc, task_id, upstream_id)
    return {}
