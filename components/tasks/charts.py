"""Charts of the listing: tasks by status over time, tokens by model (altair); spend below them
(spend_charts.py).

The frames are built by pure functions (tested without a browser); `render` fetches the most
recent tasks under the current filters (up to 500, one page of the list endpoint) and draws both.
Altair is imported when a chart is drawn, not with this module: it takes about half a second, and
the Tasks page only draws charts when their tab is open.
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import tzinfo
from typing import TYPE_CHECKING

import pandas as pd
import streamlit as st

from components.common import connection, data
from components.common.records import local_time, tokens
from components.tasks import spend_charts
from components.tasks.filters import TaskFilters
from dailies.client import APIError
from dailies.spec import limits as L
from dailies.spec.models import TaskRecord
from dailies.spec.statuses import TaskStatus

if TYPE_CHECKING:
    import altair as alt

STATUS_COLOURS: dict[TaskStatus, str] = {
    TaskStatus.QUEUED: "#8c8c8c",
    TaskStatus.RUNNING: "#4c9be8",
    TaskStatus.CANCELLED: "#6e7681",
    TaskStatus.SUCCEEDED: "#3fb950",
    TaskStatus.FAILED: "#f85149",
    TaskStatus.EXPIRED: "#d29922",
}
# Stacked and listed in the order of the statuses themselves.
STATUS_ORDER = [status.value for status in TaskStatus]
# Up to two days of tasks read best per hour; beyond that, per day.
HOURLY_SPAN_MAX_S = 2 * L.DAY
# The charts may lag the table by this much (a listing of up to 500 tasks is the largest read).
CHARTS_MAX_AGE_S = 10


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
    import altair as alt

    unit = "hour" if freq == "h" else "day"
    label = "%d %b %H:%M" if freq == "h" else "%d %b"
    frame = frame.assign(when=frame["bucket"].dt.strftime(label))
    order = list(dict.fromkeys(frame.sort_values("bucket")["when"]))
    colours = alt.Scale(domain=STATUS_ORDER, range=[STATUS_COLOURS[s] for s in TaskStatus])
    return alt.Chart(frame).mark_bar().encode(
        x=alt.X("when:O", title=f"created (per {unit})", sort=order, axis=alt.Axis(labelAngle=0)),
        y=alt.Y("sum(tasks):Q", title="tasks", stack="zero"),
        color=alt.Color("status:N", scale=colours, title="status"),
        order=alt.Order("status_rank:Q"),
        tooltip=[alt.Tooltip("when:O", title="from"), "status:N", "tasks:Q"],
    ).transform_calculate(
        status_rank=f"indexof({STATUS_ORDER!r}, datum.status)",
    ).properties(height=260)


def tokens_chart(frame: pd.DataFrame) -> alt.Chart:
    import altair as alt

    return alt.Chart(frame).mark_bar().encode(
        x=alt.X("tokens:Q", title="tokens"),
        y=alt.Y("model:N", sort="-x", title=None, axis=alt.Axis(labelLimit=320)),
        tooltip=["model:N", alt.Tooltip("tokens:Q", format=","), "tasks:Q"],
    ).properties(height=max(120, 40 * len(frame)))


def _recent(filters: TaskFilters) -> list[TaskRecord] | None:
    """The most recent tasks matching the filters (paging aside); None, said, when they cannot be read."""
    try:
        return list(data.list_tasks(max_age=CHARTS_MAX_AGE_S, **filters.without_paging().list_kwargs()).items)
    except APIError as exc:
        st.error(f"Could not list tasks for the charts: {exc}")
        return None


def render(filters: TaskFilters, tz: tzinfo) -> None:
    """Both charts for the most recent tasks matching the filters (paging aside)."""
    records = _recent(filters)
    if records is not None and not records:
        st.info("No tasks to chart under these filters.")
    if not records:
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
    spend_charts.render(records, connection.client())
