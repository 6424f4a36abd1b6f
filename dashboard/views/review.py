"""Review: succeeded results in a grid with approve / reject, stars and notes, and side-by-side comparison.

`?task=cgt-...` opens one result alone. Kept results stay here after the service forgets them.
Verdicts and kept results belong to the connection (service + key), so the page needs a key like the others.
"""

from __future__ import annotations

import streamlit as st

from components import connection, review_panel, task_table

st.header("Review")
client = connection.require_client()
review_panel.render(client, connection.journal(), task_table.browser_timezone())
