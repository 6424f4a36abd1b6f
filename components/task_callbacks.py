"""The callback delivery log of one task: `GET .../tasks/{id}/callbacks`, an endpoint of the local
service beyond the specification. The real service has no such endpoint (404), so its absence is
a normal answer, not an error."""

from __future__ import annotations

from datetime import tzinfo
from typing import Any
from urllib.parse import quote

import httpx
import pandas as pd
import streamlit as st

from .connection import Connection
from .task_rows import local_time


def fetch_log(conn: Connection, task_id: str, timeout: float = 10.0) -> list[dict[str, Any]] | None:
    """The delivery attempts, oldest first; None when the service has no log for it (404)."""
    url = f"{conn.base_url}/contents/generations/tasks/{quote(task_id, safe='')}/callbacks"
    response = httpx.get(url, headers={"Authorization": f"Bearer {conn.api_key}"}, timeout=timeout)
    if response.status_code == 404:
        return None
    response.raise_for_status()
    return list(response.json().get("items", []))


def log_frame(items: list[dict[str, Any]], tz: tzinfo) -> pd.DataFrame:
    """One row per attempt: what was reported, when, and how the receiver answered."""
    rows = [{
        "attempt": item.get("attempt"),
        "time": local_time(item.get("at"), tz),
        "status reported": item.get("status"),
        "status code": item.get("status_code"),
        "latency ms": item.get("latency_ms"),
        "error": item.get("error") or ("pending" if item.get("pending") else ""),
    } for item in items]
    frame = pd.DataFrame(rows, columns=["attempt", "time", "status reported", "status code", "latency ms", "error"])
    return frame.astype({"status code": "Int64"})


def render(conn: Connection, task_id: str, tz: tzinfo) -> None:
    """The log as a table, or a sentence saying why there is none."""
    try:
        items = fetch_log(conn, task_id)
    except httpx.HTTPError as exc:
        st.warning(f"Could not read the callback delivery log: {exc}")
        return
    if items is None:
        st.caption("No callback delivery log for this task here: the local Dailies service keeps one while it has "
                   "the task; the real service has no such endpoint.")
        return
    if not items:
        st.caption("No callbacks: the task was created without `callback_url`, or none is due yet.")
        return
    st.dataframe(log_frame(items, tz), hide_index=True, width="stretch",
                 column_config={"time": st.column_config.DatetimeColumn("time", format="D MMM HH:mm:ss")})
