"""Dailies dashboard: the entry point and router. Run with `dailies up` (service + dashboard)
or `streamlit run dashboard/app.py` against ARK_BASE_URL / ARK_API_KEY."""

from __future__ import annotations

import streamlit as st

st.set_page_config(page_title="Dailies", page_icon="🎬", layout="wide")

# The pages live in views/, not pages/: Streamlit treats a pages/ folder beside the entry point as
# its legacy multipage app, which answers deep links such as /tasks?task=... before st.navigation
# has run once. Material icons ship with Streamlit, so they show where no emoji font is installed.
pages = [
    st.Page("views/compose.py", title="Compose", icon=":material/edit_note:", default=True),
    st.Page("views/tasks.py", title="Tasks", icon=":material/view_list:"),
    st.Page("views/review.py", title="Review", icon=":material/star:"),
    st.Page("views/settings.py", title="Settings", icon=":material/settings:"),
]
navigation = st.navigation(pages)
navigation.run()
