"""The unread count beside "Inbox" in the navigation: asked at most twice a minute per session (every
page's run draws the navigation), and 0 rather than an error where no journal can be opened."""

from __future__ import annotations

import logging
import time

import streamlit as st

from components.common import connection
from components.inbox.state_keys import UNREAD_CACHE_KEY

UNREAD_MAX_AGE_S = 30
log = logging.getLogger(__name__)


def unread_count() -> int:
    try:
        journal = connection.journal_if_known()
        if journal is None:
            return 0
        person = journal.author
        cached = st.session_state.get(UNREAD_CACHE_KEY)
        if cached and cached[0] == person and time.monotonic() - cached[1] < UNREAD_MAX_AGE_S:
            return int(cached[2])
        count = journal.unread(person)
    except Exception:  # the navigation is drawn whatever the journal says; the page itself reports
        log.exception("the inbox's unread count could not be read")
        return 0
    st.session_state[UNREAD_CACHE_KEY] = (person, time.monotonic(), count)
    return count


def forget() -> None:
    """Read again on the next run (after the person marked something read)."""
    st.session_state.pop(UNREAD_CACHE_KEY, None)
