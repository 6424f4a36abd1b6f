"""The Inbox page's list: what needs the person, newest first; each item opens its version on Review (at
its frame) and is marked read by opening it or by its ✓; "Mark all read" reads everything so far."""

from __future__ import annotations

import time
from datetime import tzinfo

import streamlit as st

from components.common import actions, pages
from components.common.markdown_text import markdown_text
from components.common.mention_box import service_members
from components.common.records import format_time
from components.inbox import unread
from components.inbox.state_keys import ALL_READ_KEY, OPEN_KEY, READ_KEY, SHOW_KEY
from components.inbox.wording import ICONS, excerpt, headline
from dailies.journal import InboxItem, Journal

SHOW = ("Unread", "All")


def render(journal: Journal, tz: tzinfo) -> None:
    person = journal.author
    items = journal.inbox(person, members=service_members())
    waiting = sum(not item.read for item in items)
    with st.container(horizontal=True, vertical_alignment="center", gap="small"):
        show = st.segmented_control("Show", SHOW, default="Unread", key=SHOW_KEY,
                                    label_visibility="collapsed") or "Unread"
        st.caption(f"{waiting} unread of {len(items)} in the last 30 days, for **{markdown_text(person)}**")
        if waiting:
            actions.button("Mark all read", icon=":material/done_all:", key=ALL_READ_KEY, type="tertiary",
                           on_click=_mark_all_read, args=(journal, person))
    shown = [item for item in items if show == "All" or not item.read]
    if not shown:
        st.info("Nothing waiting for you. Mentions (@your name), replies to your comments, notes and statuses on "
                "your versions, and your versions' ends arrive here.", icon=":material/inbox:")
        return
    submissions = journal.submissions([item.task_id for item in shown])
    for item in shown:
        _item(journal, person, item, submissions.get(item.task_id), tz)


def _item(journal: Journal, person: str, item: InboxItem, submission, tz: tzinfo) -> None:
    with st.container(border=True, horizontal=True, vertical_alignment="center", gap="small"):
        with st.container(gap=None):
            weight = "**" if not item.read else ""
            st.markdown(f"{weight}{markdown_text(headline(item))}{weight} · {format_time(item.at, tz)}",
                        help=item.task_id)
            words = excerpt(item)
            if words:
                st.markdown(markdown_text(words))
            prompt = submission.prompt if submission is not None else ""
            st.caption(markdown_text(" ".join(prompt.split())[:120]) if prompt else item.task_id)
        with st.container(horizontal=True, width="content", gap="xsmall"):
            if st.button("Open", icon=ICONS[item.kind], key=OPEN_KEY.format(item.id), type="secondary"):
                journal.mark_read(person, [item.id])
                unread.forget()
                query = {"task": item.task_id} | ({"frame": str(item.frame)} if item.frame is not None else {})
                if not pages.switch_to(pages.REVIEW, query):  # the page alone, without the router
                    pages.link(pages.REVIEW, "Open on Review", query=query)
            if not item.read:
                actions.button("✓", key=READ_KEY.format(item.id), type="tertiary", help="Mark read",
                               on_click=_mark_read, args=(journal, person, item.id))


def _mark_read(journal: Journal, person: str, item_id: str) -> None:
    journal.mark_read(person, [item_id])
    unread.forget()


def _mark_all_read(journal: Journal, person: str) -> None:
    journal.mark_all_read(person, time.time())
    unread.forget()
