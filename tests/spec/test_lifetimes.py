"""The lifetimes of a task, from its timestamps and status."""

from __future__ import annotations

import pytest

from dailies.spec import limits as L
from dailies.spec.lifetimes import (
    Lifetimes,
    execution_deadline,
    lifetimes,
    oldest_kept,
    record_expires_at,
    result_url_expires_at,
)
from dailies.spec.models import TaskRecord
from dailies.spec.statuses import TaskStatus

CREATED, DONE = 1_750_000_000, 1_750_000_600
HOUR, DAY = 3600, 24 * 3600


def test_timestamps() -> None:
    assert result_url_expires_at(DONE) == DONE + DAY
    assert result_url_expires_at(DONE + 0.9) == DONE + DAY  # whole seconds, as the records give them
    assert record_expires_at(CREATED) == CREATED + 7 * DAY
    assert execution_deadline(CREATED) == CREATED + L.EXECUTION_EXPIRES_DEFAULT == CREATED + 48 * HOUR
    assert execution_deadline(CREATED, 2 * HOUR) == CREATED + 2 * HOUR
    assert oldest_kept(CREATED + 7 * DAY) == CREATED  # the list window's start, the purge's cutoff


def record(status: str, **fields) -> TaskRecord:
    return TaskRecord(id="cgt-20250101000000-abcde", status=status,
                      **{"created_at": CREATED, "updated_at": DONE, **fields})


@pytest.mark.parametrize(("status", "expected"), [
    (TaskStatus.QUEUED, Lifetimes(CREATED + 2 * HOUR, None, CREATED + 7 * DAY)),
    (TaskStatus.RUNNING, Lifetimes(CREATED + 2 * HOUR, None, CREATED + 7 * DAY)),
    (TaskStatus.SUCCEEDED, Lifetimes(None, DONE + DAY, CREATED + 7 * DAY)),
    # A cancelled task's record stays (DELETE does not remove it) until the purge, like the others.
    (TaskStatus.CANCELLED, Lifetimes(None, None, CREATED + 7 * DAY)),
    (TaskStatus.FAILED, Lifetimes(None, None, CREATED + 7 * DAY)),
    (TaskStatus.EXPIRED, Lifetimes(None, None, CREATED + 7 * DAY)),
])
def test_the_clocks_that_run_in_each_status(status, expected) -> None:
    assert lifetimes(record(status, execution_expires_after=2 * HOUR)) == expected


def test_missing_times_stop_their_clocks_and_an_unset_window_is_the_default() -> None:
    assert lifetimes(record("queued", created_at=None)) == Lifetimes(None, None, None)
    assert lifetimes(record("succeeded", updated_at=None)).result_url_expires_at is None
    assert lifetimes(record("queued")).execution_deadline == CREATED + L.EXECUTION_EXPIRES_DEFAULT


def test_a_status_this_version_does_not_know_runs_only_the_record_clock() -> None:
    assert lifetimes(record("paused")) == Lifetimes(None, None, CREATED + 7 * DAY)


def test_any_object_with_the_fields_will_do() -> None:
    class Row:  # as the service's stored rows are read
        status, created_at, updated_at, execution_expires_after = "running", CREATED, CREATED, None

    assert lifetimes(Row()).execution_deadline == CREATED + L.EXECUTION_EXPIRES_DEFAULT
