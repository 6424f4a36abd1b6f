"""One shot on the Review page: its versions (newest on top, a picker v1, v2 … with each one's status),
the chosen version's player (a comment can be pinned at its position, a comment's timecode seeks it),
prompt and parameters, its review status and each person's stars on one row, and its comment thread;
the rest (writing a comment, the status history) behind a control each, so a card is mostly picture.
Each card is a fragment: a change reruns the card alone, not the page (which lists hundreds of
results), unless the change shows elsewhere (the filter, the comparison)."""

from __future__ import annotations

import time
from datetime import tzinfo

import streamlit as st

from components.common import actions, charges, notices, pages, player
from components.common.comments import player_seek, timeline_marks
from components.common.markdown_text import markdown_text
from components.common.records import format_time, length_text, model_as_written
from components.common.stored_requests import stored_requests
from components.common.timecode_player import PlayerState, timecode_player
from components.review import comments as review_comments
from components.review.results import Result, Shot
from components.review.state_keys import (
    CARD_RUN_KEY,
    COMPARE_KEY,
    COMPARE_PREV_KEY,
    FILTERED_KEY,
    LEFT_KEY,
    OPEN_KEY,
    PAGE_FOLLOWS_KEY,
    PAGE_RUN_KEY,
    PINNED_DRAWING_KEY,
    PINNED_FRAME_KEY,
    PINNED_KEY,
    PINNED_OUT_KEY,
    PLAYER_KEY,
    POSITION_KEY,
    SEEK_KEY,
    STARS_KEY,
    STATUS_KEY,
    UNDO_KEY,
    VERSION_KEY,
)
from dailies.journal import STATUS_LABELS, STATUSES, Journal
from dailies.journal.statuses import PENDING
from dailies.spec.results import VIDEO_NAME

CARD_VIDEO_HEIGHT = 240
STATUS_WIDTH = 190  # "Changes requested" and the select's arrow, with the stars beside it in a card


def short_id(task_id: str) -> str:
    """The distinctive tail of an id: 'cgt-20261122044702-xkfw0' -> '…044702-xkfw0'."""
    return "…" + task_id[-12:] if len(task_id) > 14 else task_id


def _page_follows(task_id: str, status_changed: bool) -> None:
    if task_id in st.session_state.get(COMPARE_KEY, []):
        st.session_state[PAGE_FOLLOWS_KEY] = True


def _save_status(journal: Journal, task_id: str) -> None:
    change = journal.set_status(task_id, st.session_state[STATUS_KEY.format(task_id)])
    if change is not None:
        notices.tell(journal.status_notice(change))
    if st.session_state.get(FILTERED_KEY) and change is not None:
        # The card says it leaves the filtered view, at once and alone (a fragment run, not the page's
        # second); the page's next run leaves it out.
        st.session_state[LEFT_KEY.format(task_id)] = (change.status, change.previous)
    _page_follows(task_id, status_changed=True)


def _undo_status(journal: Journal, task_id: str) -> None:
    status, previous = st.session_state.pop(LEFT_KEY.format(task_id), (None, None))
    change = journal.set_status(task_id, previous or PENDING)
    if change is not None:
        notices.tell(journal.status_notice(change))
    st.session_state[STATUS_KEY.format(task_id)] = previous or PENDING


def _left_the_view(journal: Journal, task_id: str) -> bool:
    """A compact line for a version whose new status takes it out of the filtered view, with Undo."""
    left = st.session_state.get(LEFT_KEY.format(task_id))
    if left is None:
        return False
    st.markdown(f"**{short_id(task_id)}** is now **{STATUS_LABELS.get(left[0], left[0])}**: it leaves this view "
                "on the next refresh.")
    actions.button("Undo", key=UNDO_KEY.format(task_id), icon=":material/undo:", on_click=_undo_status,
                   args=(journal, task_id))
    return True


def _save_stars(journal: Journal, task_id: str) -> None:
    value = st.session_state[STARS_KEY.format(task_id)]
    # st.feedback counts stars from 0; the journal stores 1..5, and None takes the rating back.
    journal.rate(task_id, None if value is None else value + 1)
    _page_follows(task_id, status_changed=False)


def _compare_with_previous(shot: Shot, task_id: str) -> None:
    number = shot.number_of(task_id)
    st.session_state[COMPARE_KEY] = [shot.versions[number - 2].task_id, task_id]
    st.session_state[PAGE_FOLLOWS_KEY] = True


def version_label(shot: Shot, task_id: str) -> str:
    result = next(r for r in shot.versions if r.task_id == task_id)
    return f"v{shot.number_of(task_id)} · {STATUS_LABELS[result.status_name]}"


def review_widgets(journal: Journal, result: Result, tz: tzinfo) -> None:
    """Status, my stars and everyone's average on one row. The status select shows the journal's status
    at every draw (who set it: `status_history`); my stars are seeded from the journal on first draw."""
    tid = result.task_id
    status_key, stars_key = STATUS_KEY.format(tid), STARS_KEY.format(tid)
    # The select follows the journal (read again at every run: another member's change included), so it
    # never contradicts the history, and picking any other value is a change that writes. It cannot
    # undo the person's own pick: its callback wrote it before this run read the journal, so the
    # journal holds it (a write refused leaves the journal's value, which is the truth).
    if st.session_state.get(status_key) != result.status_name:
        st.session_state[status_key] = result.status_name
    mine = result.ratings.get(journal.author)
    st.session_state.setdefault(stars_key, mine - 1 if mine else None)
    with st.container(horizontal=True, gap="small", vertical_alignment="center"):
        # Its options name themselves ("Approved"): the label is for screen readers and tests.
        st.selectbox("Status", STATUSES, format_func=STATUS_LABELS.get, key=status_key, on_change=_save_status,
                     args=(journal, tid), label_visibility="collapsed", width=STATUS_WIDTH)
        st.feedback("stars", key=stars_key, on_change=_save_stars, args=(journal, tid))
        if result.ratings:
            each = ", ".join(f"{markdown_text(who)} {n}★" for who, n in result.ratings.items())
            st.caption(f"★ {result.average_stars:.1f} ({len(result.ratings)})", help=f"Average of {each}")


def status_history(journal: Journal, result: Result, tz: tzinfo) -> None:
    """Who set the status (the control's label) and, opened, every change: when, who, from what to what.
    Nothing before the first change."""
    if result.status is None:
        return
    with st.popover(f"by {markdown_text(result.status.author)}", icon=":material/history:", type="tertiary",
                    help=f"{STATUS_LABELS[result.status.status]} by {markdown_text(result.status.author)}, "
                         f"{format_time(result.status.at, tz)}: the status history"):
        for change in journal.status_history(result.task_id):
            st.markdown(f"- {format_time(change.at, tz)} · **{markdown_text(change.author)}**: "
                        f"{STATUS_LABELS.get(change.previous or 'pending')} → {STATUS_LABELS[change.status]}")


def version_player(result: Result, now: float, height: int | None,
                   max_height: str | None = None) -> PlayerState | None:
    """The version's player: a comment takes its position ("Comment at …"), a comment's timecode sets it.
    Plays the live link, else the kept copy; says why there is nothing to play otherwise. `height` None:
    the video's own shape across the column, no taller than `max_height` (timecode_player)."""
    choice = player.choose(result.record, result.kept, now, on_service=result.listed)
    if choice.media is None:
        st.info(choice.reason, icon="🎞️")
        return None
    # Handed over once: the player goes there, and a later click on the same timecode goes there again.
    seek = player_seek(st.session_state.pop(SEEK_KEY.format(result.task_id), None))
    fps = player.fps(result.record)
    state = timecode_player(choice.media, key=PLAYER_KEY.format(result.task_id), height=height,
                            max_height=max_height, aspect=player.aspect(result.record), fps=fps,
                            marks=timeline_marks(result.comments, fps), **seek)
    st.session_state[POSITION_KEY.format(result.task_id)] = state.position
    if choice.source == "kept":
        st.caption("💾 " + choice.reason)
    if state.comment_at is not None:
        # Straight to writing: the comment is pinned there and its box opens (drawn later in this run).
        st.session_state[PINNED_KEY.format(result.task_id)] = state.comment_at
        st.session_state[PINNED_FRAME_KEY.format(result.task_id)] = state.comment_frame
        st.session_state[PINNED_DRAWING_KEY.format(result.task_id)] = state.comment_drawing
        st.session_state[PINNED_OUT_KEY.format(result.task_id)] = state.comment_out_frame
        review_comments.open_form(result.task_id)
    return state


def fill_from_service(results: list[Result], client, cache_id: str, wait_s: float | None = None) -> None:
    """The prompt and author of the versions not submitted from a dashboard, from the service's stored
    requests: asked side by side, once per task, and waited for at most `wait_s` (stored_requests.WAIT_S
    unless said: a slow service leaves a prompt unknown for this run, not the page waiting on each card
    in turn)."""
    wanted = [r for r in results if not r.prompt and r.submission is None]
    if not wanted:
        return
    found = stored_requests(client, cache_id, [r.task_id for r in wanted], wait_s)
    for result in wanted:
        stored = found.get(result.task_id)
        if stored is not None:
            result.stored_prompt = stored.prompt or "(no prompt: inputs only)"
            result.author = result.author or (stored.created_by or "")


def ask_charges(results: list[Result], client, cache_id: str) -> float:
    """Start reading the ledger's lines of these versions (one request for all of them, none for lines
    read already and settled), without waiting: the page asks its stored prompts meanwhile. Returns
    when, for `fill_charges`."""
    charges.ask(client, cache_id, [r.task_id for r in results if r.record is not None])
    return time.monotonic()


def fill_charges(results: list[Result], client, cache_id: str, asked_at: float | None = None) -> None:
    """The cost of these versions as the Tasks table shows it: on a Dailies service its ledger's line
    (the read `ask_charges` started at `asked_at`, waited for at most what is left of charges.WAIT_S
    since, so side by side with the stored prompts the page waits for the longer of the two, not
    both); a version without a known line (the real Ark keeps no ledger, a read not answered yet) is
    priced here at the service's region's prices."""
    priced = [r for r in results if r.record is not None]
    if not priced:
        return
    ids = [r.task_id for r in priced]
    wait_s = charges.WAIT_S if asked_at is None else max(0.0, charges.WAIT_S - (time.monotonic() - asked_at))
    lines = charges.charges(client, cache_id, ids, wait_s)
    region = None if lines is not None and lines.keys() >= set(ids) else charges.billing_region(client)
    for result in priced:
        result.charge = (lines or {}).get(result.task_id)
        result.billed_in = region


def prompt_line(result: Result, client, cache_id: str) -> None:
    fill_from_service([result], client, cache_id)
    st.markdown(f"**{markdown_text(result.prompt)}**" if result.prompt else "_Prompt unknown_",
                help=None if result.prompt else "Not submitted from a dashboard, and the service does not "
                                                "return prompts.")


@st.fragment
def card(journal: Journal, shot: Shot, now: float, tz: tzinfo, client=None, cache_id: str = "",
         video_height: int = CARD_VIDEO_HEIGHT) -> None:
    """One shot (a fragment: see the module)."""
    if st.session_state.pop(PAGE_FOLLOWS_KEY, False):
        st.rerun(scope="app")
    # In the page's run the card shows what the page gathered; when it reruns alone (a comment posted,
    # a star) it reads its versions' statuses, stars and comments again, other people's included.
    seen_key = CARD_RUN_KEY.format(shot.shot_id)
    if st.session_state.get(seen_key) == st.session_state.get(PAGE_RUN_KEY):
        ids = [r.task_id for r in shot.versions]
        statuses, ratings, comments = journal.statuses(ids), journal.ratings(ids), journal.comments(ids)
        lines = charges.known(cache_id, ids)  # a line the page's read brought after its run (no request)
        for r in shot.versions:
            r.status, r.ratings, r.comments = statuses.get(r.task_id), ratings.get(r.task_id, {}), comments.get(
                r.task_id, [])
            r.charge = lines.get(r.task_id, r.charge)
    st.session_state[seen_key] = st.session_state.get(PAGE_RUN_KEY)
    # Half the usual gap between the card's rows: at two cards a row the picture is most of the card.
    with st.container(border=True, gap="xsmall"):
        ids = [r.task_id for r in reversed(shot.versions)]  # newest on top
        chosen = ids[0]
        if len(ids) > 1:
            with st.container(horizontal=True, gap="small", vertical_alignment="center"):
                chosen = st.segmented_control("Version", ids, default=ids[0], key=VERSION_KEY.format(shot.shot_id),
                                              format_func=lambda t: version_label(shot, t),
                                              label_visibility="collapsed") or ids[0]
                if shot.number_of(chosen) > 1:
                    actions.button("⇆ Compare", key=COMPARE_PREV_KEY.format(chosen), type="tertiary", width="content",
                                   on_click=_compare_with_previous, args=(shot, chosen),
                                   help="With the previous version, side by side and in sync")
        result = next(r for r in shot.versions if r.task_id == chosen)
        if _left_the_view(journal, chosen):
            return
        version_player(result, now, video_height)
        with st.container(gap=None):  # the prompt and what made it read as one title
            prompt_line(result, client, cache_id)
            details = details_line(result, tz)
            # One line (all of it in its tooltip): wider cards show more of it.
            st.caption(details, wrap=False, help=details)
        review_widgets(journal, result, tz)
        review_comments.render(journal, result.task_id, result.comments, tz, on_change=lambda: None)
        with st.container(horizontal=True, gap="small", vertical_alignment="center"):
            review_comments.form(journal, result.task_id, result.comments, on_change=lambda: None)
            status_history(journal, result, tz)
            opened = st.button("🔍 Open alone", key=OPEN_KEY.format(chosen), type="tertiary", width="content")
        if opened:
            st.query_params["task"] = chosen
            st.rerun()


def details_line(result: Result, tz: tzinfo) -> str:
    """Whether it is kept or gone from the service, then author, model, size, length, cost, time and id,
    most telling first (the version and the status are not repeated: the picker and the select say them)."""
    rec = result.record
    details = [":blue-badge[💾 kept]" if VIDEO_NAME in result.kept else "",
               "" if result.listed else ":gray-badge[no longer on the service]"]
    if result.author:
        details.append(f"by {markdown_text(result.author)}")
    if rec is not None:
        details += [model_as_written(rec, result.submission), f"{rec.resolution} · {rec.ratio} · {length_text(rec)}",
                    result.cost, format_time(rec.created_at, tz)]
    details.append(short_id(result.task_id))
    return " · ".join(d for d in details if d)


def link_to_tasks(task_id: str) -> None:
    pages.link(pages.TASKS, "Details in Tasks", icon="📋", query={"task": task_id})
