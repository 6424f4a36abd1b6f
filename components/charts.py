"""Charts of the listing: tasks by status over time, tokens by model (altair).

The frames are built by pure functions (tested without a browser); `render` fetches the most
recent tasks under the current filters (up to 500, one page of the list endpoint) and draws both.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import tzinfo

import altair as alt
import pandas as pd
import streamlit as st

from dailies.client import APIError, Client
from dailies.spec import limits as L
from dailies.spec.models import TaskRecord

from .task_filters import TaskFilters
from .task_rows import local_time, tokens

STATUS_ORDER = ["queued", "running", "succeeded", "failed", "cancelled", "expired"]
STATUS_COLOURS = ["#8c8c8c", "#4c9be8", "#3fb950", "#f85149", "#6e7681", "#d29922"]
# Up to two days of tasks read best per hour; beyond that, per day.
HOURLY_SPAN_MAX_S = 2 * L.DAY


def bucket_size(records: Iterable[TaskRecord]) -> str:
    """'h' when the tasks span two days or less, else 'D' (a pandas frequency)."""
    times = [r.created_at for r in records if r.created_at is not None]
    if not times:
        return "h"
    return "h" if max(times) - min(times) <= HOURLY_SPAN_MAX_S else "D"


def status_over_time(records: list[TaskRecord], tz: tzinfo) -> pd.DataFrame:
    """Columns: bucket (start of the hour or day, local time), status, tasks."""
    freq = bucket_size(records)
    rows = [{"bucket": local_time(r.created_at, tz), "status": r.status} for r in records if r.created_at is not None]
    if not rows:
        return pd.DataFrame(columns=["bucket", "status", "tasks"])
    frame = pd.DataFrame(rows)
    frame["bucket"] = pd.to_datetime(frame["bucket"]).dt.floor(freq)
    counted = frame.groupby(["bucket", "status"]).size().reset_index(name="tasks")
    return counted.sort_values(["bucket", "status"]).reset_index(drop=True)


def tokens_by_model(records: list[TaskRecord]) -> pd.DataFrame:
    """Columns: model, tokens (sum over tasks that report usage), tasks; most tokens first."""
    rows = [{"model": r.model or "?", "tokens": tokens(r)} for r in records if tokens(r) is not None]
    if not rows:
        return pd.DataFrame(columns=["model", "tokens", "tasks"])
    frame = pd.DataFrame(rows).groupby("model").agg(tokens=("tokens", "sum"), tasks=("tokens", "size"))
    return frame.reset_index().sort_values("tokens", ascending=False).reset_index(drop=True)


def status_chart(frame: pd.DataFrame, freq: str) -> alt.Chart:
    """Stacked bars, one per hour (or day) that has tasks. The buckets are categories, not a time
    axis, so a lone busy hour is a bar people can see rather than a hairline."""
    unit = "hour" if freq == "h" else "day"
    label = "%d %b %H:%M" if freq == "h" else "%d %b"
    frame = frame.assign(when=frame["bucket"].dt.strftime(label))
    order = list(dict.fromkeys(frame.sort_values("bucket")["when"]))
    return alt.Chart(frame).mark_bar().encode(
        x=alt.X("when:O", title=f"created (per {unit})", sort=order, axis=alt.Axis(labelAngle=0)),
        y=alt.Y("sum(tasks):Q", title="tasks", stack="zero"),
        color=alt.Color("status:N", scale=alt.Scale(domain=STATUS_ORDER, range=STATUS_COLOURS), title="status"),
        order=alt.Order("status_rank:Q"),
        tooltip=[alt.Tooltip("when:O", title="from"), "status:N", "tasks:Q"],
    ).transform_calculate(
        status_rank=f"indexof({STATUS_ORDER!r}, datum.status)",
    ).properties(height=260)


def tokens_chart(frame: pd.DataFrame) -> alt.Chart:
    return alt.Chart(frame).mark_bar().encode(
        x=alt.X("tokens:Q", title="tokens"),
        y=alt.Y("model:N", sort="-x", title=None, axis=alt.Axis(labelLimit=320)),
        tooltip=["model:N", alt.Tooltip("tokens:Q", format=","), "tasks:Q"],
    ).properties(height=max(120, 40 * len(frame)))


@st.cache_data(ttl=10, show_spinner=False)
def _recent(_client: Client, connection_id: str, kwargs_key: tuple) -> list[dict]:
    # Cached briefly: the charts tab redraws on every page run, and 500 records is the largest page.
    # The cache is shared by every session of the dashboard, so it is keyed by the connection (base
    # URL + key fingerprint): the client itself is not part of the key (the leading underscore).
    page = _client.tasks.list(**dict(kwargs_key))
    return [r.model_dump(mode="json") for r in page.items]


def render(client: Client, connection_id: str, filters: TaskFilters, tz: tzinfo) -> None:
    """Both charts for the most recent tasks matching the filters (paging aside). `connection_id`
    names the client's connection (`Connection.cache_id`)."""
    query = filters.without_paging().list_kwargs()
    query["task_ids"] = tuple(query["task_ids"]) if query["task_ids"] else None
    try:
        records = [TaskRecord.model_validate(r) for r in _recent(client, connection_id, tuple(query.items()))]
    except APIError as exc:
        st.error(f"Could not list tasks for the charts: {exc}")
        return
    if not records:
        st.info("No tasks to chart under these filters.")
        return
    st.caption(f"The {len(records)} most recent task(s) matching the filters (page size {L.PAGE_SIZE_MAX}), "
               f"{filters.service_tier} tier.")
    left, right = st.columns(2, gap="large")
    with left:
        st.markdown("**Tasks by status over time**")
        st.altair_chart(status_chart(status_over_time(records, tz), bucket_size(records)), width="stretch")
    with right:
        st.markdown("**Tokens by model**")
        by_model = tokens_by_model(records)
        if by_model.empty:
            st.caption("No succeeded tasks yet: tokens are reported on success.")
        else:
            st.altair_chart(tokens_chart(by_model), width="stretch")
