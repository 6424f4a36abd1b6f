"""`/dailies/v1/notifications`: a project's notification targets, and what its dashboard tells of.

- `GET  .../targets`: the project's targets, whether this service sends e-mail, and the event kinds.
- `POST .../targets` `{"kind", "address", "events", "owner"?}`: a target (201). A member's key makes the
  project's targets (no owner) and its member's own; a key without a member name any person's.
- `DELETE .../targets/{id}`: removed, with what still waits for it. `GET .../targets/{id}/log`: its deliveries.
- `POST .../events` `{"kind": "comment"|"status", "task_id", "text", ...}`: queued for each target that
  takes it (the actor is the key's member whatever the body says); `{"reached": n}` targets.
- `POST .../guest-grants` `{"task_ids", "expires_at"}`: a grant for a share's page (access/guest_grants.py).
- `POST .../guest-events`, the grant as bearer: as `events`, of the grant's versions, signed as a guest.
Writes count against the key's per-minute creates, reads against its reads; a grant's events against
GUEST_EVENTS_PER_MINUTE.
"""

from __future__ import annotations

import hashlib
from dataclasses import replace
from typing import Annotated

from fastapi import APIRouter, Header, Request
from fastapi.responses import JSONResponse

from dailies.service.access import guest_grants
from dailies.service.api.body import read_json_body
from dailies.service.api.routes import CallerOf, ServicesOf, admitted, call_service
from dailies.service.callers import Caller, KeyOptions
from dailies.service.errors import ApiError, from_problems, unauthorized
from dailies.service.node.services import Services
from dailies.service.own_paths import PREFIX
from dailies.spec import notifications as N

router = APIRouter(prefix=f"{PREFIX}/notifications", tags=["dailies"])
BODY_MAX_BYTES = 256 * 1024
_BODY_ANSWERS: dict[int | str, dict[str, object]] = {413: {"description": "A body over 256 KB"},
                                                     415: {"description": "Not JSON"}}


@router.get("/targets", summary="The project's notification targets")
async def targets(request: Request, caller: CallerOf, svc: ServicesOf) -> JSONResponse:
    headers = await admitted(request, caller, "read")
    found = await call_service(request, svc.notifications.targets, caller.project, reads_only=True)
    return JSONResponse({"targets": [t.as_dict() for t in found], "email": bool(svc.settings.smtp_url),
                         "events": list(N.EVENT_KINDS), "kinds": list(N.TARGET_KINDS)}, headers=headers)


@router.post("/targets", status_code=201, summary="Add a notification target (webhook, Slack, Mattermost, e-mail)",
             responses={403: {"description": "A member's key adding another person's target"}, **_BODY_ANSWERS},
             openapi_extra={"requestBody": {"required": True, "content": {"application/json": {"schema": {
                 "type": "object", "required": ["kind", "address", "events"], "properties": {
                     "kind": {"type": "string", "enum": list(N.TARGET_KINDS)},
                     "address": {"type": "string", "maxLength": N.MAX_ADDRESS_CHARS},
                     "events": {"type": "array", "minItems": 1,
                                "items": {"type": "string", "enum": list(N.EVENT_KINDS)}},
                     "owner": {"type": "string", "maxLength": N.MAX_NAME_CHARS}}}}}}})
async def add_target(request: Request, caller: CallerOf, svc: ServicesOf) -> JSONResponse:
    headers = await admitted(request, caller, "create")
    problems, fields = N.check_target(await read_json_body(request, BODY_MAX_BYTES))
    if not problems and caller.member and fields["owner"] not in ("", caller.member):
        raise ApiError(403, "AccessDenied", f"This key is {caller.member}'s: a target it adds is the project's "
                       f"or {caller.member}'s, never {fields['owner'][:80]!r}'s.", "owner")
    if problems:
        raise from_problems(problems)
    target = await call_service(request, svc.notifications.add_target, caller.project,
                                caller.member or fields["owner"] or "", fields)
    return JSONResponse(target.as_dict(), status_code=201, headers=headers)


@router.delete("/targets/{target_id}", summary="Remove a notification target",
               responses={403: {"description": "Another person's target"}, 404: {"description": "No such target"}})
async def remove_target(request: Request, target_id: str, caller: CallerOf, svc: ServicesOf) -> JSONResponse:
    headers = await admitted(request, caller, "create")
    removed = await call_service(request, svc.notifications.remove_target, caller.project, target_id,
                                 caller.member or "")
    if not removed:
        raise _unknown(target_id)
    return JSONResponse({"id": target_id, "deleted": True}, headers=headers)


@router.get("/targets/{target_id}/log", summary="A target's deliveries: each attempt, its answer and when",
            responses={404: {"description": "No such target"}})
async def target_log(request: Request, target_id: str, caller: CallerOf, svc: ServicesOf) -> JSONResponse:
    headers = await admitted(request, caller, "read")
    items = await call_service(request, _log, svc, caller.project, target_id, reads_only=True)
    return JSONResponse({"items": items}, headers=headers)


@router.post("/events", summary="Tell of a comment or a review status: queued for the targets that take it",
             responses=_BODY_ANSWERS,
             openapi_extra={"requestBody": {"required": True, "content": {"application/json": {"schema": {
                 "type": "object", "required": ["kind", "task_id"], "properties": {
                     "kind": {"type": "string", "enum": list(N.POSTED_KINDS)},
                     **{name: {"type": "string", "maxLength": N.MAX_NAME_CHARS}
                        for name in ("task_id", "actor", "maker", "reply_to", "status")},
                     "shot": {"type": "string"}, "text": {"type": "string"}, "link": {"type": "string"}}}}}}})
async def tell(request: Request, caller: CallerOf, svc: ServicesOf) -> JSONResponse:
    headers = await admitted(request, caller, "create")
    problems, happening = N.check_posted(await read_json_body(request, BODY_MAX_BYTES))
    if problems or happening is None:
        raise from_problems(problems)
    if caller.member:  # a member's key speaks for its member only
        happening = replace(happening, actor=caller.member)
    if not happening.link:
        happening = replace(happening, link=svc.notifications.link(happening.task_id))
    reached = await call_service(request, _tell, svc, caller.project, happening)
    return JSONResponse({"reached": reached}, headers=headers)


@router.post("/guest-grants", status_code=201, summary="A grant for a share's page to tell of its guests' comments",
             responses=_BODY_ANSWERS,
             openapi_extra={"requestBody": {"required": True, "content": {"application/json": {"schema": {
                 "type": "object", "required": ["task_ids", "expires_at"], "properties": {
                     "task_ids": {"type": "array", "minItems": 1, "maxItems": N.GRANT_MAX_TASKS,
                                  "items": {"type": "string", "maxLength": N.MAX_NAME_CHARS}},
                     "expires_at": {"type": "integer"}}}}}}})
async def grant(request: Request, caller: CallerOf, svc: ServicesOf) -> JSONResponse:
    headers = await admitted(request, caller, "create")
    problems, task_ids, expires_at = N.check_grant_request(await read_json_body(request, BODY_MAX_BYTES),
                                                           svc.settings.clock())
    if problems:
        raise from_problems(problems)
    token = guest_grants.issue(svc.signer, caller.project, caller.member, task_ids, expires_at)
    return JSONResponse({"grant": token, "expires_at": expires_at, "task_ids": list(task_ids)}, status_code=201,
                        headers=headers)


@router.post("/guest-events", summary="Tell of a guest's comment or status, with a share's grant as the bearer",
             responses={401: {"description": "No grant, or one that is not good (altered, expired)"},
                        403: {"description": "A version the grant does not cover"}, **_BODY_ANSWERS},
             openapi_extra={"requestBody": {"required": True, "content": {"application/json": {"schema": {
                 "type": "object", "required": ["kind", "task_id"], "properties": {
                     "kind": {"type": "string", "enum": list(N.POSTED_KINDS)},
                     **{name: {"type": "string", "maxLength": N.MAX_NAME_CHARS}
                        for name in ("task_id", "actor", "maker", "reply_to", "status")},
                     "shot": {"type": "string"}, "text": {"type": "string"}, "link": {"type": "string"}}}}}}})
async def tell_as_guest(request: Request, svc: ServicesOf,
                        authorization: Annotated[str | None, Header()] = None) -> JSONResponse:
    scheme, _, token = (authorization or "").partition(" ")
    found = guest_grants.read(svc.signer, token.strip(), svc.settings.clock()) if scheme.lower() == "bearer" else None
    if found is None:
        raise unauthorized("This endpoint takes a share's guest grant as 'Authorization: Bearer dgg1.…', "
                           "still good (a grant expires with its share).")
    # The grant's events share one per-minute allowance, whichever page of the share sends them.
    grantee = Caller(found.project, "guest-grant:" + hashlib.sha256(token.strip().encode()).hexdigest()[:32],
                     KeyOptions(rpm=N.GUEST_EVENTS_PER_MINUTE))
    headers = await admitted(request, grantee, "create")
    problems, happening = N.check_posted(await read_json_body(request, BODY_MAX_BYTES))
    if problems or happening is None:
        raise from_problems(problems)
    if happening.task_id not in found.task_ids:
        raise ApiError(403, "AccessDenied", "This grant does not cover that version: a share's page tells only "
                       "of the versions it shows.", "task_id")
    happening = replace(happening, actor=N.guest_actor(happening.actor))
    if not happening.link:
        happening = replace(happening, link=svc.notifications.link(happening.task_id))
    reached = await call_service(request, _tell, svc, found.project, happening)
    return JSONResponse({"reached": reached}, headers=headers)


def _tell(svc: Services, project: str, happening: N.Happening) -> int:
    with svc.notifications.write.begin() as conn:
        return svc.notifications.tell(conn, project, replace(happening, at=svc.settings.clock()))


def _log(svc: Services, project: str, target_id: str) -> list[dict]:
    if not any(t.id == target_id for t in svc.notifications.targets(project)):
        raise _unknown(target_id)
    return svc.callbacks.log_for(target_id)


def _unknown(target_id: str) -> ApiError:
    return ApiError(404, "NotFound", f"No notification target {target_id[:80]!r} in this project.", "target_id")
