"""Review: succeeded results in a grid with approve / reject, stars and notes, and side-by-side comparison.

`?task=cgt-...` opens one result alone. Kept results stay here after the service forgets them.
Verdicts and kept results belong to the connection (service + key), so the page needs a key like the others.
"""

from __future__ import annotations

import streamlit as st

from components.common import connection, identity, keep
from components.common.browser_timezone import browser_timezone
from components.review import panel as review_panel
from components.review.state_keys import NAME_KEY

st.header("Review")
client = connection.require_client()
journal = connection.journal()
if identity.is_unnamed(journal.author):
    # Asked here, where stars and comments are signed: "key df95cea8" tells the team nothing.
    st.text_input(f"Your name (you appear as “{journal.author}” to the others)", key=NAME_KEY, max_chars=60,
                  placeholder="shown on your statuses, stars and comments; Settings changes it later",
                  on_change=lambda: connection.rename_me(st.session_state[NAME_KEY]))
if not st.query_params.get("task"):  # the grid's option: "Open alone" shows that result and nothing else
    keep.auto_keep_toggle(journal)
review_panel.render(client, journal, browser_timezone())
