"""The unread count beside "Inbox" in the navigation: every page's run draws the navigation, so a
session counts at most once per UNREAD_MAX_AGE_S (a new session, a reload, counts at once: what a
person opens is never older than their last page); 0 rather than an error where no journal can be
opened."""

from __future__ import annotations

import logging
import time

import streamlit as st

from components.common import connection
from components.common.mention_box import service_members

UNREAD_MAX_AGE_S = 30
log = logging.getLogger(__name__)
COUNT_KEY = "inbox._unread"  # (scope, person, when, count)


def unread_count() -> int:
    try:
        journal = connection.journal_if_known()
        if journal is None:
            return 0
        key = (journal.scope.name if journal.scope is not None else "", journal.author)
        kept = st.session_state.get(COUNT_KEY)
        if kept and kept[:2] == key and time.monotonic() - kept[2] < UNREAD_MAX_AGE_S:
            return int(kept[3])
        count = journal.unread(journal.author, members=service_members())
    except Exception:  # the navigation is drawn whatever the journal says; the page itself reports
        log.exception("the inbox's unread count could not be read")
        return 0
    st.session_state[COUNT_KEY] = (*key, time.monotonic(), count)
    return count


def forget() -> None:
    """Count again on the next run (the person marked something read)."""
    st.session_state.pop(COUNT_KEY, None)
