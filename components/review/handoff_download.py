"""Hand the cut to the editor (issue 38): the approved versions among those shown, each with its kept
copy, as an OpenTimelineIO timeline, a CMX 3600 EDL or FCPXML (dailies.edit_handoff), the review's
comments as markers on their frames. Oldest first, as the reel maker picks them; `dailies export`
writes the same from the shell, in any order.

Built in the run while the expander is open: a timeline of names, frames and markers is a few
kilobytes, made in milliseconds, so there is no "prepare" step as the PDF report has.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from datetime import UTC, datetime

import streamlit as st

from components.common.shot_labels import labels_among_many
from components.review.results import Result
from components.review.state_keys import HANDOFF_FORMAT_KEY
from dailies.handoff_formats import FORMATS
from dailies.journal import Journal
from dailies.spec.results import VIDEO_NAME

FORMAT_LABELS = {"otio": "OpenTimelineIO (.otio)", "edl": "EDL, CMX 3600 (.edl)",
                 "fcpxml": "Final Cut Pro XML (.fcpxml)"}


def handed_off(results: Sequence[Result], journal: Journal, fmt: str, now: float,
               keep_order: bool = False) -> tuple[str, int, list[str]]:
    """The file's text, how many clips it holds, and the versions left out with why: oldest first, or
    in the order given (`keep_order`: a reel's)."""
    from dailies.edit_handoff import shots_from_journal, timeline, write

    ordered = list(results) if keep_order else sorted(results, key=lambda r: r.created_at)
    by_id = {r.task_id: r for r in ordered}
    names = dict(zip(by_id, labels_among_many([r.prompt for r in ordered],
                                              [r.record.seed if r.record else None for r in ordered], width=40),
                     strict=True))

    def media_of(task_id: str) -> str | None:
        kept = by_id[task_id].kept.get(VIDEO_NAME)
        return None if kept is None else str(kept.media(now))

    def record_of(task_id: str) -> dict | None:
        record = by_id[task_id].record
        return None if record is None else record.model_dump()

    shots, left = shots_from_journal(journal, list(by_id), media_of=media_of, record_of=record_of,
                                     name_of=lambda t: f"{names[t] or 'shot'} · {t[-12:]}")
    if not shots:
        return "", 0, left
    cut = timeline(shots, f"Dailies approved {datetime.fromtimestamp(now, UTC):%Y-%m-%d %H:%M}")
    return write(cut, fmt), len(shots), left


def render_handoff(results: Sequence[Result], journal: Journal, now: float | None = None) -> None:
    now = time.time() if now is None else now
    fmt = st.segmented_control("Format", list(FORMATS), format_func=FORMAT_LABELS.get, default="otio",
                               key=HANDOFF_FORMAT_KEY) or "otio"
    try:
        text, clips, left = handed_off(results, journal, fmt, now)
    except Exception as exc:  # the page goes on; the message says what failed
        st.error(f"Could not make the timeline: {exc}")
        return
    left_out = [reason for reason in left if not reason.endswith(": not approved")]
    if clips:
        _, ending, mime = FORMATS[fmt]
        st.download_button(f"Download the cut ({clips} approved shot{'s' if clips != 1 else ''})", text,
                           file_name=f"dailies-cut-{datetime.fromtimestamp(now, UTC):%Y%m%d-%H%M}{ending}",
                           mime=mime, key=f"{HANDOFF_FORMAT_KEY}.download", on_click="ignore", type="primary")
        st.caption("Each shot is a clip of its kept copy; comments on a frame or a time are markers (red where "
                   "something was drawn). Resolve, Premiere and Final Cut read these files. With the clips, for "
                   "an editor off this network: `dailies export --media-dir`.")
    else:
        st.caption("No approved version with a kept copy among those shown: approve shots, and keep them.")
    if left_out:
        st.caption("Left out: " + "; ".join(left_out))
