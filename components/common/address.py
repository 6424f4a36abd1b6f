"""A page's view in its address, for what Streamlit's `bind="query-params"` cannot hold: values that
are ids where the widget shows labels (a batch, the versions compared). `from_address` takes the
parameter once per session and page address, before the widget is drawn; `to_address` writes the
widget's value back after it, or removes the parameter at the default."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import streamlit as st

_TAKEN = "address.taken.{}"  # the parameter's value last taken into the widget


def from_address(key: str, param: str, parse: Callable[[str], Any]) -> None:
    """Set the widget `key` from `?param=` when the address holds a value not taken yet (a link opened,
    or typed); `parse` returns the widget's value, or None for one that means nothing here (ignored)."""
    raw = st.query_params.get(param)
    if raw is None or st.session_state.get(_TAKEN.format(param)) == raw:
        return
    st.session_state[_TAKEN.format(param)] = raw
    value = parse(raw)
    if value is not None:
        st.session_state[key] = value


def to_address(param: str, value: str | None) -> None:
    """Write `?param=value` (remove it for None), remembered as taken so it is not read back as a link."""
    if value is None:
        st.query_params.pop(param, None)
    elif st.query_params.get(param) != value:
        st.query_params[param] = value
    st.session_state[_TAKEN.format(param)] = value
