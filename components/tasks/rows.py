"""The task table's rows and filters' words: status emoji and label, the status in words with its time,
active tasks, typed task ids, ages, countdown cells, which picture a row shows. Pure functions (pandas, no
Streamlit), so the table and the tests share them; how a record reads on every page (times, length, model,
prompt, cost) is `components.common.records`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import tzinfo

import pandas as pd

from components.common import countdown as cd
from components.common import outbound
from components.common.records import cost_of, length_text, local_time, model_as_written, prompt_of, tokens
from components.common.shot_labels import labels_among_many, shorten
from dailies.journal import Submission
from dailies.spec.catalog import Region
from dailies.spec.models import TaskRecord, TaskRequest
from dailies.spec.prices import Charge
from dailies.spec.statuses import ACTIVE, TaskStatus

STATUS_EMOJI: dict[str, str] = {
    TaskStatus.QUEUED: "⏳",
    TaskStatus.RUNNING: "⚙️",
    TaskStatus.SUCCEEDED: "✅",
    TaskStatus.FAILED: "❌",
    TaskStatus.CANCELLED: "🚫",
    TaskStatus.EXPIRED: "⌛",
}

# The table's columns, in order. Tests and column_config refer to these names.
COLUMNS = ("frame", "status", "id", "prompt", "link expires", "deadline", "model", "resolution", "ratio", "length",
           "tokens", "cost", "created", "updated", "record deleted", "kept")


def status_label(status: str) -> str:
    """'✅ succeeded'."""
    return f"{STATUS_EMOJI.get(status, '•')} {status}"


def clock(seconds: float) -> str:
    """'0:42', '12:05', '1:02:03': how long a task has waited or run so far."""
    minutes, secs = divmod(max(0, int(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def status_cell(record: TaskRecord, now: float) -> str:
    """The status in words with its time: '⚙️ running 0:42' since it went running (the record's last change),
    '⏳ queued 0:10' since it was made, '✅ succeeded 2 min ago' since it finished; the label alone without
    the time it needs."""
    label = status_label(record.status)
    if record.status == TaskStatus.QUEUED and record.created_at is not None:
        return f"{label} {clock(now - record.created_at)}"
    if record.status == TaskStatus.RUNNING:
        if record.updated_at is not None:
            return f"{label} {clock(now - record.updated_at)}"
        if record.created_at is not None:  # when it started is unknown: how long since it was made
            return f"{label}, made {clock(now - record.created_at)} ago"
    elif not is_active(record) and record.updated_at is not None:
        return f"{label} {format_age(max(0.0, now - record.updated_at))}"
    return label


def frame_cell(record: TaskRecord, thumbnail: str | None, now: float) -> str | None:
    """The row's picture: the thumbnail of its kept copy (a data URL) once made, else its live last frame (a
    task made with `return_last_frame`, while the link works), else none."""
    return thumbnail or outbound.browser_url(cd.playable_last_frame_url(record, now))


def is_active(record: TaskRecord) -> bool:
    """Queued or running: its row still changes, so the table keeps refreshing."""
    return record.status in ACTIVE


def any_active(records: Iterable[TaskRecord]) -> bool:
    return any(is_active(r) for r in records)


def parse_task_ids(text: str) -> list[str]:
    """Task ids typed one per line, or separated by commas or spaces; duplicates dropped, order kept."""
    seen: dict[str, None] = {}
    for part in re.split(r"[\s,;]+", text or ""):
        part = part.strip().strip("'\"")
        if part:
            seen.setdefault(part)
    return list(seen)


def format_age(seconds: float) -> str:
    """'just now', '4 min ago', '3 h 5 min ago', '2 d 1 h ago'."""
    if seconds < 60:
        return "just now"
    return f"{cd.format_remaining(seconds)} ago"


def _countdown_cell(record: TaskRecord, kind: cd.Kind, now: float) -> str:
    clock = cd.countdown(record, kind, now)
    if clock is None:
        return ""
    return f"{clock.emoji} {cd.format_remaining(clock.remaining_s)}"


def table_rows(records: Iterable[TaskRecord], submissions: Mapping[str, Submission], kept_ids: set[str],
               now: float, tz: tzinfo, stored: Mapping[str, TaskRequest] | None = None,
               charges: Mapping[str, Charge] | None = None, region: Region | None = None,
               thumbnails: Mapping[str, str] | None = None) -> pd.DataFrame:
    """The rows of the task table, one per record, in the order given (the service's: newest first).
    `stored`: the service's stored requests of tasks not submitted from here, for their prompts.
    `charges`: the service's ledger lines, the cost of the tasks they cover; `region`: the service's,
    whose prices the other rows are priced at. `thumbnails`: data URLs of kept copies' thumbnails."""
    stored = stored or {}
    charges = charges or {}
    thumbnails = thumbnails or {}
    records = list(records)
    prompts = [prompt_of(submissions.get(r.id), stored.get(r.id)) for r in records]
    # Variations share their prompt's start: those rows show the start once and then what differs.
    labels = labels_among_many(prompts, [r.seed for r in records])
    rows = []
    for r, prompt, label in zip(records, prompts, labels, strict=True):
        rows.append({
            "frame": frame_cell(r, thumbnails.get(r.id), now) or "",  # not "None": an empty cell
            "status": status_cell(r, now),
            "id": r.id,
            "prompt": label if prompt and " · " in label and label != shorten(prompt) else prompt,
            "model": model_as_written(r, submissions.get(r.id)),
            "resolution": r.resolution or "",
            "ratio": r.ratio or "",
            "length": length_text(r),
            "tokens": tokens(r),
            "cost": cost_of(r, submissions.get(r.id), charges.get(r.id), region),
            "created": local_time(r.created_at, tz),
            "updated": local_time(r.updated_at, tz),
            "deadline": _countdown_cell(r, "execution", now),
            "link expires": _countdown_cell(r, "result_url", now),
            "record deleted": _countdown_cell(r, "record", now),
            "kept": "💾" if r.id in kept_ids else "",
        })
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    frame["tokens"] = frame["tokens"].astype("Int64")
    return frame
