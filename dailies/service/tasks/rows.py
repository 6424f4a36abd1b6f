"""A stored task as the store hands it out: a frozen record of the `tasks` table's columns, typed,
so that the rooms above the store never hold a database row (and a column renamed in
db/tables.py fails a test here, not a request in production)."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from sqlalchemy import Row


class TaskRow(NamedTuple):
    """Immutable, and a tuple underneath: made from a row of the table's own columns without a copy
    per field (a frozen dataclass of 30 fields cost 6 us a row, a tenth of a list's CPU)."""

    seq: int
    id: str
    project: str
    model: str  # the model id, as the record shows it
    endpoint: str  # what the request named; filter.model matches it
    status: str  # a TaskStatus value
    service_tier: str
    tier_rank: int
    priority: int | None
    request: str  # the request to render, as JSON
    seed: int
    draft: bool
    draft_task_id: str | None
    safety_identifier: str | None
    callback_url: str | None
    execution_expires_after: int
    deadline_at: int
    created_at: int
    updated_at: int
    started_at: int | None
    finished_at: int | None
    worker_id: str | None
    heartbeat_at: float | None
    attempts: int
    error_code: str | None
    error_message: str | None
    result: str | None  # what the render actually used, as JSON
    video_file: str | None
    last_frame_file: str | None
    generator_state: str | None  # what the generator checkpointed, as JSON

    @classmethod
    def of(cls, row: Row[Any]) -> TaskRow:
        """By column name: a statement that selected other columns fails here, loudly. The table's own
        columns in order (every statement of the store) are taken as they are."""
        if row._fields == COLUMNS:
            return cls._make(row)
        return cls(**row._mapping)

    @classmethod
    def maybe(cls, row: Row[Any] | None) -> TaskRow | None:
        return None if row is None else cls.of(row)

    @classmethod
    def all_of(cls, rows: Iterable[Row[Any]]) -> list[TaskRow]:
        """Rows of one statement: their columns are checked once, on the first."""
        made: list[TaskRow] = []
        for row in rows:
            made.append(cls._make(row) if made else cls.of(row))
        return made


COLUMNS = TaskRow._fields
