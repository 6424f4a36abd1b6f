"""The viewer's time zone, as their browser reports it: every page shows times in it."""

from __future__ import annotations

from datetime import tzinfo

import streamlit as st

from components.common.records import timezone


def browser_timezone() -> tzinfo:
    """The viewer's time zone as the browser reports it (UTC when it does not)."""
    try:
        return timezone(st.context.timezone)
    except Exception:  # st.context is unavailable outside a session; UTC is right then
        return timezone(None)
