"""Buttons whose action is not lost when the dashboard's process was restarted under an open page.

A page keeps its elements while it reconnects to a new process, and its next click starts a new
Streamlit session there, which knows no `on_click` of the old one: Streamlit skips the callback, and
the click did nothing (a comment's Post, a hand-over). These buttons give Streamlit the callback as
usual and also read their own value: clicked with no callback run, they run it themselves and the
page runs again, as the callback would have had it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

_RAN = "_dailies.action_ran.{}"


def _tracked(key: str, action: Callable[..., Any]) -> Callable[..., None]:
    def run(*args: Any) -> None:
        action(*args)
        # After: an action may start the session afresh (a new connection clears its state).
        st.session_state[_RAN.format(key)] = True
    return run


def _caught_up(clicked: bool, key: str, action: Callable[..., Any], args: tuple) -> bool:
    ran = st.session_state.pop(_RAN.format(key), False)
    if clicked and not ran:  # a new session: Streamlit had no callback to call
        action(*args)
        st.rerun()
    return clicked


def button(label: str, *, key: str, on_click: Callable[..., Any], args: tuple = (), where: Any = None,
           **options: Any) -> bool:
    """`st.button` (in `where`, a column or container, when given) whose `on_click` always runs once."""
    clicked = (where or st).button(label, key=key, on_click=_tracked(key, on_click), args=args, **options)
    return _caught_up(clicked, key, on_click, args)


def form_submit_button(label: str, *, key: str, on_click: Callable[..., Any], args: tuple = (),
                       **options: Any) -> bool:
    """`st.form_submit_button` whose `on_click` always runs once."""
    clicked = st.form_submit_button(label, key=key, on_click=_tracked(key, on_click), args=args, **options)
    return _caught_up(clicked, key, on_click, args)
