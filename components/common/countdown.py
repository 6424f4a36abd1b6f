"""Countdowns of a task: when its result link dies, when its record is purged, when it expires unrun.

Pure arithmetic on a task record and a clock reading (no Streamlit here), so the page and the tests
agree on every boundary. When each clock runs out, and for which statuses it runs at all, is
`dailies.spec.lifetimes` (the service computes the same moments there); this module adds how much
time is left, how urgent that is (colour and emoji), and how to say it.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Literal

from dailies.spec import limits as L
from dailies.spec.lifetimes import lifetimes
from dailies.spec.models import TaskRecord

Level = Literal["ok", "warn", "critical", "expired"]
Kind = Literal["execution", "result_url", "record"]

HOUR = 3600

# Thresholds (seconds left) below which a countdown turns orange, then red. Fixed for the two clocks
# of fixed length, in proportion for the execution deadline, whose length the request chooses
# (1 h to 72 h).
RESULT_URL_WARN_S = 6 * HOUR  # a working day's notice to keep a result
RESULT_URL_CRITICAL_S = 1 * HOUR
RECORD_WARN_S = 2 * L.DAY
RECORD_CRITICAL_S = 12 * HOUR
EXECUTION_WARN_FRACTION = 0.25
EXECUTION_CRITICAL_FRACTION = 0.10

LEVEL_COLOURS: dict[Level, str] = {"ok": "green", "warn": "orange", "critical": "red", "expired": "gray"}
LEVEL_EMOJI: dict[Level, str] = {"ok": "🟢", "warn": "🟠", "critical": "🔴", "expired": "⚫"}

LABELS: dict[Kind, str] = {
    "execution": "Execution deadline",
    "result_url": "Result link expires",
    "record": "Record deleted",
}


@dataclass(frozen=True)
class Countdown:
    """One clock of a task. `remaining_s` is negative once it has run out."""

    kind: Kind
    label: str
    expires_at: int
    remaining_s: float
    level: Level

    @property
    def text(self) -> str:
        """'Result link expires in 23 h 12 min', or '... expired'."""
        if self.level == "expired":
            return f"{self.label}: expired"
        return f"{self.label} in {format_remaining(self.remaining_s)}"

    @property
    def colour(self) -> str:
        return LEVEL_COLOURS[self.level]

    @property
    def emoji(self) -> str:
        return LEVEL_EMOJI[self.level]


def as_record(record: TaskRecord | Mapping[str, Any]) -> TaskRecord:
    """A record as the model, whether it came from the client or from the journal (a dict)."""
    return record if isinstance(record, TaskRecord) else TaskRecord.model_validate(dict(record))


def level_for(remaining_s: float, warn_s: float, critical_s: float) -> Level:
    """ok, warn, critical or expired for the seconds left; the boundaries belong to the worse level."""
    if remaining_s <= 0:
        return "expired"
    if remaining_s <= critical_s:
        return "critical"
    if remaining_s <= warn_s:
        return "warn"
    return "ok"


def result_url_expires_at(record: TaskRecord | Mapping[str, Any]) -> int | None:
    """When the video and last-frame URLs stop working, for a succeeded task; else None."""
    return lifetimes(as_record(record)).result_url_expires_at


def deadlines(record: TaskRecord | Mapping[str, Any], now: float) -> list[Countdown]:
    """Every clock that applies to the task, soonest first in the order people act on them:
    the execution deadline (queued or running), the result link (succeeded), the record."""
    rec = as_record(record)
    clocks = lifetimes(rec)
    out: list[Countdown] = []
    if clocks.execution_deadline is not None:
        window = clocks.execution_deadline - (rec.created_at or 0)  # the length the request chose
        out.append(_countdown("execution", clocks.execution_deadline, now, window * EXECUTION_WARN_FRACTION,
                              window * EXECUTION_CRITICAL_FRACTION))
    if clocks.result_url_expires_at is not None:
        out.append(_countdown("result_url", clocks.result_url_expires_at, now, RESULT_URL_WARN_S,
                              RESULT_URL_CRITICAL_S))
    if clocks.record_expires_at is not None:
        out.append(_countdown("record", clocks.record_expires_at, now, RECORD_WARN_S, RECORD_CRITICAL_S))
    return out


def countdown(record: TaskRecord | Mapping[str, Any], kind: Kind, now: float) -> Countdown | None:
    """One clock of the task, or None when it does not apply (e.g. a link of an unfinished task)."""
    return next((c for c in deadlines(record, now) if c.kind == kind), None)


def _countdown(kind: Kind, expires_at: int, now: float, warn_s: float, critical_s: float) -> Countdown:
    remaining = expires_at - now
    return Countdown(kind, LABELS[kind], expires_at, remaining, level_for(remaining, warn_s, critical_s))


def format_remaining(seconds: float) -> str:
    """Time left, to the precision people need: '6 d 23 h', '47 h 59 min', '4 min', '< 1 min', 'expired'.

    Rounded down, so a countdown never promises more time than is left.
    """
    if seconds <= 0:
        return "expired"
    total = int(seconds)
    # Hours up to two days ("47 h 59 min" reads better than "1 d 23 h" for a 48 h deadline).
    if total >= 2 * L.DAY:
        days, rest = divmod(total, L.DAY)
        hours = rest // HOUR
        return f"{days} d {hours} h" if hours else f"{days} d"
    hours, rest = divmod(total, HOUR)
    minutes = rest // 60
    if hours:
        return f"{hours} h {minutes} min" if minutes else f"{hours} h"
    if minutes:
        return f"{minutes} min"
    return "< 1 min"


def _alive_url(record: TaskRecord | Mapping[str, Any], field: str, now: float) -> str | None:
    rec = as_record(record)
    url = getattr(rec.content, field, None) if rec.content is not None else None
    expires = result_url_expires_at(rec)
    if not url or expires is None or now >= expires:
        return None
    return url


def playable_url(record: TaskRecord | Mapping[str, Any], now: float) -> str | None:
    """The video URL while it still works; None for an unfinished task or an expired link, so an
    expired link is never offered for playback (the caller falls back to a kept copy)."""
    return _alive_url(record, "video_url", now)


def playable_last_frame_url(record: TaskRecord | Mapping[str, Any], now: float) -> str | None:
    """The last-frame URL while it still works (same 24 h as the video), else None."""
    return _alive_url(record, "last_frame_url", now)
