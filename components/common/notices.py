"""Telling the service of a comment or a status change, for its notifications out
(`POST /dailies/v1/notifications/events`, or a guest's with their share's grant, `.../guest-events`):
sent in the background, so a comment never waits on it or fails for it; a connection whose service has
no notifications (the real Ark) is not asked again."""

from __future__ import annotations

import logging
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from components.common import connection, outbound, pages
from dailies.client import Client, DailiesError, UnsupportedEndpointError
from dailies.journal.shares import Share

log = logging.getLogger("dailies.dashboard.notices")
_unsupported: set[str] = set()
_lock = threading.Lock()
_senders = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dailies-notices")
_pending: list[Any] = []


def tell(notice: dict[str, Any]) -> None:
    """Send `notice` (Journal.comment_notice / status_notice) for this session's connection, if it has a service."""
    client = connection.client()
    cache_id = connection.current().cache_id
    if client is None or cache_id in _unsupported:
        return
    link = review_link(notice["task_id"])
    with _lock:
        _pending.append(_senders.submit(_send, client, cache_id, {**notice, **({"link": link} if link else {})}))
        _pending[:] = [f for f in _pending if not f.done()]


def tell_as_guest(share: Share, notice: dict[str, Any]) -> None:
    """A guest's comment or status on `share`, told with its grant (a share without one tells no one).
    The grant is a credential of the share's: sent from this server to the share's service only."""
    if not share.notice_grant:
        return
    link = review_link(notice["task_id"])
    with _lock:
        _pending.append(_senders.submit(_send_as_guest, share, {**notice, **({"link": link} if link else {})}))
        _pending[:] = [f for f in _pending if not f.done()]


def _send_as_guest(share: Share, notice: dict[str, Any]) -> None:
    base_url = share.scope_base_url
    try:
        with Client(base_url=base_url, api_key=share.notice_grant or "", timeout=30, max_retries=2,
                    transport=outbound.transport_for(base_url, connection.shared())) as client:
            client.notify_as_guest(notice)
    except DailiesError as exc:  # the comment is kept whatever the notifications do; said in the log
        log.warning("the service was not told of a guest's %s on %s (share %s): %s", notice.get("kind"),
                    notice.get("task_id"), share.id, exc)


def review_link(task_id: str) -> str:
    """The version on this dashboard's Review, from the address the browser used."""
    root = pages.dashboard_root()
    return f"{root}{pages.REVIEW.address({'task': task_id})}" if root else ""


def _send(client: Client, cache_id: str, notice: dict[str, Any]) -> None:
    try:
        client.notify(notice)
    except UnsupportedEndpointError:
        _unsupported.add(cache_id)
    except DailiesError as exc:  # the comment is kept whatever the notifications do; said in the log
        log.warning("the service was not told of a %s on %s: %s", notice.get("kind"), notice.get("task_id"), exc)


def wait_for_sends(timeout: float = 10.0) -> None:
    """Until what was handed over has been sent (tests)."""
    with _lock:
        pending = list(_pending)
    for future in pending:
        future.result(timeout)
