"""`/dailies/v1/live`: live review sessions (dailies/service/sessions/live.py).

- `POST /dailies/v1/live` `{"title", "versions": [{"task_id", "label"}], "presenter"?}` (a key): a session,
  presented by the key's member (or the name given by a key without one); its tokens, shown this once.
- `GET /dailies/v1/live` (a key): the project's open sessions.
- `GET /dailies/v1/live/{id}?token=F&after=N` (a key of the project, or the follow token `F`): the session
  with its versions' video URLs, the presenter's state and `seq`; with `after`, answered once `seq` passes
  N (at most 25 s later: then as it is). Called by the followers' players in the browser: no key there.
- `POST /dailies/v1/live/{id}/state` `{"token": control token, "state": {...}}` (the presenter's player;
  a text/plain body, so a browser sends it without a preflight): kept, `{"seq": n}`.
- `POST /dailies/v1/live/{id}/control` (the presenter's key): a new control token (their player after a reload).
- `POST /dailies/v1/live/{id}/handover` `{"to": name}` (the presenter's key). `POST .../end` (a key).
The routes the browser calls answer any origin (`Access-Control-Allow-Origin: *`): they take no cookie
and no key, only the tokens.
"""

from __future__ import annotations

from functools import partial
from typing import Annotated, Any

from fastapi import APIRouter, Header, Query, Request
from fastapi.responses import JSONResponse

from dailies.service.api.body import parse_json, read_body, read_json_body
from dailies.service.api.live_watch import watch_of
from dailies.service.api.routes import CallerOf, ServicesOf, admitted, base_url, call_service, caller_of
from dailies.service.callers import Caller
from dailies.service.errors import ApiError, from_problems
from dailies.service.node.services import Services
from dailies.service.own_paths import PREFIX
from dailies.spec import live as L
from dailies.spec.problems import Problem

router = APIRouter(prefix=f"{PREFIX}/live", tags=["dailies"])
BODY_MAX_BYTES = 128 * 1024
ANY_ORIGIN = {"Access-Control-Allow-Origin": "*", "Cache-Control": "no-store"}
def _person(caller: Caller, given: object) -> str:
    """Who acts: the key's member, or the name a key without one gives (one person's dashboard)."""
    if caller.member:
        return caller.member
    return given.strip()[: L.MAX_NAME_CHARS] if isinstance(given, str) and given.strip() else "Presenter"


@router.post("", status_code=201, summary="Start a live review session",
             responses={413: {"description": "A body over 128 KB"}, 415: {"description": "Not JSON"}})
async def start(request: Request, caller: CallerOf, svc: ServicesOf) -> JSONResponse:
    headers = await admitted(request, caller, "create")
    body = await read_json_body(request, BODY_MAX_BYTES)
    if not isinstance(body, dict):
        raise ApiError(400, "InvalidParameter", "The body must be a JSON object with title and versions.", "versions")
    problems, versions = L.check_versions(body)
    title = body.get("title", "")
    if not isinstance(title, str) or len(title) > L.MAX_TITLE_CHARS:
        problems.append(Problem("title", f"must be text of at most {L.MAX_TITLE_CHARS} characters"))
    if problems:
        raise from_problems(problems)
    for version in versions:  # each one of the project's: 404 for another project's, as for an unknown one
        await call_service(request, svc.tasks.get, caller.project, version["task_id"], reads_only=True)
    session, control, follow = await call_service(
        request, svc.live.start, caller.project, title.strip() or "Live review", versions,
        _person(caller, body.get("presenter")))
    return JSONResponse({**session.as_dict(), "control_token": control, "follow_token": follow},
                        status_code=201, headers=headers)


@router.get("", summary="The project's open live sessions")
async def listed(request: Request, caller: CallerOf, svc: ServicesOf) -> JSONResponse:
    headers = await admitted(request, caller, "read")
    sessions = await call_service(request, svc.live.listed, caller.project, reads_only=True)
    return JSONResponse({"items": [s.as_dict() for s in sessions]}, headers=headers)


@router.get("/{session_id}", summary="A live session and its presenter's state (a long poll with `after`)",
            responses={401: {"description": "Neither a key nor a token"}, 404: {"description": "No such session"},
                       429: {"description": "Too many players wait on this session on this node"}})
async def follow(request: Request, session_id: str, svc: ServicesOf,
                 token: Annotated[str | None, Query(max_length=200)] = None,
                 after: Annotated[int | None, Query(ge=-1)] = None,
                 wait: Annotated[float, Query(ge=0, le=L.LONG_POLL_MAX_S)] = L.LONG_POLL_MAX_S,
                 authorization: Annotated[str | None, Header()] = None) -> JSONResponse:
    project = None
    if token is None:
        caller = await caller_of(request, authorization)
        await admitted(request, caller, "read")
        project = caller.project
    read = partial(svc.live.get, project=project, follow_token=token)
    session = await call_service(request, read, session_id, reads_only=True)
    if after is not None and session.seq <= after:
        await watch_of(request).wait_past(session_id, after, wait)
        session = await call_service(request, read, session_id, reads_only=True)
    versions = await call_service(request, _with_videos, svc, session.project, session.versions, base_url(request),
                                  reads_only=True)
    root = f"{base_url(request)}{PREFIX}/live/{session.id}"
    # A key of the project may pass the session's link on; a follower already holds it.
    shown = {"follow_token": session.follow_token} if project is not None else {}
    return JSONResponse({**session.as_dict(), **shown, "versions": versions, "follow_url": root,
                         "state_url": f"{root}/state", "server_time": svc.settings.clock() * 1000},
                        headers=ANY_ORIGIN)


def _with_videos(svc: Services, project: str, versions: list[dict[str, str]], base: str) -> list[dict[str, Any]]:
    """Each version with its result's URL now (signed, as a get answers it), its length and frame rate."""
    out = []
    for version in versions:
        row = svc.store.get(project, version["task_id"])
        record = svc.tasks.record(row, base) if row is not None else {}
        content = record.get("content") or {}
        out.append({**version, "video_url": content.get("video_url"), "duration": record.get("duration"),
                    "fps": record.get("framespersecond"), "status": record.get("status", "deleted")})
    return out


@router.post("/{session_id}/state", summary="The presenter's player's state (its control token in the body)",
             responses={403: {"description": "Not the presenter's token"}, 404: {"description": "No such session"},
                        409: {"description": "The session has ended"}, 413: {"description": "Too large"}})
async def post_state(request: Request, session_id: str, svc: ServicesOf) -> JSONResponse:
    # Sent as text/plain (a browser's POST without a preflight): JSON all the same, read within its limit.
    body = parse_json(await read_body(request, L.MAX_STATE_BYTES))
    if not isinstance(body, dict) or not isinstance(body.get("token"), str):
        raise ApiError(401, "AuthenticationError", "Send the presenter's control token as `token`.", "token")
    seq = await call_service(request, svc.live.post_state, session_id, body["token"], body.get("state"))
    watch_of(request).posted(session_id, seq)
    return JSONResponse({"seq": seq}, headers=ANY_ORIGIN)


@router.post("/{session_id}/control", summary="A new control token for the presenter's player",
             responses={403: {"description": "Another person presents"}, 404: {"description": "No such session"}})
async def control(request: Request, session_id: str, caller: CallerOf, svc: ServicesOf,
                  presenter: Annotated[str | None, Query(max_length=200)] = None) -> JSONResponse:
    headers = await admitted(request, caller, "create")
    token = await call_service(request, svc.live.control, session_id, caller.project, _person(caller, presenter))
    watch_of(request).posted(session_id)
    return JSONResponse({"control_token": token}, headers=headers)


@router.post("/{session_id}/handover", summary="Hand the session to another presenter",
             responses={403: {"description": "Not the presenter"}, 404: {"description": "No such session"},
                        413: {"description": "Too large"}, 415: {"description": "Not JSON"}})
async def hand_over(request: Request, session_id: str, caller: CallerOf, svc: ServicesOf,
                    presenter: Annotated[str | None, Query(max_length=200)] = None) -> JSONResponse:
    headers = await admitted(request, caller, "create")
    body = await read_json_body(request, BODY_MAX_BYTES)
    to = body.get("to") if isinstance(body, dict) else None
    session = await call_service(request, svc.live.hand_over, session_id, caller.project, _person(caller, presenter),
                                 to.strip() if isinstance(to, str) else "")
    watch_of(request).posted(session_id)
    return JSONResponse(session.as_dict(), headers=headers)


@router.post("/{session_id}/end", summary="End a live session", responses={404: {"description": "No such session"}})
async def end(request: Request, session_id: str, caller: CallerOf, svc: ServicesOf) -> JSONResponse:
    headers = await admitted(request, caller, "create")
    await call_service(request, svc.live.end, session_id, caller.project)
    watch_of(request).posted(session_id)
    return JSONResponse({"id": session_id, "ended": True}, headers=headers)
