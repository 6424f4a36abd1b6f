"""The callback delivery log of one task: `client.tasks.callbacks`, an endpoint of the local service
beyond the specification. The real service has no such endpoint (404), so its absence is a normal
answer, not an error."""

from __future__ import annotations

from datetime import tzinfo

import pandas as pd
import streamlit as st

from components.common.records import local_time
from dailies.client import APIError, Client, NotFoundError
from dailies.spec.models import CallbackAttempt

COLUMNS = ["attempt", "time", "status reported", "status code", "latency ms", "error"]


def log_frame(attempts: list[CallbackAttempt], tz: tzinfo) -> pd.DataFrame:
    """One row per attempt: what was reported, when, and how the receiver answered."""
    rows = [{
        "attempt": a.attempt,
        "time": local_time(a.at, tz),
        "status reported": a.status,
        "status code": a.status_code,
        "latency ms": a.latency_ms,
        "error": a.error or ("pending" if a.pending else ""),
    } for a in attempts]
    return pd.DataFrame(rows, columns=COLUMNS).astype({"status code": "Int64"})


def render(client: Client, task_id: str, tz: tzinfo) -> None:
    """The log as a table, or a sentence saying why there is none."""
    try:
        attempts = client.tasks.callbacks(task_id).items
    except NotFoundError:
        st.caption("No callback delivery log for this task here: the local Dailies service keeps one while it has "
                   "the task; the real service has no such endpoint.")
        return
    except APIError as exc:
        st.warning(f"Could not read the callback delivery log: {exc}")
        return
    if not attempts:
        st.caption("No callbacks: the task was created without `callback_url`, or none is due yet.")
        return
    st.dataframe(log_frame(attempts, tz), hide_index=True, width="stretch",
                 column_config={"time": st.column_config.DatetimeColumn("time", format="D MMM HH:mm:ss")})
