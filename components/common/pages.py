"""The dashboard's pages, registered once: the router (dashboard/app.py) builds its navigation from
this list, and every link to a page, or switch to it, goes through here.

A page module can also run on its own, without the router (`streamlit run dashboard/views/tasks.py`,
or an AppTest of one view). Streamlit then knows no other page: a link becomes a plain link to the
page's address, and a switch tells its caller it did not happen, so the caller can say where to go.
"""

from __future__ import annotations

import runpy
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlencode, urlsplit

import streamlit as st
from streamlit.errors import StreamlitAPIException


@dataclass(frozen=True)
class DashboardPage:
    script: str  # relative to dashboard/app.py, as st.Page and st.page_link take it
    title: str
    icon: str
    url_path: str  # the address below the dashboard's root; "" for the default page

    @property
    def is_default(self) -> bool:
        return self.url_path == ""

    def address(self, query: Mapping[str, str] | None = None) -> str:
        """'/tasks?task=cgt-...': where the page answers, with the router or without it."""
        return f"/{self.url_path}" + (f"?{urlencode(query)}" if query else "")


# The pages live in views/, not pages/: Streamlit treats a pages/ folder beside the entry point as
# its legacy multipage app, which answers deep links such as /tasks?task=... before st.navigation
# has run once. Material icons ship with Streamlit, so they show where no emoji font is installed.
COMPOSE = DashboardPage("views/compose.py", "Compose", ":material/edit_note:", "")
TASKS = DashboardPage("views/tasks.py", "Tasks", ":material/view_list:", "tasks")
REVIEW = DashboardPage("views/review.py", "Review", ":material/star:", "review")
INBOX = DashboardPage("views/inbox.py", "Inbox", ":material/inbox:", "inbox")
LIVE = DashboardPage("views/live.py", "Live", ":material/cast:", "live")
SETTINGS = DashboardPage("views/settings.py", "Settings", ":material/settings:", "settings")
ALL = (COMPOSE, TASKS, REVIEW, LIVE, INBOX, SETTINGS)
# A share link's guest review (views/guest.py): the only page of an address with `?share=`, none otherwise.
GUEST = DashboardPage("views/guest.py", "Shared review", ":material/share:", "guest")
SHARE_PARAM = "share"
# A live session's link for someone without a key (views/live.py follows it): that page alone.
FOLLOW_PARAM = "follow"


def is_guest_request() -> bool:
    """The address is a share link's: this session is a guest's and sees the guest page alone."""
    return SHARE_PARAM in st.query_params


def is_follow_request() -> bool:
    """The address is a live session's link: this session follows it and sees the Live page alone."""
    return FOLLOW_PARAM in st.query_params and not is_guest_request()


def _guest_at_root() -> None:
    runpy.run_path(str(Path(__file__).resolve().parents[2] / "dashboard" / GUEST.script), run_name="__main__")


def _live_at_root() -> None:
    runpy.run_path(str(Path(__file__).resolve().parents[2] / "dashboard" / LIVE.script), run_name="__main__")


def dashboard_root() -> str:
    """This dashboard's address as the browser used it (st.context.url), without the page: '' unknown."""
    try:
        url = st.context.url or ""
    except Exception:  # no browser session (a script run from a test harness)
        return ""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        return ""
    path = parts.path.rstrip("/")
    last = path.rsplit("/", 1)[-1]
    if last in {page.url_path for page in (*ALL, GUEST) if page.url_path}:
        path = path[: -len(last) - 1]
    return f"{parts.scheme}://{parts.netloc}{path}"


def navigation_pages(unread: int = 0) -> list[st.Page]:
    """The router's pages, in the sidebar's order (Inbox with its `unread` count); a share link's address
    gets the guest page alone."""
    if is_guest_request():
        # The guest page at /guest; the app's root (the default page, which every unknown address
        # falls back to) shows it too, so no address with `?share=` reaches another page.
        return [st.Page(_guest_at_root, title=GUEST.title, icon=GUEST.icon, default=True),
                st.Page(GUEST.script, title=GUEST.title, icon=GUEST.icon, url_path=GUEST.url_path)]
    if is_follow_request():
        return [st.Page(_live_at_root, title=LIVE.title, icon=LIVE.icon, default=True),
                st.Page(LIVE.script, title=LIVE.title, icon=LIVE.icon, url_path=LIVE.url_path)]
    return [st.Page(page.script, title=nav_title(page, unread), icon=page.icon, default=page.is_default,
                    url_path=None if page.is_default else page.url_path) for page in ALL]


def nav_title(page: DashboardPage, unread: int = 0) -> str:
    """A page's name in the navigation: the Inbox with its unread count, when there is any."""
    return f"{page.title} ({unread})" if page is INBOX and unread > 0 else page.title


def link(page: DashboardPage, label: str, icon: str | None = None, query: Mapping[str, str] | None = None,
         help: str | None = None) -> None:
    """A link to `page` (with `?query`), kept in this session under the router, plain without it."""
    try:
        st.page_link(page.script, label=label, icon=icon, query_params=dict(query) if query else None, help=help)
    except StreamlitAPIException:  # no router: Streamlit cannot resolve the page
        st.markdown(f"{icon + ' ' if icon else ''}[{label}]({page.address(query)})", help=help)


def switch_to(page: DashboardPage, query: Mapping[str, str] | None = None) -> bool:
    """Open `page` (with `?query`; this run ends there); False when the page runs without the router and
    cannot."""
    try:
        st.switch_page(page.script, query_params=dict(query) if query else None)
    except StreamlitAPIException:
        return False
    return True  # not reached: st.switch_page ends the run
