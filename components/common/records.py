"""A task record as every page shows it: times in the viewer's zone, length, tokens, the model as
written, the prompt, the cost; a journal's saved record read back.

Pure functions (no Streamlit), shared by the task table and detail, the Review grid and cards, the
guest page's comments and the tests.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime, tzinfo
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

from components.common import costs
from components.common import countdown as cd
from dailies.journal import Submission
from dailies.spec.catalog import Region
from dailies.spec.models import TaskRecord, TaskRequest
from dailies.spec.prices import Charge


def length_text(record: TaskRecord) -> str:
    """'5 s', or '121 frames' for a task created with `frames` (the record carries one, never both)."""
    if record.frames is not None:
        return f"{record.frames} frames"
    if record.duration is not None:
        return "model picks" if record.duration == -1 else f"{record.duration} s"
    return ""


def tokens(record: TaskRecord) -> int | None:
    return record.usage.total_tokens if record.usage is not None else None


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


NO_PROMPT = "(no prompt: inputs only)"  # a task made of inputs alone (images, videos)


def prompt_of(submission: Submission | None, stored: TaskRequest | None = None) -> str:
    """The prompt the dashboard sent, else the one in the service's stored request (a task made with
    the API, the CLI, the SDK: components/common/stored_requests.py); '' when neither is known (the list
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


def record_from_json(data: Mapping[str, object]) -> TaskRecord | None:
    """A record saved in the journal, or None when it no longer fits the model."""
    try:
        return cd.as_record(data)
    except ValueError:
        return None
