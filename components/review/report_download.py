"""The review report of a selection (issue 25): "Prepare report" builds the PDF and the CSV
(dailies.review_report) from the journal as it is now, then "Report (PDF)" and "Report (CSV)"
download them. Nothing is built until asked: a PDF with thumbnails takes a moment, and most runs of
the page never want one.

Built on a button press, not in a download button's data callable: the callable runs on another
thread, where an error could not be shown, and the journal is read in the page's own run.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

import streamlit as st

from components.common.keep import LinkExpired
from components.common.keep import plan as keep_plan
from components.review.results import Result
from components.review.state_keys import REPORT_DOWNLOAD_KEY
from dailies.client import Client, DailiesError
from dailies.journal import Journal
from dailies.review_report import (
    entries_from_journal,
    thumbnail_from_kept,
    thumbnail_of,
    to_csv,
    to_pdf,
    video_from_kept,
)
from dailies.spec.models import TaskRecord
from dailies.spec.results import LAST_FRAME_NAME, VIDEO_NAME

KEY = REPORT_DOWNLOAD_KEY


# A result fetched only for its thumbnail is read up to this size (a last frame is far smaller).
THUMBNAIL_SOURCE_MAX_BYTES = 256 * 1024 * 1024


class _TooLarge(Exception):
    pass


def live_thumbnail(client: Client, record: TaskRecord, now: float) -> bytes | None:
    """A thumbnail of a version nobody kept, from its live links: the last frame where there is one,
    else the video's first frame. None when the links are dead or the file cannot be read."""
    try:
        files = dict(keep_plan(record, now).files)
    except LinkExpired:
        return None

    def bounded(done: int, _total: int | None) -> None:
        if done > THUMBNAIL_SOURCE_MAX_BYTES:
            raise _TooLarge

    with tempfile.TemporaryDirectory(prefix="dailies-thumb-") as folder:
        for name in (LAST_FRAME_NAME, VIDEO_NAME):
            if name not in files:
                continue
            try:
                path = client.download(files[name], Path(folder) / name, progress=bounded)
            except (DailiesError, OSError, _TooLarge):
                continue
            thumbnail = thumbnail_of(path)
            if thumbnail is not None:
                return thumbnail
    return None


def build(results: Sequence[Result], journal: Journal, now: float,
          title: str = "Review report", client: Client | None = None) -> tuple[bytes, bytes]:
    """The PDF and the CSV (UTF-8 with a byte order mark, so a spreadsheet reads Chinese right) of
    these versions, in this order; thumbnails from their kept copies, else (with a client) from their
    live links, so every version listed has its frame."""
    ids = [r.task_id for r in results]
    thumbnails = {r.task_id: thumbnail_from_kept(r.kept) for r in results}
    if client is not None:
        for r in results:
            if thumbnails[r.task_id] is None and r.record is not None:
                thumbnails[r.task_id] = live_thumbnail(client, r.record, now)
    # Numbered among the page's results (every version of the shots shown), as the cards number them.
    drawn = {r.task_id for r in results if any(c.drawing and c.frame is not None for c in r.comments)}
    entries = entries_from_journal(
        journal, ids, records={r.task_id: r.record for r in results},
        thumbnails=thumbnails,
        prompts={r.task_id: r.prompt for r in results if r.prompt}, results=ids,
        videos={tid: video_from_kept(r.kept) for r in results if (tid := r.task_id) in drawn})
    return to_pdf(entries, title, now=now), to_csv(entries).encode("utf-8-sig")


def file_stem(now: float) -> str:
    return "review-report-" + datetime.fromtimestamp(now, UTC).strftime("%Y%m%d-%H%M")


def render_report_buttons(results: Sequence[Result], journal: Journal, now: float | None = None,
                          key: str = KEY, title: str = "Review report", client: Client | None = None) -> None:
    """"Prepare report" for these versions, then the two downloads of what it built. A changed
    selection asks to prepare again (the built report is kept per selection in the session)."""
    now = time.time() if now is None else now
    ids = tuple(r.task_id for r in results)
    if not ids:
        st.caption("Select versions to make a report of them.")
        return
    built_key = f"{key}.built"
    built = st.session_state.get(built_key)
    count = f"{len(ids)} version{'s' if len(ids) != 1 else ''}"
    if st.button(f"Prepare report ({count})", key=f"{key}.prepare",
                 help="A PDF (thumbnail, prompt, status, stars and comments with timecodes per version) and a CSV "
                      "(a row per comment)."):
        try:
            with st.spinner("Preparing the report…"):
                pdf, csv_bytes = build(results, journal, now, title, client)
        except Exception as exc:  # the page goes on; the message says what failed
            st.error(f"Could not prepare the report: {exc}")
            st.session_state.pop(built_key, None)
            return
        built = st.session_state[built_key] = (ids, file_stem(now), pdf, csv_bytes)
    if built is None or built[0] != ids:
        return
    _, stem, pdf, csv_bytes = built
    left, right = st.columns(2)
    with left:
        st.download_button("Report (PDF)", pdf, file_name=f"{stem}.pdf", mime="application/pdf",
                           key=f"{key}.pdf", on_click="ignore")
    with right:
        st.download_button("Report (CSV)", csv_bytes, file_name=f"{stem}.csv", mime="text/csv",
                           key=f"{key}.csv", on_click="ignore")
