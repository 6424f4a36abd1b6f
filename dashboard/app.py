"""Dailies dashboard: the entry point and router. Run with `dailies up` (service + dashboard)
or `streamlit run dashboard/app.py` against ARK_BASE_URL / ARK_API_KEY."""

from __future__ import annotations

import streamlit as st

st.set_page_config(page_title="Dailies", page_icon="🎬", layout="wide")

pages = [
    st.Page("pages/compose.py", title="Compose", icon="✍️", default=True),
    st.Page("pages/tasks.py", title="Tasks", icon="📋"),
    st.Page("pages/review.py", title="Review", icon="⭐"),
    st.Page("pages/settings.py", title="Settings", icon="⚙️"),
]
navigation = st.navigation(pages)
navigation.run()
