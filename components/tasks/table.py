"""The task table: one page of the list endpoint, refreshing itself while a row is queued or running,
and redrawn every IDLE_REDRAW_SECONDS otherwise, so its countdowns keep counting.

The table and the detail of the selected task above it live in one fragment
(`st.fragment(run_every=...)`): while any row of the page is queued or running it re-lists every
REFRESH_SECONDS without rerunning the page, so the filters above stay as they are, and a click on a
row is one run of the fragment, not of the page. A fragment's interval is fixed when the page runs,
so the page lists first and chooses it; when a refresh finds the page turned active or idle, or a
row changed status, the fragment asks for one full rerun: the charts and the interval then follow.

Listings come from `components.common.data`: a page run (and the fragment's run inside it) takes one at
most REFRESH_SECONDS old, so the full run that follows a click on a row does not list again; the
fragment's own refreshes (its timer while a row is active, the Refresh button) read anew. While no row
is active the timer only redraws: the countdowns (result link, record, deadline) and the player's
choice of a live URL follow the clock, from the listing this session drew last, without listing again
(an idle page changes only when someone acts: filters and creates here run the page, which lists).

Selection is a row position in Streamlit; rows move as new tasks arrive (newest first). The table
therefore remembers the selected task by id and re-selects its new row on every refresh.

The detail opens where a person looks after a click: under the summary line, above the table, in a
place the fragment makes before the table and fills once the table is drawn (the order of the work is
the table's, then the detail's, as before). The Refresh button leads the summary line, at the left: the
table's own toolbar (search, download, full screen) shows at its top right when the table is hovered.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable

import streamlit as st
from streamlit.delta_generator import DeltaGenerator

from components.common import actions, charges, connection, data, keep, thumbnails
from components.common.browser_timezone import browser_timezone
from components.common.stored_requests import stored_requests
from components.tasks.filters import TaskFilters
from components.tasks.rows import any_active, table_rows
from components.tasks.state_keys import (
    DEEP_LINK_KEY,
    IN_PAGE_RUN_KEY,
    LAST_LISTING_KEY,
    REFRESH_ASKED_KEY,
    REFRESH_KEY,
    RENDERED_IDS_KEY,
    SELECTED_KEY,
    SIGNATURE_KEY,
    TABLE_KEY,
)
from dailies.client import APIError, Client
from dailies.journal import Journal
from dailies.spec.models import ListTasksResponse

REFRESH_SECONDS = 3
# With no row queued or running: how often the countdowns are redrawn (a tab left open must not show
# a link as live after it has died), from the last listing.
IDLE_REDRAW_SECONDS = 30


def sync_deep_link() -> None:
    """Adopt a `?task=` that changed under us (a link opened, the address edited) as the selection."""
    query = st.query_params.get("task") or None
    if query != st.session_state.get(DEEP_LINK_KEY):
        st.session_state[DEEP_LINK_KEY] = query
        st.session_state[SELECTED_KEY] = query
        # The table's own selection must follow, or its stale row would win back on the next read.
        _pin_selection(st.session_state.get(RENDERED_IDS_KEY, []))


def select(task_id: str | None) -> None:
    """Show this task in the detail (None: close it), and put it in the address so the view can be shared."""
    st.session_state[SELECTED_KEY] = task_id
    st.session_state[DEEP_LINK_KEY] = task_id
    if task_id:
        st.query_params["task"] = task_id
    else:
        st.query_params.pop("task", None)


def close() -> None:
    """Close the detail: no selected task, no row selected, no `?task=` (a widget callback)."""
    select(None)
    _pin_selection(st.session_state.get(RENDERED_IDS_KEY, []))


def selected() -> str | None:
    return st.session_state.get(SELECTED_KEY)


def _user_pick(rendered_ids: list[str]) -> tuple[bool, str | None]:
    """(changed, id): the row the user has selected in the table as last drawn, if it differs from ours."""
    state = st.session_state.get(TABLE_KEY)
    rows = list(state["selection"]["rows"]) if state else []
    pick = rendered_ids[rows[0]] if rows and 0 <= rows[0] < len(rendered_ids) else None
    current = selected()
    if pick == current:
        return False, current
    # A selection that no longer maps to our id means the user clicked (or cleared) a row; but an
    # empty table selection while our task is off this page is just the table not showing it.
    if pick is None and current is not None and current not in rendered_ids:
        return False, current
    return True, pick


def _pin_selection(ids: list[str]) -> None:
    """Make the table's selected row the row of the selected task, wherever it moved to."""
    want = [ids.index(selected())] if selected() in ids else []
    state = st.session_state.get(TABLE_KEY)
    have = list(state["selection"]["rows"]) if state else []
    if have != want:
        st.session_state[TABLE_KEY] = {"selection": {"rows": want, "columns": [], "cells": []}}


COLUMN_CONFIG = {
    "frame": st.column_config.ImageColumn("frame", width=70, help="A frame of the result: its kept copy's last frame "
                                          "or first frame, else the live last frame (tasks made with "
                                          "`return_last_frame`)."),
    "status": st.column_config.TextColumn("status", width=190, help="Queued and running: for how long so far. "
                                          "Finished: how long ago."),
    "id": st.column_config.TextColumn("task id", width=205),
    "prompt": st.column_config.TextColumn("prompt", width=220,
                                          help="From this dashboard's journal, else from the service's stored "
                                          "request (a Dailies service); empty when neither has it."),
    "tokens": st.column_config.NumberColumn("tokens", format="localized"),
    "cost": st.column_config.TextColumn("cost", width=110, help="On a Dailies service, what its ledger charges for "
                                        "the task (≈ … held: the estimate, reserved while the task runs or the "
                                        "upstream may still bill it). Elsewhere, from the task's usage at the list "
                                        "price of its model (≈: estimated while it runs). No price: none is known."),
    "created": st.column_config.DatetimeColumn("created", format="D MMM HH:mm"),
    "updated": st.column_config.DatetimeColumn("updated", format="distance"),
    "deadline": st.column_config.TextColumn("deadline in", width=125, help="Queued or running tasks expire unrun after "
                                            "`execution_expires_after` seconds (default 48 h)."),
    "link expires": st.column_config.TextColumn("link expires in", width=125,
                                                help="Result links work 24 h after success."),
    "record deleted": st.column_config.TextColumn("record deleted in", width=130, help="Records are kept 7 days."),
    "kept": st.column_config.TextColumn("kept", width="small", help="💾 a copy is in the local archive."),
    "model": st.column_config.TextColumn("model", width=200),
}


def _ask_refresh() -> None:
    st.session_state[REFRESH_ASKED_KEY] = True


def _listing(journal: Journal, filters: TaskFilters, max_age: float) -> ListTasksResponse | None:
    try:
        return data.list_tasks(max_age, remember_in=journal, **filters.list_kwargs())
    except APIError as exc:
        st.error(f"Could not list tasks: {exc}")
        return None


def _table(client: Client, journal: Journal, filters: TaskFilters, refreshing: bool) -> tuple[bool, DeltaGenerator]:
    """Draw the table; return whether the page must run again in full (its interval or charts are out of
    date) and the place above the table where the detail goes.
    `refreshing`: the page found a row queued or running, so the fragment's timer lists anew."""
    in_page_run = st.session_state.pop(IN_PAGE_RUN_KEY, False)
    asked = st.session_state.pop(REFRESH_ASKED_KEY, False)
    changed, pick = _user_pick(st.session_state.get(RENDERED_IDS_KEY, []))
    timer = not (asked or in_page_run or changed)  # a run of the fragment alone that no click started
    query = filters.list_kwargs()
    last = st.session_state.get(LAST_LISTING_KEY)
    if timer and not refreshing and last is not None and last[0] == query:
        page = last[1]  # the idle redraw: the clock moved on, the list did not
    else:
        # A refresh (the button, the timer) reads anew; the page's run and a click on a row take the
        # listing the page has just read.
        page = _listing(journal, filters, 0 if asked or timer else REFRESH_SECONDS)
    if page is None:
        return False, st.container()
    st.session_state[LAST_LISTING_KEY] = (query, page)
    records = list(page.items)
    now = time.time()
    if keep.auto_keep_enabled(journal):
        keep.auto_keep(client, journal, records, now)

    ids = [r.id for r in records]
    if changed:
        select(pick)
    active = any_active(records)
    signature = (tuple((r.id, r.status) for r in records), active)
    # Outside the page's run (where everything is drawn anyway) a change of the page asks for a full
    # run, once this run has drawn the table and the detail: a click in the detail (a button's True
    # lasts one run) is handled before the page runs again, not swallowed by it.
    needs_full_run = not in_page_run and (active != refreshing or signature != st.session_state.get(SIGNATURE_KEY))
    st.session_state[SIGNATURE_KEY] = signature

    pages = max(1, math.ceil(page.total / filters.page_size))
    where = (f"page **{filters.page_num}** of **{pages}**" if filters.page_num <= pages
             else f"page **{filters.page_num}**, past the last (**{pages}**)")  # not "page 5 of 3"
    summary = f"**{page.total}** task(s) match · {where}"
    if active:
        summary += f" · ⟳ refreshing every {REFRESH_SECONDS} s while tasks are queued or running"
    head = st.container(horizontal=True, vertical_alignment="center")
    # Without queued or running rows nothing refreshes by itself: new tasks show on demand.
    actions.button("⟳ Refresh", key=REFRESH_KEY, on_click=_ask_refresh,
                   help="List again (a fragment rerun: filters and selection stay).", where=head)
    head.markdown(summary)
    above = st.container()
    if not records:
        if page.total and filters.page_num > pages:
            st.info(f"Page {filters.page_num} is past the end: there are {pages} page(s).")
        else:
            hint = " Flex tasks are listed only under the flex tier." if filters.service_tier == "default" else ""
            st.info("No tasks match these filters in the last 7 days." + hint)
        st.session_state[RENDERED_IDS_KEY] = ids
        return needs_full_run, above

    cache_id = connection.current().cache_id
    # The cost of a Dailies service's task is its ledger line: one read for the page's rows whose line
    # may still change (none once every row is settled or released), side by side with the prompts.
    charges.ask(client, cache_id, ids)
    submissions = journal.submissions(ids)
    # Rows made elsewhere (the API, the CLI, the SDK) take their prompt from the service: each task's
    # request is asked once (it never changes), side by side, and a row whose read fails stays without one.
    stored = stored_requests(client, cache_id, [i for i in ids if i not in submissions])
    lines = charges.charges(client, cache_id, ids)
    # Rows without a line (the real Ark keeps no ledger) are priced here, at the service's region's price.
    region = None if lines is not None and lines.keys() >= set(ids) else charges.billing_region(client)
    kept = keep.kept_by_task(journal)  # one read of the archive for the flags and the pictures
    kept_ids = keep.video_ids(kept)
    frames = thumbnails.thumbnails(journal, [i for i in ids if i in kept_ids], kept=kept)
    frame = table_rows(records, submissions, kept_ids, now, browser_timezone(), stored, lines, region, frames)
    _pin_selection(ids)
    st.session_state[RENDERED_IDS_KEY] = ids
    st.dataframe(frame, key=TABLE_KEY, on_select="rerun", selection_mode="single-row", hide_index=True,
                 width="stretch", column_config=COLUMN_CONFIG)
    st.caption("Select a row to open the task above it. 🟢 plenty of time · 🟠 getting close · 🔴 act now · ⚫ gone.")
    return needs_full_run, above


def render(client: Client, journal: Journal, filters: TaskFilters, detail: Callable[[str | None], None]) -> None:
    """Draw the table, then `detail(selected())`: the detail of the selected task (or nothing), in
    the same fragment, above the table.

    The page lists first: whether any row is queued or running decides the fragment's interval, which
    is fixed when the fragment is declared.
    """
    page = _listing(journal, filters, REFRESH_SECONDS)
    if page is None:  # said above; a task asked for by its link is still shown
        detail(selected())
        return
    refreshing = any_active(page.items)
    st.session_state[IN_PAGE_RUN_KEY] = True
    st.fragment(run_every=REFRESH_SECONDS if refreshing else IDLE_REDRAW_SECONDS)(_table_and_detail)(
        client, journal, filters, refreshing, detail)


def _table_and_detail(client: Client, journal: Journal, filters: TaskFilters, refreshing: bool,
                      detail: Callable[[str | None], None]) -> None:
    needs_full_run, above = _table(client, journal, filters, refreshing)
    with above:
        detail(selected())
    if needs_full_run:
        st.rerun()
