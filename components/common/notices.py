"""Telling the service of a comment or a status change, for its notifications out
(`POST /dailies/v1/notifications/events`, or a guest's with their share's grant, `.../guest-events`):
sent in the background (components/common/notice_outbox.py: in order, asked again while the service
does not answer), so a comment never waits on it or fails for it; a connection whose service has no
notifications (the real Ark) is not asked again."""

from __future__ import annotations

from typing import Any

from components.common import connection, outbound, pages
from components.common.notice_outbox import NoticeOutbox
from dailies.client import Client
from dailies.journal.shares import Share

OUTBOX = NoticeOutbox()


def tell(notice: dict[str, Any]) -> None:
    """Send `notice` (Journal.comment_notice / status_notice) for this session's connection, if it has a service."""
    client = connection.client()
    if client is None:
        return
    told = with_link(notice)
    OUTBOX.put(connection.current().cache_id, lambda: client.notify(told), _what(notice))


def tell_as_guest(share: Share, notice: dict[str, Any]) -> None:
    """A guest's comment or status on `share`, told with its grant (a share without one tells no one).
    The grant is a credential of the share's: sent from this server to the share's service only."""
    if not share.notice_grant:
        return
    told, guarded = with_link(notice), connection.shared()

    def send() -> None:  # a client per try: closing one closes its transport
        with Client(base_url=share.scope_base_url, api_key=share.notice_grant or "", timeout=30, max_retries=2,
                    transport=outbound.transport_for(share.scope_base_url, guarded)) as client:
            client.notify_as_guest(told)

    OUTBOX.put(f"share {share.id}", send, f"a guest's {_what(notice)} (share {share.id})")


def with_link(notice: dict[str, Any]) -> dict[str, Any]:
    link = review_link(notice["task_id"])
    return {**notice, **({"link": link} if link else {})}


def _what(notice: dict[str, Any]) -> str:
    return f"a {notice.get('kind')} on {notice.get('task_id')}"


def review_link(task_id: str) -> str:
    """The version on this dashboard's Review, from the address the browser used."""
    root = pages.dashboard_root()
    return f"{root}{pages.REVIEW.address({'task': task_id})}" if root else ""


def wait_for_sends(timeout: float = 10.0) -> None:
    """Until what was handed over has been tried (tests)."""
    if not OUTBOX.settled(timeout):
        raise TimeoutError(f"notices still on their first try after {timeout} s")
