"""Dailies dashboard: the router. Run with `dailies up` (service + dashboard), or `streamlit run
dashboard/server.py` (this router with the dashboard's middleware, as `dailies dashboard` starts it)
against ARK_BASE_URL / ARK_API_KEY; `streamlit run dashboard/app.py` runs the pages alone. The pages are listed in
components/common/pages.py, which the links between pages read too."""

from __future__ import annotations

import streamlit as st

from components.common import gc_tuning, pages, signin
from components.inbox import unread

st.set_page_config(page_title="Dailies", page_icon="🎬", layout="wide")
signin.require()  # where sign-in (OIDC) is set up: nothing but a sign-in button until signed in
# The person's unread inbox beside its page (never asked for a share link's guest, nor a live link's).
keyless = pages.is_guest_request() or pages.is_follow_request()
# A live link's follower has one page: no sidebar of pages to choose from.
st.navigation(pages.navigation_pages(0 if keyless else unread.unread_count()),
              position="hidden" if pages.is_follow_request() else "sidebar").run()
gc_tuning.freeze_imported_objects()  # after the page: the modules it imported are in
