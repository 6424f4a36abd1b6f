"""Live: review together behind a presenter. Members start a session on finished versions and follow
one from its address; anyone holding a session's link follows it without a key (a guest); the players
follow the presenter's in the browser (components/common/live_sync.py)."""

from __future__ import annotations

import streamlit as st

from components.common import connection, data, pages
from components.live import panel
from dailies.client import DailiesError
from dailies.spec.statuses import TaskStatus

st.header("Live review")
session_id = st.query_params.get("session")
follow_token = st.query_params.get(pages.FOLLOW_PARAM)
if session_id and follow_token:
    panel.guest_session(session_id, follow_token)
    st.stop()
client = connection.require_client()
journal = connection.journal()
person = journal.author
if session_id:
    people = panel.people_of(client, connection.current().cache_id, journal)
    panel.member_session(client, session_id, person, people)
else:
    try:
        recent = list(data.list_tasks(max_age=15, status=TaskStatus.SUCCEEDED, page_size=panel.RECENT).items)
    except DailiesError:
        recent = []
    panel.lobby(client, connection.current().cache_id, journal, person, recent)
