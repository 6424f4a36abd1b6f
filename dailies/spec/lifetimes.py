"""How long each part of a task lives (spec 2.5 and DESIGN.md section 3), computed in one place.

- execution deadline: a task still queued or running `execution_expires_after` seconds (default
  48 h) after its creation becomes `expired`;
- result link: the video and last-frame URLs work for 24 h from success;
- record: kept 7 days from creation, whatever its status (a cancelled task's record too, which
  `DELETE` does not remove); the list window is [now - 7 days, now) and the purge removes what
  was created before it.

Pure arithmetic on epoch seconds. The timestamp functions serve whoever holds the times (the
service's rows, the dashboard's journal); `lifetimes` reads a record-like object and applies the
status rules: which clocks run for a task in its current status.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from . import limits as L
from .statuses import ACTIVE, TaskStatus


def execution_deadline(created_at: float, execution_expires_after: int | None = None) -> int:
    """When a task that has not finished by then turns `expired`."""
    return int(created_at) + (execution_expires_after or L.EXECUTION_EXPIRES_DEFAULT)


def result_url_expires_at(succeeded_at: float) -> int:
    """When the result URLs of a task that succeeded at `succeeded_at` stop working."""
    return int(succeeded_at) + L.RESULT_URL_VALIDITY_SECONDS


def record_expires_at(created_at: float) -> int:
    """When the record (and the files) of a task created at `created_at` are purged."""
    return int(created_at) + L.RECORD_RETENTION_SECONDS


def oldest_kept(now: float) -> int:
    """The creation time of the oldest record still kept at `now`: the start of the list window
    [oldest_kept(now), now); the purge removes records created before it."""
    return int(now) - L.RECORD_RETENTION_SECONDS


class RecordLike(Protocol):
    """What `lifetimes` reads: a `TaskRecord`, a stored row, anything with these attributes."""

    @property
    def status(self) -> str: ...
    @property
    def created_at(self) -> int | None: ...
    @property
    def updated_at(self) -> int | None: ...
    @property
    def execution_expires_after(self) -> int | None: ...


@dataclass(frozen=True)
class Lifetimes:
    """The clocks of one task in its current status; None where a clock does not run."""

    execution_deadline: int | None  # queued or running only
    result_url_expires_at: int | None  # succeeded only
    record_expires_at: int | None  # every status


def lifetimes(record: RecordLike) -> Lifetimes:
    """The clocks that run for `record`. A succeeded task changes no more, so its `updated_at` is
    its success time; a cancelled, failed or expired one has only its record left to lose."""
    created, status = record.created_at, record.status
    return Lifetimes(
        execution_deadline=(execution_deadline(created, record.execution_expires_after)
                            if status in ACTIVE and created is not None else None),
        result_url_expires_at=(result_url_expires_at(record.updated_at)
                               if status == TaskStatus.SUCCEEDED and record.updated_at is not None else None),
        record_expires_at=record_expires_at(created) if created is not None else None,
    )
