"""The Review page: shots of succeeded results (versions of one idea, newest on top) with review
status, stars and comments shared by the project, the inbox filters, and versions compared side by
side in sync.

Results are the succeeded tasks the service lists (both tiers) plus every result kept in the journal,
whose record may be long gone (review_data.py). Statuses, stars and comments are written to the journal
the moment they change, so they outlive the session and the service, and every member of the project
sees them (on a Dailies service the journal is the project's).
"""

from __future__ import annotations

import math
import time
import uuid
from datetime import tzinfo

import pandas as pd
import streamlit as st

from components.common import actions, connection, data, keep, player
from components.common.address import from_address, to_address
from components.common.markdown_text import markdown_text
from components.common.records import format_time, length_text, model_as_written, tokens
from components.common.shot_labels import labels_among_many
from components.common.stored_requests import kept_request
from components.common.task_lookup import load
from components.review.card import (
    COMPARE_KEY,
    FILTERED_KEY,
    PAGE_FOLLOWS_KEY,
    PAGE_RUN_KEY,
    ask_charges,
    card,
    fill_charges,
    fill_from_service,
    link_to_tasks,
    prompt_line,
    review_widgets,
    short_id,
    status_history,
    version_player,
)
from components.review.comments import form as comment_form
from components.review.comments import render as comments_thread
from components.review.results import ALL, INBOX_FILTERS, Result, filter_shots, gather, shots_of
from components.review.review_keys import render_review_keys
from components.review.state_keys import (
    BACK_KEY,
    BATCH_KEY,
    COMPARE_BATCH_KEY,
    FRESH_KEY,
    HANDOFF_KEY,
    INBOX_KEY,
    LEFT_KEY,
    LINKED_FRAME_KEY,
    MEMBER_KEY,
    PAGE_KEY,
    PER_PAGE_KEY,
    PER_ROW_KEY,
    REEL_KEY,
    REFRESH_KEY,
    REPORT_KEY,
    SEEK_KEY,
    SHARE_KEY,
    SHARE_PANEL_KEY,
    SYNC_PREFIX,
)
from components.review.sync_compare import sync_compare
from dailies.client import Client
from dailies.journal import STATUS_LABELS, Journal
from dailies.timecodes import is_frame

LEFT_PREFIX = LEFT_KEY.split("{")[0]

# Big pictures first: two cards a row by default (one a row for a close look, three for a quick pass),
# each player as tall as a 16:9 picture across its column on a 1440 px screen, so none is letterboxed.
CARDS_PER_ROW = 2
PLAYER_HEIGHTS = {1: 530, 2: 250, 3: 165}
# "Open alone": the player as wide as the page, no taller than leaves its "Comment at" in the window
# under the page's header (a portrait take is narrower instead).
SINGLE_PLAYER_MAX_HEIGHT = "max(240px, calc(100vh - 24rem))"
_TO_TOP = ("<script>{ for (const el of [document.querySelector('[data-testid=stMain]'), document.scrollingElement]) "
           "el?.scrollTo(0, 0); }</script>")
# The reel's slates and the report carry the prompts into a file someone keeps: worth waiting longer for
# a slow service's stored requests than a page's cards do.
DOCUMENT_WAIT_S = 20.0
# Two rows: a card is a player and a dozen widgets for the browser to draw, and a new session's page is
# ready only once every card is (bench/dashboard.py: a warm load of 12 cards took 2.0-2.5x the bare app's,
# of 6 cards 1.7-1.9x); the first screen shows one row anyway. A reviewer going through a long day's
# shots can take more per page (kept for the session).
PER_PAGE_CHOICES = (6, 12, 24)
COMPARE_MAX = 4
ANYONE = "anyone"


def comparison_table(results: list[Result]) -> pd.DataFrame:
    """Parameters side by side: one column per task, a row per parameter, and whether they differ."""
    def params(r: Result) -> dict[str, object]:
        rec = r.record
        return {
            "model": model_as_written(rec, r.submission) or None,
            "seed": rec.seed if rec else None,
            "resolution": rec.resolution if rec else None,
            "ratio": rec.ratio if rec else None,
            "duration": length_text(rec) if rec else None,
            "tokens": f"{tokens(rec):,}" if rec and tokens(rec) is not None else None,
            "cost": r.cost,
            "status": STATUS_LABELS[r.status_name],
            "stars": f"{r.average_stars:.1f}" if r.average_stars is not None else None,
        }

    def text(value: object) -> str:
        return "—" if value is None else str(value)

    # Text throughout: a column mixes seeds, ratios and statuses, and Arrow wants one type per column.
    columns = {short_id(r.task_id): {k: text(v) for k, v in params(r).items()} for r in results}
    frame = pd.DataFrame(columns)
    frame["differs"] = ["≠" if len(set(row)) > 1 else "" for row in frame.itertuples(index=False)]
    return frame


def compare(results: list[Result], now: float) -> None:
    """The chosen versions side by side, played in sync by one control (an A/B flip for two), then their
    parameters in one table. A version with no URL to play (a kept file of this machine) plays alone."""
    media = [player.choose(r.record, r.kept, now, on_service=r.listed).media for r in results]
    playable = [(m, short_id(r.task_id)) for m, r in zip(media, results, strict=True) if m is not None]
    if len(playable) >= 2:
        sync_compare([m for m, _ in playable], [label for _, label in playable],
                     key=SYNC_PREFIX + ".".join(r.task_id for r in results), fps=player.fps(results[0].record))
    if len(playable) < len(results):
        st.caption("Not playable here (no link, no kept copy): " + ", ".join(
            short_id(r.task_id) for m, r in zip(media, results, strict=True) if m is None))
    st.caption(" · ".join(f"{short_id(r.task_id)}: {markdown_text(r.prompt[:60]) or 'prompt unknown'}"
                          for r in results))
    st.dataframe(comparison_table(results), width="stretch")


def _picker_labels(results: list[Result], cache_id: str) -> dict[str, str]:
    """Each result's id and what tells its prompt from the others' (variations share their start)."""
    prompts = []
    for result in results:
        prompt = result.prompt
        if not prompt and result.submission is None:
            stored = kept_request(cache_id, result.task_id)
            prompt = (stored.prompt or "") if stored is not None else ""
        prompts.append(prompt)
    seeds = [r.record.seed if r.record is not None else None for r in results]
    return {r.task_id: f"{short_id(r.task_id)} · {label}" if prompt else short_id(r.task_id)
            for r, prompt, label in zip(results, prompts, labels_among_many(prompts, seeds), strict=True)}


def _list_anew() -> None:
    st.session_state[FRESH_KEY] = True


def _reset_page() -> None:
    st.session_state[PAGE_KEY] = 1


def _batch_label(batch: dict) -> str:
    return f"{batch['label'] or batch['id']} · {batch['size']} task(s) · {batch['mode']}"


def render(client: Client | None, journal: Journal, tz: tzinfo, now: float | None = None) -> None:
    """The whole Review page below its header: one task for `?task=`, else filters, compare and the grid."""
    now = time.time() if now is None else now
    st.session_state.pop(PAGE_FOLLOWS_KEY, None)  # this is the page's run: it follows every change
    for left in [k for k in st.session_state if str(k).startswith(LEFT_PREFIX)]:
        del st.session_state[left]  # versions that left the filtered view are left out by this run
    st.session_state[PAGE_RUN_KEY] = uuid.uuid4().hex  # cards drawn in it use what it gathered
    max_age = 0 if st.session_state.pop(FRESH_KEY, False) else data.LIST_MAX_AGE_S
    task_id = st.query_params.get("task")
    if task_id:
        # One task alone needs its own record and journal rows, not the listing of every result: a
        # deep link (a new session, the listing not cached yet) asks the service for one task only.
        single(client, journal, task_id, now, tz)
        return
    results, problems = gather(journal, online=client is not None, max_age=max_age)
    for problem in problems:
        st.warning(problem)
    if client is not None and keep.auto_keep_enabled(journal):
        keep.auto_keep(client, journal, [r.record for r in results if r.record is not None and not r.kept], now)
    by_id = {r.task_id: r for r in results}
    cache_id = connection.current().cache_id

    shots = shots_of(journal, results)
    batches = {b["id"]: b for b in journal.batches()}
    members = sorted({r.author for r in results if r.author})
    st.caption(f"Reviewing as **{markdown_text(journal.author)}**" + (" · the project's journal, shared by its members"
                                                       if journal.scope and journal.scope.is_project else ""))
    # The view in the address (`?show=…&by=…&batch=…&compare=id,id`), values not labels: Streamlit's own
    # binding writes a widget's labels there, and some change with what the page knows.
    from_address(INBOX_KEY, "show", lambda v: v if v in INBOX_FILTERS else None)
    from_address(MEMBER_KEY, "by", lambda v: v if v in members else None)
    from_address(BATCH_KEY, "batch", lambda v: v if v in batches else None)
    from_address(COMPARE_KEY, "compare", lambda v: [t for t in v.split(",") if t in by_id][:COMPARE_MAX] or None)
    cols = st.columns([2, 2, 3, 4, 1.4], vertical_alignment="bottom")
    with cols[4]:
        actions.button("⟳ Refresh", key=REFRESH_KEY, on_click=_list_anew,
                       help=f"List the service's results again (otherwise read at most {data.LIST_MAX_AGE_S} s apart, "
                       "and at once after a submission or a deletion from this dashboard).")
    with cols[0]:
        inbox = st.selectbox("Show", list(INBOX_FILTERS), format_func=INBOX_FILTERS.get, key=INBOX_KEY,
                             on_change=_reset_page, persist_state="session")
    with cols[1]:
        member = st.selectbox("Made by", [ANYONE, *members], key=MEMBER_KEY, on_change=_reset_page,
                              format_func=lambda m: "Anyone" if m == ANYONE else m,
                              persist_state="session")
    with cols[2]:
        batch = st.selectbox("Batch", [ALL, *batches], key=BATCH_KEY, on_change=_reset_page,
                             format_func=lambda b: "All batches" if b == ALL else _batch_label(batches[b]),
                             persist_state="session",
                             help="A batch is the set of tasks one submission on the Compose page created "
                                  "(variations of one idea).")
    batch_ids = {s.task_id for s in journal.batch(batch)} if batch != ALL else None
    shown = filter_shots(shots, inbox, journal.author, None if member == ANYONE else member, batch_ids)
    st.session_state[FILTERED_KEY] = inbox != ALL
    if COMPARE_KEY in st.session_state:  # a result compared earlier may have gone since (deleted, purged)
        st.session_state[COMPARE_KEY] = [t for t in st.session_state[COMPARE_KEY] if t in by_id]
    with cols[3]:
        # Options are every result, so a comparison survives a change of filter. Asking the service for
        # the stored prompt of each would take a request per version made elsewhere: a label names the
        # prompts known (the journal's, or one a card or a tool asked for already), else the id alone.
        labels = _picker_labels(list(by_id.values()), cache_id)
        chosen = st.multiselect(f"Compare side by side (2 to {COMPARE_MAX})", list(by_id), key=COMPARE_KEY,
                                max_selections=COMPARE_MAX, persist_state="session",
                                format_func=lambda t: labels.get(t, t), placeholder="Pick results to compare")
        to_address("show", None if inbox == next(iter(INBOX_FILTERS)) else inbox)
        to_address("by", None if member == ANYONE else member)
        to_address("batch", None if batch == ALL else batch)
        to_address("compare", ",".join(chosen) if chosen else None)
        if batch_ids is not None:
            in_batch = [s.newest.task_id for s in shown][:COMPARE_MAX]
            actions.button("Compare this batch", key=COMPARE_BATCH_KEY, disabled=len(in_batch) < 2,
                           on_click=lambda: st.session_state.update({COMPARE_KEY: in_batch}))
    chosen = [t for t in chosen if t in by_id]
    compared = [by_id[t] for t in chosen] if len(chosen) >= 2 else []
    # Drawn here, filled below: its prompts and costs are read with the page's cards, in one go.
    comparing = st.container(border=True) if compared else None

    # Tools on what the filters show (every version of those shots), drawn only while opened, and
    # imported only then: the reel's video stack and the report's PDF library would slow every run.
    in_view = [version for shot in shown for version in shot.versions]
    reel = st.expander("🎬 Reel of approved shots", key=REEL_KEY, on_change="rerun")
    if reel.open:
        from components.review.reel_maker import render_reel_maker

        with reel:
            fill_from_service(in_view, client, cache_id, DOCUMENT_WAIT_S)
            render_reel_maker(in_view, journal, client, now)
    report = st.expander(f"📄 Report of the notes ({len(in_view)} version(s) shown)", key=REPORT_KEY,
                         on_change="rerun")
    if report.open:
        from components.review.report_download import render_report_buttons

        with report:
            fill_from_service(in_view, client, cache_id, DOCUMENT_WAIT_S)
            render_report_buttons(in_view, journal, now, client=client)
    handoff = st.expander("🎞️ Hand off to the edit (OTIO, EDL, FCPXML)", key=HANDOFF_KEY, on_change="rerun")
    if handoff.open:
        from components.review.handoff_download import render_handoff

        with handoff:
            render_handoff(in_view, journal, now)
    # A share: the results picked for comparison, else the newest version of each shot shown.
    to_share = chosen or [shot.newest.task_id for shot in shown]
    share = st.expander(f"🔗 Share with a guest ({len(to_share)} version(s))", key=SHARE_KEY, on_change="rerun")
    if share.open:
        from components.common.shares import public_url
        from components.review.share_panel import render_share_panel

        with share:
            render_share_panel(to_share, journal, client, public_url(), key=SHARE_PANEL_KEY)

    if not shown:
        _read_for_page(compared, client, cache_id)
        _draw_comparison(comparing, compared, now)
        st.info("No shots match." if results else
                "No succeeded results yet. Results appear here when tasks succeed, and kept results stay "
                "here after the service forgets them.")
        return
    per_page = PER_PAGE_CHOICES[0]
    paging, size, across = st.columns([5, 1, 1], vertical_alignment="bottom")
    with across:
        per_row = st.segmented_control("Cards per row", list(PLAYER_HEIGHTS), key=PER_ROW_KEY,
                                       default=CARDS_PER_ROW, persist_state="session") or CARDS_PER_ROW
    if len(shown) > PER_PAGE_CHOICES[0]:
        with size:
            per_page = st.selectbox("Cards per page", PER_PAGE_CHOICES, key=PER_PAGE_KEY, on_change=_reset_page,
                                    persist_state="session")
    pages = max(1, math.ceil(len(shown) / per_page))
    page = 1
    if pages > 1:
        with paging:
            page = st.pagination(pages, key=PAGE_KEY)
    page = min(max(page, 1), pages)
    start = (page - 1) * per_page
    st.caption(f"{len(shown)} shot(s) · page {page} of {pages} · statuses, stars and comments are saved as you go.")
    on_page = shown[start:start + per_page]
    # Every version of the page's shots (and the compared ones) asked side by side before the cards
    # draw, not card by card.
    _read_for_page([*compared, *(version for shot in on_page for version in shot.versions)], client, cache_id)
    _draw_comparison(comparing, compared, now)
    for row in range(0, len(on_page), per_row):
        cols = st.columns(per_row, gap="medium")
        for col, shot in zip(cols, on_page[row:row + per_row], strict=False):
            with col:
                card(journal, shot, now, tz, client, cache_id, PLAYER_HEIGHTS[per_row])


def _read_for_page(results: list[Result], client: Client | None, cache_id: str) -> None:
    """What the page's versions show from the service, side by side and within one wait: the stored
    prompts of those made elsewhere, and the ledger's lines (their cost: one request for the page)."""
    results = list({r.task_id: r for r in results}.values())
    if not results:
        return
    asked_at = ask_charges(results, client, cache_id)
    fill_from_service(results, client, cache_id)
    fill_charges(results, client, cache_id, asked_at)


def _draw_comparison(comparing, compared: list[Result], now: float) -> None:
    if comparing is None:
        return
    with comparing:
        st.markdown(f"**Comparing {len(compared)} results**")
        compare(compared, now)


def _seek_to_linked_frame(task_id: str) -> None:
    """A link's `&frame=N`: the player goes there once, on the session's first run of this shot."""
    frame = st.query_params.get("frame", "")
    opened = st.session_state.get(LINKED_FRAME_KEY)
    if opened == (task_id, frame):
        return
    st.session_state[LINKED_FRAME_KEY] = (task_id, frame)
    if frame.isdigit() and is_frame(int(frame)):
        st.session_state[SEEK_KEY.format(task_id)] = {"seek_frame": int(frame)}


def single(client: Client | None, journal: Journal, task_id: str, now: float, tz: tzinfo) -> None:
    """The deep-linked task alone, at the top of the page: the way back, the player as wide as the page
    in the video's own shape, then its details and review widgets beside its comments. Asked of the
    service (whatever its status), else the journal's last copy of it."""
    with st.container(horizontal=True, gap="small", vertical_alignment="center"):
        if st.button("← All results", key=BACK_KEY, type="primary"):
            st.query_params.pop("task", None)
            st.query_params.pop("frame", None)
            st.rerun()
        st.markdown(f"**{markdown_text(task_id)}**")  # the address's, as typed
        # Opened from a card far down the grid, the page would stay scrolled there.
        st.html(_TO_TOP, unsafe_allow_javascript=True)
    loaded = load(client, journal, task_id)
    if loaded.record is None:
        st.error(f"No result {task_id}: the service does not have it and nothing was kept.")
        return
    ids = [task_id]
    result = Result(task_id, loaded.record, journal.submission(task_id), journal.statuses(ids).get(task_id),
                    journal.ratings(ids).get(task_id, {}), journal.comments(ids).get(task_id, []),
                    journal.kept(task_id), listed=loaded.live, author=journal.authors(ids).get(task_id, ""))
    cache_id = connection.current().cache_id
    asked_at = ask_charges([result], client, cache_id)  # its cost, read while its prompt is
    _seek_to_linked_frame(task_id)
    state = version_player(result, now, None, SINGLE_PLAYER_MAX_HEIGHT)
    if state is not None and state.frame is not None:
        # The address links to the frame shown (and is not taken for a new link on the next run).
        st.query_params["frame"] = str(state.frame)
        st.session_state[LINKED_FRAME_KEY] = (task_id, str(state.frame))
    render_review_keys(journal, task_id, online=client is not None)
    left, right = st.columns(2, gap="large")  # the comments as wide as the rest: each row holds its buttons
    with left:
        prompt_line(result, client, cache_id)
        if result.record is not None:
            fill_charges([result], client, cache_id, asked_at)
            rec = result.record
            st.caption(f"{model_as_written(rec, result.submission)} · {rec.resolution} · {rec.ratio} · "
                       f"{length_text(rec)} · seed {rec.seed} · {result.cost} · "
                       f"created {format_time(rec.created_at, tz)}")
        review_widgets(journal, result, tz)
        with st.container(horizontal=True, gap="small", vertical_alignment="center"):
            status_history(journal, result, tz)
            link_to_tasks(task_id)
    with right:
        st.markdown(f"**Comments** ({len(result.comments)})")
        comments_thread(journal, task_id, result.comments, tz, on_change=lambda: None)
        comment_form(journal, task_id, result.comments, on_change=lambda: None)
