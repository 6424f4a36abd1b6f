"""A live session read for someone without a key: a guest holding the session's link. The dashboard's
server asks the service with the link's token alone, through the same guard as every outbound call of a
shared dashboard (components/common/outbound.py)."""

from __future__ import annotations

from urllib.parse import quote

import httpx

from components.common import connection, outbound
from dailies.spec.models import LiveSession

TIMEOUT_S = 15


class NotFollowable(Exception):
    """The link names no session this service has, or the service does not answer."""


def session_by_link(session_id: str, token: str) -> LiveSession:
    base = connection.current().base_url
    root = base.removesuffix("/").removesuffix("/api/v3")
    url = f"{root}/dailies/v1/live/{quote(session_id, safe='')}"
    try:
        with httpx.Client(transport=outbound.transport_for(base, connection.shared()), timeout=TIMEOUT_S) as http:
            answer = http.get(url, params={"token": token})
    except httpx.HTTPError as exc:
        raise NotFollowable(f"the service at {root} does not answer ({type(exc).__name__})") from None
    if answer.status_code != 200:
        raise NotFollowable("this link names no live session here (it ended long ago, or was mistyped)")
    return LiveSession.model_validate(answer.json())
