"""Passing work from one page to another: Tasks and Review send a request (or an input) to
Compose, which opens with it filled in.

The contract, kept here so both sides agree:
- `send_to_compose(request=..., note=...)`: Compose loads the whole request (mode, model,
  prompt, inputs, parameters) as the starting point (rerun or edit; a draft's final).
- `send_input_to_compose(url=..., kind=..., role=..., note=...)`: Compose keeps its current form
  and adds this input (a previous task's video or last frame, to chain shots).
Compose calls `take()` once per run and clears it, so a prefill is applied exactly once.

Both sends then open Compose. Where the page runs without the router there is no Compose to open:
the hand-off still waits in the session, and they return False so the caller can say so.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from . import pages

PREFILL_KEY = "compose.prefill"


def send_to_compose(request: dict[str, Any], note: str = "") -> bool:
    st.session_state[PREFILL_KEY] = {"request": request, "note": note}
    return pages.switch_to(pages.COMPOSE)


def send_input_to_compose(url: str, kind: str, role: str, note: str = "") -> bool:
    st.session_state[PREFILL_KEY] = {"input": {"url": url, "kind": kind, "role": role}, "note": note}
    return pages.switch_to(pages.COMPOSE)


def take() -> dict[str, Any] | None:
    return st.session_state.pop(PREFILL_KEY, None)
