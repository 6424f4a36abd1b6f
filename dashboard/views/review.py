"""Review: succeeded results in a grid with approve / reject, stars and notes, and side-by-side comparison.

`?task=cgt-...` opens one result alone. Kept results stay here after the service forgets them.
Verdicts and kept results belong to the connection (service + key), so the page needs a key like the others.
"""

from __future__ import annotations

import streamlit as st

from components.common import connection
from components.common.browser_timezone import browser_timezone
from components.review import panel as review_panel

st.header("Review")
client = connection.require_client()
review_panel.render(client, connection.journal(), browser_timezone())
