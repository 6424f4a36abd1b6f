"""Inbox: what needs the person signed in, in their project: mentions, replies, notes and statuses on
their versions, their versions' ends (dailies/journal/inbox.py); each opens the version on Review."""

from __future__ import annotations

import streamlit as st

from components.common import connection
from components.common.browser_timezone import browser_timezone
from components.inbox import panel

st.header("Inbox")
connection.require_client()
panel.render(connection.journal(), browser_timezone())
