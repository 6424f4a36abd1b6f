"""The statuses of a task (spec 2.5) and the sets of them that the service, the client, the CLI
and the dashboard act on, written once.

    queued ──> running ──> succeeded | failed        (expired: queued or running past its deadline;
       └──> cancelled                                 cancelled: a queued task asked to stop)

Members are `str`s (`TaskStatus.SUCCEEDED == "succeeded"`), so they compare, hash, serialize and
bind in SQL as the plain values the API sends. A task record's `status` stays an open `str`
(`TaskRecord`): a newer server may add a status, and old clients must not break on it.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Literal, get_args


class TaskStatus(StrEnum):
    QUEUED = "queued"
    RUNNING = "running"
    CANCELLED = "cancelled"
    SUCCEEDED = "succeeded"
    FAILED = "failed"
    EXPIRED = "expired"


# Not finished yet: the execution deadline still runs (an `expired` task was one of these).
ACTIVE: frozenset[TaskStatus] = frozenset({TaskStatus.QUEUED, TaskStatus.RUNNING})
# Finished: the status changes no more.
TERMINAL: frozenset[TaskStatus] = frozenset(TaskStatus) - ACTIVE
# Terminal tasks whose record `DELETE` removes; a cancelled task's record is kept until it is purged.
DELETABLE: frozenset[TaskStatus] = TERMINAL - {TaskStatus.CANCELLED}
# The values `filter.status` takes (spec 4.2): every status but `expired`, in the spec's order.
LISTABLE_FILTERS: tuple[TaskStatus, ...] = tuple(s for s in TaskStatus if s is not TaskStatus.EXPIRED)
# The statuses a callback is sent for (DESIGN.md section 3): a cancellation is not announced.
CALLBACK_STATUSES: frozenset[TaskStatus] = frozenset(TaskStatus) - {TaskStatus.CANCELLED}
# The callbacks whose delivery is retried (at most `limits.CALLBACK_MAX_RETRIES` times).
RETRIED_CALLBACK_STATUSES: frozenset[TaskStatus] = frozenset({TaskStatus.SUCCEEDED, TaskStatus.FAILED})

# `LISTABLE_FILTERS` as a type, for the list query's validation and OpenAPI schema and for typed
# signatures (`status: FilterStatus | None`). A type cannot be built from a tuple, so it is spelled
# out here, beside the tuple, and checked against it when this module is imported.
FilterStatus = Literal["queued", "running", "cancelled", "succeeded", "failed"]
if get_args(FilterStatus) != LISTABLE_FILTERS:  # pragma: no cover - a contradiction in this file
    raise AssertionError("FilterStatus and LISTABLE_FILTERS disagree")
