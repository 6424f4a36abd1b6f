"""The task statuses and the sets of them, written once."""

from __future__ import annotations

import json
from typing import get_args

from dailies.spec.models import ListTasksQuery, TaskRecord
from dailies.spec.statuses import (
    ACTIVE,
    CALLBACK_STATUSES,
    DELETABLE,
    LISTABLE_FILTERS,
    RETRIED_CALLBACK_STATUSES,
    TERMINAL,
    FilterStatus,
    TaskStatus,
)

ALL = ("queued", "running", "cancelled", "succeeded", "failed", "expired")


def test_the_statuses_of_the_spec() -> None:
    assert tuple(TaskStatus) == ALL
    assert TaskStatus.SUCCEEDED == "succeeded" and json.dumps(TaskStatus.FAILED) == '"failed"'
    assert "queued" in ACTIVE and TaskStatus.QUEUED in {"queued"}


def test_the_sets() -> None:
    assert ACTIVE == {"queued", "running"}
    assert TERMINAL == {"succeeded", "failed", "expired", "cancelled"} and not ACTIVE & TERMINAL
    assert DELETABLE == {"succeeded", "failed", "expired"}
    assert LISTABLE_FILTERS == ("queued", "running", "cancelled", "succeeded", "failed")
    assert get_args(FilterStatus) == LISTABLE_FILTERS
    assert CALLBACK_STATUSES == {"queued", "running", "succeeded", "failed", "expired"}
    assert RETRIED_CALLBACK_STATUSES == {"succeeded", "failed"} <= CALLBACK_STATUSES


def test_the_list_filter_takes_the_listable_statuses_only() -> None:
    for status in LISTABLE_FILTERS:
        assert ListTasksQuery.model_validate({"filter.status": status}).status == status
    assert ListTasksQuery.model_json_schema()["properties"]["filter.status"]["anyOf"][0]["enum"] == list(ALL[:5])


def test_a_record_keeps_an_unknown_status_as_a_string() -> None:
    record = TaskRecord(id="cgt-20250101000000-abcde", status="paused")
    assert record.status == "paused" and not record.is_terminal
    assert TaskRecord.model_json_schema()["properties"]["status"] == {"title": "Status", "type": "string"}
