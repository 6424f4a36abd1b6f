"""Spend charts of the Tasks page's Charts tab: per model (of the listed tasks: what a Dailies
service's ledger charged each, `client.charges`; elsewhere their usage priced here), and per day and
per person (from a Dailies service's ledger, `client.spend()`; other services keep no ledger and the
tab says so). Frames by pure functions; altair imported when a chart is drawn."""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal
from typing import Any

import pandas as pd
import streamlit as st

from components.common import charges, connection, costs
from dailies.client import APIError, Client, NotFoundError
from dailies.spec.catalog import Region
from dailies.spec.models import SpendReport, TaskRecord
from dailies.spec.prices import Charge, NoPrice
from dailies.spec.statuses import TaskStatus

COLUMNS = ["key", "currency", "amount", "tasks"]


def spend_by_model(records: list[TaskRecord], lines: Mapping[str, Charge] | None = None,
                   bodies: Mapping[str, Mapping[str, Any]] | None = None,
                   region: Region | None = None) -> tuple[pd.DataFrame, int]:
    """(model, currency, amount, tasks) over what was spent, most spent first; and how many spent
    tasks have no price. A task with a ledger line (`lines`, a Dailies service's) counts what the
    ledger settled, in its currency, whatever its status (a task the upstream made but whose result
    could not be taken is charged); a held one is not spent yet. Any other counts when it succeeded,
    priced here from its usage, its request in `bodies` (the journal's) and the service's `region`."""
    lines, bodies = lines or {}, bodies or {}
    rows, unpriced = [], 0
    for record in records:
        key = record.model or "?"
        charge = lines.get(record.id)
        if charge is not None:
            if charge.state != "settled":
                continue
            if charge.currency is None:
                unpriced += 1
            else:
                rows.append({"key": key, "currency": charge.currency, "amount": float(charge.amount)})
            continue
        if record.status != TaskStatus.SUCCEEDED:
            continue
        result = costs.record_cost(record, bodies.get(record.id), region)
        if isinstance(result, NoPrice):
            unpriced += 1
            continue
        rows.append({"key": key, "currency": result.currency, "amount": float(result.amount)})
    return _summed(rows), unpriced


def spend_by(report: SpendReport, field: str) -> tuple[pd.DataFrame, int]:
    """(day or member, currency, amount, tasks) of the settled spend in a service's report; and how
    many tasks had no price."""
    rows, unpriced = [], 0
    for item in report.items:
        if item.state != "settled":
            continue
        if item.currency is None:
            unpriced += item.tasks
            continue
        key = getattr(item, field) or ("(no name)" if field == "member" else "?")
        rows += [{"key": key, "currency": item.currency, "amount": float(item.amount), "tasks": item.tasks}]
    return _summed(rows), unpriced


def _summed(rows: list[dict]) -> pd.DataFrame:
    if not rows:
        return pd.DataFrame(columns=COLUMNS)
    frame = pd.DataFrame(rows)
    if "tasks" not in frame:
        frame["tasks"] = 1
    summed = frame.groupby(["key", "currency"], as_index=False).agg(amount=("amount", "sum"), tasks=("tasks", "sum"))
    return summed.sort_values("amount", ascending=False).reset_index(drop=True)[COLUMNS]


def chart(frame: pd.DataFrame, title: str, sort_by_key: bool = False):
    import altair as alt

    frame = frame.assign(label=[costs.amount_text(Decimal(str(round(a, 6))), c)
                                for a, c in zip(frame["amount"], frame["currency"], strict=True)])
    return alt.Chart(frame).mark_bar().encode(
        x=alt.X("amount:Q", title="spent (list price)"),
        y=alt.Y("key:N", sort="ascending" if sort_by_key else "-x", title=title, axis=alt.Axis(labelLimit=320)),
        color=alt.Color("currency:N", title="currency"),
        tooltip=[alt.Tooltip("key:N", title=title), "currency:N", alt.Tooltip("label:N", title="spent"), "tasks:Q"],
    ).properties(height=max(120, 34 * len(frame)))


def _draw(frame: pd.DataFrame, unpriced: int, title: str, empty: str, sort_by_key: bool = False) -> None:
    if frame.empty:
        st.caption(empty)
    else:
        st.altair_chart(chart(frame, title, sort_by_key), width="stretch")
    if unpriced:
        st.caption(f"{unpriced} task(s) with no known price are not counted (never as 0).")


def _spend_by_model(records: list[TaskRecord], client: Client | None) -> tuple[pd.DataFrame, int]:
    """The listed tasks' spend per model: their ledger lines (one read for every line not settled
    yet; settled ones are kept), the rest priced here."""
    ids = [record.id for record in records]
    lines = charges.charges(client, connection.current().cache_id, ids) if client is not None else None
    lines = lines or {}
    rest = [task_id for task_id in ids if task_id not in lines]
    if not rest:
        return spend_by_model(records, lines)
    bodies = {task_id: s.request for task_id, s in connection.journal().submissions(rest).items()}
    return spend_by_model(records, lines, bodies, charges.billing_region(client))


def render(records: list[TaskRecord], client: Client | None) -> None:
    """Spend per model, and per day and per person where the service keeps a ledger."""
    by_model, unpriced = _spend_by_model(records, client)
    report = None
    if client is not None:
        try:
            report = client.spend()
        except NotFoundError:
            report = None  # not a Dailies service: no ledger, no members
        except APIError as exc:
            st.caption(f"The service's spend could not be read: {exc}")
    cols = st.columns(3 if report is not None else 1, gap="large")
    with cols[0]:
        st.markdown("**Spend by model**")
        _draw(by_model, unpriced, "model", "No succeeded task with a price among these.")
    if report is None:
        st.caption("Spend per day and per person come from a Dailies service's ledger; this service keeps none.")
        return
    with cols[1]:
        st.markdown("**Spend per day**")
        _draw(*spend_by(report, "day"), "day (UTC)", "Nothing spent yet.", sort_by_key=True)
    with cols[2]:
        st.markdown("**Spend per person**")
        _draw(*spend_by(report, "member"), "person", "Nothing spent yet.")
