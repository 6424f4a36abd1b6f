"""Passing work from one page to another: Tasks and Review send a request (or an input) to
Compose, which opens with it filled in.

The contract, kept here so both sides agree:
- `send_to_compose(request=..., note=...)`: Compose loads the whole request (mode, model,
  prompt, inputs, parameters) as the starting point (rerun or edit; a draft's final).
- `send_input_to_compose(url=..., kind=..., role=..., note=...)`: Compose keeps its current form
  and adds this input (a previous task's video or last frame, to chain shots).
Compose calls `take()` once per run and clears it, so a prefill is applied exactly once. A hand-off
may name the task it came from: the next submission from Compose is then a new version of that task's
shot (dailies.journal.shots).

Both sends then open Compose. Where the page runs without the router there is no Compose to open:
the hand-off still waits in the session, and they return False so the caller can say so.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from components.common import pages
from components.common.state_keys import PREFILL_KEY


def send_to_compose(request: dict[str, Any], note: str = "", parent: str | None = None,
                    how: str | None = None) -> bool:
    """`parent`: the task this one is a new version of (the shot it joins, `how`: "final", or None for a
    rerun or an edit, told apart at submission by whether the prompt changed)."""
    st.session_state[PREFILL_KEY] = {"request": request, "note": note, "lineage": _lineage(parent, how)}
    return pages.switch_to(pages.COMPOSE)


def send_input_to_compose(url: str, kind: str, role: str, note: str = "", parent: str | None = None) -> bool:
    """`parent`: the task whose output this input is (a chained shot joins its shot)."""
    st.session_state[PREFILL_KEY] = {"input": {"url": url, "kind": kind, "role": role}, "note": note,
                                     "lineage": _lineage(parent, "chain")}
    return pages.switch_to(pages.COMPOSE)


def _lineage(parent: str | None, how: str | None) -> dict[str, Any] | None:
    return {"parent": parent, "how": how} if parent else None


def take() -> dict[str, Any] | None:
    return st.session_state.pop(PREFILL_KEY, None)
