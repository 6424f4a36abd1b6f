"""The unread count beside "Inbox" in the navigation: every page's run draws the navigation, so the
count is kept for each person of each project, for every session of this process, at most
UNREAD_MAX_AGE_S old (another dashboard process sees news within that too); 0 rather than an error
where no journal can be opened."""

from __future__ import annotations

import logging
import threading
import time

from components.common import connection
from components.common.mention_box import service_members

UNREAD_MAX_AGE_S = 30
log = logging.getLogger(__name__)
_counts: dict[tuple[str, str], tuple[float, int]] = {}
_lock = threading.Lock()


def unread_count() -> int:
    try:
        journal = connection.journal_if_known()
        if journal is None:
            return 0
        key = (journal.scope.name if journal.scope is not None else "", journal.author)
        with _lock:
            at, count = _counts.get(key, (float("-inf"), 0))
        if time.monotonic() - at < UNREAD_MAX_AGE_S:
            return count
        count = journal.unread(journal.author, members=service_members())
    except Exception:  # the navigation is drawn whatever the journal says; the page itself reports
        log.exception("the inbox's unread count could not be read")
        return 0
    with _lock:
        _counts[key] = (time.monotonic(), count)
    return count


def forget(scope: str, person: str) -> None:
    """Count again on the next run (the person marked something read)."""
    with _lock:
        _counts.pop((scope, person), None)
