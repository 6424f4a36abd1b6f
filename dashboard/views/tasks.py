"""Tasks: what is running, what failed, what is about to disappear; one task in full above the table.

`?task=cgt-...` opens that task's detail (a link to share, or from the Review page). The charts
are drawn only while their tab is open.
"""

from __future__ import annotations

import streamlit as st

from components.common import connection, keep
from components.common.browser_timezone import browser_timezone
from components.tasks import charts
from components.tasks import detail as task_detail
from components.tasks import filters as task_filters
from components.tasks import table as task_table
from components.tasks.state_keys import VIEW_KEY

st.header("Tasks")
client = connection.require_client()
journal = connection.journal()
tz = browser_timezone()

task_table.sync_deep_link()
filters = task_filters.render(journal)
keep.auto_keep_toggle(journal)

table_tab, charts_tab = st.tabs(["📋 Tasks", "📊 Charts"], key=VIEW_KEY, on_change="rerun")


def detail(task_id: str | None) -> None:
    """The selected task in full, above the table (drawn by the table's fragment)."""
    if task_id:
        task_detail.render(client, journal, task_id, tz, on_close=task_table.close)
        st.divider()


if table_tab.open:
    with table_tab:
        task_table.render(client, journal, filters, detail=detail)
if charts_tab.open:
    with charts_tab:
        charts.render(filters, tz)
