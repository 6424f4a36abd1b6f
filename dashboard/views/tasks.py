"""Tasks: what is running, what failed, what is about to disappear; one task in full below the table.

`?task=cgt-...` opens that task's detail (a link to share, or from the Review page).
"""

from __future__ import annotations

import streamlit as st

from components import charts, connection, keep, task_detail, task_filters, task_table

st.header("Tasks")
client = connection.require_client()
conn = connection.current()
journal = connection.journal()
tz = task_table.browser_timezone()

task_table.sync_deep_link()
filters = task_filters.render(journal)
keep.auto_keep_toggle(journal)

table_tab, charts_tab = st.tabs(["📋 Tasks", "📊 Charts"])
with table_tab:
    task_table.render(client, journal, filters)
    task_id = task_table.selected()
    if task_id:
        st.divider()
        task_detail.render(client, journal, conn, task_id, tz, on_close=task_table.close)
    task_table.mark_shown(task_id)
with charts_tab:
    charts.render(client, conn.cache_id, filters, tz)
