"""The dashboard's server, as `dailies up` and `dailies dashboard` start it (`streamlit run
dashboard/server.py`): Streamlit serving the router (app.py) with the dashboard's middleware.
`streamlit run dashboard/app.py` runs the same pages without it."""

from __future__ import annotations

import streamlit as st
from starlette.middleware import Middleware

from components.common import pages
from dashboard.server_address import ServerAddressHint


def _base_url_path() -> str:
    return st.get_option("server.baseUrlPath") or ""


app = st.App("app.py", middleware=[
    Middleware(ServerAddressHint, page_paths=[page.url_path for page in (*pages.ALL, pages.GUEST)],
               base_url_path=_base_url_path),
])
