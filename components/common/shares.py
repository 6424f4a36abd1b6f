"""Whether this dashboard may hand out share links, and the address they start with: Review's share
panel makes links, the guest page refuses to be more than a share on a dashboard where guests would
not stay guests."""

from __future__ import annotations

from urllib.parse import urlsplit

import streamlit as st

from components.common import signin
from components.common.connection import team_mode
from dailies.config import current


def public_url() -> str:
    """The dashboard's address for links: DAILIES_DASHBOARD_URL, else the address this browser used
    (`st.context.url`, Streamlit 1.45+: the page's full URL; its scheme and host, plus
    `server.baseUrlPath` when the dashboard is served below a path)."""
    configured = current().dailies_dashboard_url.strip()
    if configured:
        return configured.rstrip("/")
    parts = urlsplit(st.context.url or "")
    base_path = (st.get_option("server.baseUrlPath") or "").strip("/")
    root = f"{parts.scheme}://{parts.netloc}" if parts.scheme and parts.netloc else "http://localhost:8501"
    return root + (f"/{base_path}" if base_path else "")


def guests_stay_guests() -> bool:
    """Whether a guest given a link to this dashboard gets the share alone. A dashboard without team
    mode or sign-in hands its own key to whoever opens it: a guest who drops `?share=` from the
    address (or opens the dashboard's address) would have every page with that key."""
    return team_mode() or signin.configured()


NO_SHARES_HERE = ("This dashboard has no sign-in and is not in team mode, so it gives its own key to whoever "
                  "opens it: a guest sent a link to it could drop `?share=` from the address and use every page. "
                  "To share from here: stop Dailies (Ctrl-C) and start it again with `make up-team` (or "
                  "`dailies up --team`); your work stays. Then paste your key in **Settings** (`dailies keys "
                  "--show` prints it) and come back: this panel makes links that reach the shared versions "
                  "alone. A dashboard whose visitors sign in makes them too (README: Sign-in).")
