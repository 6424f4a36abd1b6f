"""How a task looks in a table or a caption: status emoji, length, times, the rows of the task table.

Pure functions (pandas, no Streamlit), so the task table, the review grid and the tests share them.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from datetime import UTC, datetime, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import pandas as pd

from dailies.journal import Submission
from dailies.spec.catalog import Region
from dailies.spec.models import TaskRecord, TaskRequest
from dailies.spec.prices import Charge
from dailies.spec.statuses import ACTIVE, TaskStatus

from . import costs
from . import countdown as cd

STATUS_EMOJI: dict[str, str] = {
    TaskStatus.QUEUED: "⏳",
    TaskStatus.RUNNING: "⚙️",
    TaskStatus.SUCCEEDED: "✅",
    TaskStatus.FAILED: "❌",
    TaskStatus.CANCELLED: "🚫",
    TaskStatus.EXPIRED: "⌛",
}

# The table's columns, in order. Tests and column_config refer to these names.
COLUMNS = ("status", "id", "prompt", "link expires", "deadline", "model", "resolution", "ratio", "length", "tokens",
           "cost", "created", "updated", "record deleted", "kept")


def status_label(status: str) -> str:
    """'✅ succeeded'."""
    return f"{STATUS_EMOJI.get(status, '•')} {status}"


def is_active(record: TaskRecord) -> bool:
    """Queued or running: its row still changes, so the table keeps refreshing."""
    return record.status in ACTIVE


def any_active(records: Iterable[TaskRecord]) -> bool:
    return any(is_active(r) for r in records)


def length_text(record: TaskRecord) -> str:
    """'5 s', or '121 frames' for a task created with `frames` (the record carries one, never both)."""
    if record.frames is not None:
        return f"{record.frames} frames"
    if record.duration is not None:
        return "model picks" if record.duration == -1 else f"{record.duration} s"
    return ""


def tokens(record: TaskRecord) -> int | None:
    return record.usage.total_tokens if record.usage is not None else None


def parse_task_ids(text: str) -> list[str]:
    """Task ids typed one per line, or separated by commas or spaces; duplicates dropped, order kept."""
    seen: dict[str, None] = {}
    for part in re.split(r"[\s,;]+", text or ""):
        part = part.strip().strip("'\"")
        if part:
            seen.setdefault(part)
    return list(seen)


def timezone(name: str | None) -> tzinfo:
    """The browser's time zone (st.context.timezone), or UTC when unknown or unrecognised."""
    if name:
        try:
            return ZoneInfo(name)
        except (ZoneInfoNotFoundError, ValueError):
            pass
    return UTC


def local_time(ts: int | float | None, tz: tzinfo) -> datetime | None:
    return None if ts is None else datetime.fromtimestamp(ts, tz)


def format_time(ts: int | float | None, tz: tzinfo) -> str:
    """'22 Nov 04:40' (with the year only when it is not this year's)."""
    moment = local_time(ts, tz)
    if moment is None:
        return "—"
    now = datetime.now(tz)
    return moment.strftime("%d %b %H:%M" if moment.year == now.year else "%d %b %Y %H:%M")


def format_age(seconds: float) -> str:
    """'just now', '4 min ago', '3 h 5 min ago', '2 d 1 h ago'."""
    if seconds < 60:
        return "just now"
    return f"{cd.format_remaining(seconds)} ago"


NO_PROMPT = "(no prompt: inputs only)"  # a task made of inputs alone (images, videos)


def prompt_of(submission: Submission | None, stored: TaskRequest | None = None) -> str:
    """The prompt the dashboard sent, else the one in the service's stored request (a task made with
    the API, the CLI, the SDK: components/stored_requests.py); '' when neither is known (the list
    endpoint does not return prompts, spec 2.5)."""
    if submission is not None:
        return submission.prompt or NO_PROMPT
    if stored is not None:
        return stored.prompt or NO_PROMPT
    return ""


def model_as_written(record: TaskRecord | None, submission: Submission | None) -> str:
    """The model as the person wrote it: the endpoint id where one was used (with the model the
    service says it ran), else the record's model id."""
    served = record.model if record is not None and record.model else ""
    written = submission.model if submission is not None else ""
    if written and served and written != served:
        return f"{written} ({served})"
    return written or served


def cost_of(record: TaskRecord, submission: Submission | None, charge: Charge | None = None,
            region: Region | None = None) -> str:
    """The cost cell: the service's ledger line when it keeps one (`charge`: what the task is charged,
    or held), else priced here from the usage (or while the task runs, the estimate of what this
    dashboard sent) at the price of `region`, the service's."""
    if charge is not None:
        return costs.charge_text(charge)
    return costs.cost_text(costs.record_cost(record, submission.request if submission else None, region))


def _countdown_cell(record: TaskRecord, kind: cd.Kind, now: float) -> str:
    clock = cd.countdown(record, kind, now)
    if clock is None:
        return ""
    return f"{clock.emoji} {cd.format_remaining(clock.remaining_s)}"


def table_rows(records: Iterable[TaskRecord], submissions: Mapping[str, Submission], kept_ids: set[str],
               now: float, tz: tzinfo, stored: Mapping[str, TaskRequest] | None = None,
               charges: Mapping[str, Charge] | None = None, region: Region | None = None) -> pd.DataFrame:
    """The rows of the task table, one per record, in the order given (the service's: newest first).
    `stored`: the service's stored requests of tasks not submitted from here, for their prompts.
    `charges`: the service's ledger lines, the cost of the tasks they cover; `region`: the service's,
    whose prices the other rows are priced at."""
    stored = stored or {}
    charges = charges or {}
    rows = []
    for r in records:
        rows.append({
            "status": status_label(r.status),
            "id": r.id,
            "prompt": prompt_of(submissions.get(r.id), stored.get(r.id)),
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


def record_from_json(data: Mapping[str, object]) -> TaskRecord | None:
    """A record saved in the journal, or None when it no longer fits the model."""
    try:
        return cd.as_record(data)
    except ValueError:
        return None
