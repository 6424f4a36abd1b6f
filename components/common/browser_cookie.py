"""One cookie of the browser this session runs in: read from the session, written by a line of script.

Streamlit hands the app the cookies the browser sent when the session opened (`st.context.cookies`)
but gives it no way to answer with Set-Cookie; Streamlit's own `st.components.v2` runs a few lines
of JavaScript in the page instead, with no third-party component and nothing fetched from the
network. The values written here are opaque tokens (see `remembered_keys`), never keys.
"""

from __future__ import annotations

import streamlit as st

from components.common.state_keys import COOKIE_WRITER_KEY

_WRITE_JS = """
export default function (component) {
    const { data } = component;
    const secure = window.location.protocol === "https:" ? "; Secure" : "";
    document.cookie = `${data.name}=${data.value}; Path=/; Max-Age=${data.max_age}; SameSite=Strict${secure}`;
}
"""
_writer = st.components.v2.component("dailies.cookie_writer", js=_WRITE_JS)


def read(name: str) -> str | None:
    """The cookie's value as the browser sent it when this session opened, or None."""
    try:
        value = st.context.cookies.get(name)
    except Exception:  # no browser session (a bare script run): no cookies either
        return None
    # AppTest's session has no browser: its cookies are a stand-in object, not strings.
    return value if isinstance(value, str) else None


def write(name: str, value: str, max_age_s: int) -> None:
    """Set the cookie in this browser (every tab of it; no other browser). Takes no room on the page."""
    _writer(data={"name": name, "value": value, "max_age": int(max_age_s)}, key=COOKIE_WRITER_KEY.format(name),
            height=0)


def expire(name: str) -> None:
    """Delete the cookie from this browser."""
    write(name, "", 0)
