"""Guest grants: what a share's page may tell of without a key.

A member's dashboard asks for one when it shares versions (`POST /dailies/v1/notifications/guest-grants`)
and keeps it with the share, on the dashboard's server, never in a guest's browser. The share's page then
tells of a guest's comment or status with it as its bearer (`POST .../guest-events`): of those versions
only, in that project only, signed as a guest, until it expires. Nothing is stored: the grant carries
its project, versions and expiry, signed with the secret that signs result URLs (a message no URL path
can be: a path starts with "/")."""

from __future__ import annotations

import base64
import binascii
import json
from dataclasses import dataclass

from dailies.service.storage.signing import UrlSigner

PREFIX = "dgg1."
MAX_CHARS = 32_000  # 200 task ids of 200 characters, encoded, and the signature


@dataclass(frozen=True)
class GuestGrant:
    project: str
    granted_by: str  # the member whose key asked for it ('' for a key without a member name)
    task_ids: frozenset[str]
    expires_at: int


def is_grant(token: str) -> bool:
    return token.startswith(PREFIX)


def issue(signer: UrlSigner, project: str, granted_by: str, task_ids: tuple[str, ...], expires_at: int) -> str:
    payload = json.dumps({"p": project, "m": granted_by, "t": list(task_ids)}, separators=(",", ":"))
    body = base64.urlsafe_b64encode(payload.encode()).decode().rstrip("=")
    return f"{PREFIX}{body}.{expires_at}.{signer.signature(_message(body), expires_at)}"


def read(signer: UrlSigner, token: str, now: float) -> GuestGrant | None:
    """The grant, or None for anything that is not one of ours, still good."""
    if not is_grant(token) or len(token) > MAX_CHARS:
        return None
    body, _, rest = token[len(PREFIX):].partition(".")
    expires_text, _, signature = rest.partition(".")
    if not expires_text.isdigit() or not signer.verify(_message(body), int(expires_text), signature):
        return None
    expires_at = int(expires_text)
    if now >= expires_at:
        return None
    try:
        fields = json.loads(base64.urlsafe_b64decode(body + "=" * (-len(body) % 4)))
    except (binascii.Error, UnicodeDecodeError, ValueError):
        return None  # signed by us, so not reached; read defensively all the same
    return GuestGrant(fields["p"], fields["m"], frozenset(fields["t"]), expires_at)


def _message(body: str) -> str:
    return f"guest-grant {body}"
