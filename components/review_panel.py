"""The review grid: succeeded results with a verdict, a star rating and notes, side-by-side comparison.

Results are the succeeded tasks the service lists (both tiers) plus every result kept in the
local archive, whose record may be long gone. Verdicts, stars and notes are written to the
journal the moment they change (widget callbacks), so they outlive the session and the service.

Each card is a fragment: a verdict, a star or a note reruns that card alone, not the page (which
lists hundreds of results). The page runs again only when the change shows elsewhere: the card
leaves the verdict filter's selection, or the result is in the comparison above.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import tzinfo

import pandas as pd
import streamlit as st

from dailies.client import APIError, Client
from dailies.journal import Journal, KeptFile, Review, Submission
from dailies.spec.models import TaskRecord
from dailies.spec.results import VIDEO_NAME
from dailies.spec.statuses import TaskStatus

from . import countdown as cd
from . import data, pages, player
from .task_detail import load
from .task_rows import cost_of, format_time, length_text, model_as_written, prompt_of, record_from_json, tokens

VERDICT_FILTER_KEY = "review.verdict_filter"
BATCH_KEY = "review.batch"
COMPARE_KEY = "review.compare"
PAGE_KEY = "review.page"
# Set by a review widget's callback when the page must follow the change, not only the card.
PAGE_FOLLOWS_KEY = "review._page_follows"
REFRESH_KEY = "review.refresh"
FRESH_KEY = "review._fresh"  # the Refresh button was pressed: this run lists anew
CARDS_PER_ROW = 3
CARDS_PER_PAGE = 12
COMPARE_MAX = 4
# Portrait results are shown this tall at most, so a row of cards stays level.
CARD_VIDEO_HEIGHT = 240
# Succeeded tasks fetched per tier; older ones are still reachable through the Tasks page.
LIST_SIZE = 200

VERDICT_LABELS = {"approved": "👍 Approve", "rejected": "👎 Reject"}
VERDICT_FILTERS = {"all": "All", "unreviewed": "Not reviewed", "approved": "👍 Approved", "rejected": "👎 Rejected"}
ALL_BATCHES = "all"


@dataclass
class Result:
    """One succeeded result as the reviewer sees it."""

    task_id: str
    record: TaskRecord | None
    submission: Submission | None = None
    review: Review | None = None
    kept: dict[str, KeptFile] = field(default_factory=dict)
    listed: bool = True  # the service still lists it

    @property
    def created_at(self) -> float:
        if self.record is not None and self.record.created_at is not None:
            return float(self.record.created_at)
        return max((k.kept_at for k in self.kept.values()), default=0.0)

    @property
    def prompt(self) -> str:
        return prompt_of(self.submission)


def gather(journal: Journal, online: bool, max_age: float = data.LIST_MAX_AGE_S) -> tuple[list[Result], list[str]]:
    """Succeeded results, newest first: listed by the service (when `online`; a listing at most
    `max_age` seconds old), then kept ones it no longer lists. Returns the results and the problems
    met (an unreachable service is not fatal: kept results remain)."""
    problems: list[str] = []
    records: dict[str, TaskRecord] = {}
    if not online:
        problems.append("No service connection: showing kept results only.")
    else:
        tiers = ("default", "flex")
        pages = data.list_each([{"status": TaskStatus.SUCCEEDED, "page_size": LIST_SIZE, "service_tier": tier}
                                for tier in tiers], max_age, remember_in=journal)
        for tier, page in zip(tiers, pages, strict=True):
            if isinstance(page, APIError):
                problems.append(f"Could not list {tier} tasks: {page}")
                continue
            records.update((r.id, r) for r in page.items)
    kept_by_task: dict[str, dict[str, KeptFile]] = {}
    for kept in journal.all_kept():
        kept_by_task.setdefault(kept.task_id, {})[kept.name] = kept
    results = [Result(tid, rec, listed=True) for tid, rec in records.items()]
    for tid, files in kept_by_task.items():
        if tid not in records and VIDEO_NAME in files:
            saved = journal.record(tid)
            results.append(Result(tid, record_from_json(saved) if saved else None, listed=False))
    ids = [r.task_id for r in results]
    submissions = journal.submissions(ids)
    reviews = journal.reviews(ids)
    for result in results:
        result.submission = submissions.get(result.task_id)
        result.review = reviews.get(result.task_id, Review(result.task_id))
        result.kept = kept_by_task.get(result.task_id, {})
    results.sort(key=lambda r: r.created_at, reverse=True)
    return results, problems


def filter_results(results: Iterable[Result], verdict: str, batch_ids: set[str] | None) -> list[Result]:
    """By verdict ('all', 'unreviewed', 'approved', 'rejected') and by batch (None: any batch)."""
    out = []
    for r in results:
        current = r.review.verdict if r.review else None
        if verdict == "unreviewed" and current is not None:
            continue
        if verdict in ("approved", "rejected") and current != verdict:
            continue
        if batch_ids is not None and r.task_id not in batch_ids:
            continue
        out.append(r)
    return out


def comparison_table(results: list[Result]) -> pd.DataFrame:
    """Parameters side by side: one column per task, a row per parameter, and whether they differ."""
    def params(r: Result) -> dict[str, object]:
        rec = r.record
        review = r.review or Review(r.task_id)
        return {
            "model": model_as_written(rec, r.submission) or None,
            "seed": rec.seed if rec else None,
            "resolution": rec.resolution if rec else None,
            "ratio": rec.ratio if rec else None,
            "duration": length_text(rec) if rec else None,
            "tokens": f"{tokens(rec):,}" if rec and tokens(rec) is not None else None,
            "cost": cost_of(rec, r.submission) if rec else None,
            "verdict": review.verdict,
            "stars": review.stars or None,
        }

    def text(value: object) -> str:
        return "—" if value is None else str(value)

    # Text throughout: a column mixes seeds, ratios and verdicts, and Arrow wants one type per column.
    columns = {short_id(r.task_id): {k: text(v) for k, v in params(r).items()} for r in results}
    frame = pd.DataFrame(columns)
    frame["differs"] = ["≠" if len(set(row)) > 1 else "" for row in frame.itertuples(index=False)]
    return frame


def short_id(task_id: str) -> str:
    """The distinctive tail of an id: 'cgt-20261122044702-xkfw0' -> '…044702-xkfw0'."""
    return "…" + task_id[-12:] if len(task_id) > 14 else task_id


# ---------- review widgets (each saves to the journal as it changes) ----------


def _page_follows(task_id: str, verdict_changed: bool) -> None:
    """After a change of `task_id`'s review: ask for the page to run when it shows the change
    outside the card (the verdict filter, the comparison table)."""
    filtered = st.session_state.get(VERDICT_FILTER_KEY, "all") != "all"
    if (verdict_changed and filtered) or task_id in st.session_state.get(COMPARE_KEY, []):
        st.session_state[PAGE_FOLLOWS_KEY] = True


def _save_verdict(journal: Journal, task_id: str) -> None:
    journal.set_review(task_id, verdict=st.session_state[f"review.verdict.{task_id}"] or "")
    _page_follows(task_id, verdict_changed=True)


def _save_stars(journal: Journal, task_id: str) -> None:
    value = st.session_state[f"review.stars.{task_id}"]
    # st.feedback counts stars from 0; the journal stores 1..5, and 0 for "no rating".
    journal.set_review(task_id, stars=0 if value is None else value + 1)
    _page_follows(task_id, verdict_changed=False)


def _save_notes(journal: Journal, task_id: str) -> None:
    journal.set_review(task_id, notes=st.session_state[f"review.notes.{task_id}"])


def review_widgets(journal: Journal, result: Result) -> None:
    """Verdict, stars and notes of one result, seeded from the journal on first draw."""
    tid = result.task_id
    review = result.review or Review(tid)
    keys = {"verdict": f"review.verdict.{tid}", "stars": f"review.stars.{tid}", "notes": f"review.notes.{tid}"}
    st.session_state.setdefault(keys["verdict"], review.verdict)
    st.session_state.setdefault(keys["stars"], review.stars - 1 if review.stars else None)
    st.session_state.setdefault(keys["notes"], review.notes)
    st.segmented_control("Verdict", list(VERDICT_LABELS), format_func=VERDICT_LABELS.get, key=keys["verdict"],
                         on_change=_save_verdict, args=(journal, tid), label_visibility="collapsed")
    st.feedback("stars", key=keys["stars"], on_change=_save_stars, args=(journal, tid))
    st.text_area("Notes", key=keys["notes"], on_change=_save_notes, args=(journal, tid), height=68,
                 placeholder="Notes for the team…", label_visibility="collapsed")


# ---------- drawing ----------


def _link_to_tasks(task_id: str) -> None:
    pages.link(pages.TASKS, "Details in Tasks", icon="📋", query={"task": task_id})


def _status_line(result: Result, now: float) -> str:
    parts = []
    clock = cd.countdown(result.record, "result_url", now) if result.record is not None and result.listed else None
    if clock is not None:
        parts.append(f":{clock.colour}-badge[{clock.emoji} {clock.text}]")
    if VIDEO_NAME in result.kept:
        parts.append(":blue-badge[💾 kept]")
    if not result.listed:
        parts.append(":gray-badge[no longer on the service]")
    return " ".join(parts)


@st.fragment
def card(journal: Journal, result: Result, now: float, tz: tzinfo) -> None:
    """One result: player, prompt, parameters, countdown, review widgets (a fragment: see the module)."""
    if st.session_state.pop(PAGE_FOLLOWS_KEY, False):
        st.rerun(scope="app")
    rec = result.record
    with st.container(border=True):
        player.video(rec, result.kept, now, on_service=result.listed, max_height=CARD_VIDEO_HEIGHT)
        st.markdown(f"**{result.prompt}**" if result.prompt else "_Prompt unknown_",
                    help=None if result.prompt else "Only prompts submitted from this dashboard are known: the "
                                                    "service does not return them.")
        details = [short_id(result.task_id)]
        if rec is not None:
            details += [model_as_written(rec, result.submission),
                        f"{rec.resolution} · {rec.ratio} · {length_text(rec)}", cost_of(rec, result.submission),
                        format_time(rec.created_at, tz)]
        st.caption(" · ".join(d for d in details if d))
        line = _status_line(result, now)
        if line:
            st.markdown(line)
        review_widgets(journal, result)
        if st.button("🔍 Open alone", key=f"review.open.{result.task_id}", type="tertiary"):
            st.query_params["task"] = result.task_id
            st.rerun()


def grid(journal: Journal, results: list[Result], now: float, tz: tzinfo) -> None:
    for start in range(0, len(results), CARDS_PER_ROW):
        cols = st.columns(CARDS_PER_ROW, gap="medium")
        for col, result in zip(cols, results[start:start + CARDS_PER_ROW], strict=False):
            with col:
                card(journal, result, now, tz)


def compare(results: list[Result], now: float) -> None:
    """The chosen results side by side, then their parameters in one table."""
    cols = st.columns(len(results), gap="small")
    for col, result in zip(cols, results, strict=True):
        with col:
            player.video(result.record, result.kept, now, on_service=result.listed, max_height=CARD_VIDEO_HEIGHT)
            st.caption(f"{short_id(result.task_id)} · {result.prompt[:80] or 'prompt unknown'}")
    st.dataframe(comparison_table(results), width="stretch")


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
    max_age = 0 if st.session_state.pop(FRESH_KEY, False) else data.LIST_MAX_AGE_S
    results, problems = gather(journal, online=client is not None, max_age=max_age)
    for problem in problems:
        st.warning(problem)
    by_id = {r.task_id: r for r in results}

    task_id = st.query_params.get("task")
    if task_id:
        single(client, journal, by_id, task_id, now, tz)
        return

    batches = {b["id"]: b for b in journal.batches()}
    cols = st.columns([2, 3, 4, 1], vertical_alignment="bottom")
    with cols[3]:
        st.button("⟳ Refresh", key=REFRESH_KEY, on_click=_list_anew,
                  help=f"List the service's results again (otherwise read at most {data.LIST_MAX_AGE_S} s apart, "
                       "and at once after a submission or a deletion from this dashboard).")
    with cols[0]:
        verdict = st.selectbox("Verdict", list(VERDICT_FILTERS), format_func=VERDICT_FILTERS.get,
                               key=VERDICT_FILTER_KEY, on_change=_reset_page, persist_state="session")
    with cols[1]:
        batch = st.selectbox("Batch", [ALL_BATCHES, *batches], key=BATCH_KEY, on_change=_reset_page,
                             format_func=lambda b: "All batches" if b == ALL_BATCHES else _batch_label(batches[b]),
                             persist_state="session",
                             help="A batch is the set of tasks one submission on the Compose page created "
                                  "(variations of one idea).")
    batch_ids = {s.task_id for s in journal.batch(batch)} if batch != ALL_BATCHES else None
    shown = filter_results(results, verdict, batch_ids)
    if COMPARE_KEY in st.session_state:  # a result compared earlier may have gone since (deleted, purged)
        st.session_state[COMPARE_KEY] = [t for t in st.session_state[COMPARE_KEY] if t in by_id]
    with cols[2]:
        # Options are every result, so a comparison survives a change of filter.
        chosen = st.multiselect(f"Compare side by side (2 to {COMPARE_MAX})", list(by_id), key=COMPARE_KEY,
                                max_selections=COMPARE_MAX, persist_state="session",
                                format_func=lambda t: f"{short_id(t)} · {by_id[t].prompt[:40]}" if t in by_id else t,
                                placeholder="Pick results to compare")
        if batch_ids is not None:
            in_batch = [r.task_id for r in shown][:COMPARE_MAX]
            st.button("Compare this batch", key="review.compare_batch", disabled=len(in_batch) < 2,
                      on_click=lambda: st.session_state.update({COMPARE_KEY: in_batch}))
    chosen = [t for t in chosen if t in by_id]
    if len(chosen) >= 2:
        with st.container(border=True):
            st.markdown(f"**Comparing {len(chosen)} results**")
            compare([by_id[t] for t in chosen], now)

    if not shown:
        st.info("No succeeded results match." if results else
                "No succeeded results yet. Results appear here when tasks succeed, and kept results stay "
                "here after the service forgets them.")
        return
    pages = max(1, math.ceil(len(shown) / CARDS_PER_PAGE))
    page = 1
    if pages > 1:
        page = st.pagination(pages, key=PAGE_KEY)
    page = min(max(page, 1), pages)
    start = (page - 1) * CARDS_PER_PAGE
    st.caption(f"{len(shown)} result(s) · page {page} of {pages} · verdicts, stars and notes are saved as you go.")
    grid(journal, shown[start:start + CARDS_PER_PAGE], now, tz)


def single(client: Client | None, journal: Journal, by_id: dict[str, Result], task_id: str, now: float,
           tz: tzinfo) -> None:
    """The deep-linked task alone, larger, with its review widgets."""
    if st.button("← All results", key="review.back"):
        st.query_params.pop("task", None)
        st.rerun()
    result = by_id.get(task_id)
    if result is None:
        # Not a succeeded task the service lists, nor kept: ask for it directly (it may be running).
        loaded = load(client, journal, task_id)
        if loaded.record is None:
            st.error(f"No result {task_id}: the service does not have it and nothing was kept.")
            return
        result = Result(task_id, loaded.record, journal.submission(task_id), journal.review(task_id),
                        journal.kept(task_id), listed=loaded.live)
    left, right = st.columns([3, 2], gap="large")
    with left:
        player.video(result.record, result.kept, now, on_service=result.listed, max_height=540)
    with right:
        st.subheader(task_id, anchor=False)
        st.markdown(f"> {result.prompt}" if result.prompt else "_Prompt unknown (not submitted from here)_")
        line = _status_line(result, now)
        if line:
            st.markdown(line)
        if result.record is not None:
            rec = result.record
            st.caption(f"{model_as_written(rec, result.submission)} · {rec.resolution} · {rec.ratio} · "
                       f"{length_text(rec)} · seed {rec.seed} · {cost_of(rec, result.submission)} · "
                       f"created {format_time(rec.created_at, tz)}")
        review_widgets(journal, result)
        _link_to_tasks(task_id)
