"""The store hands out TaskRow records, never database rows, and its insert says what happened in
types: Created or Replayed, or an exception for a refusal (never a tuple whose second element is
raised by the caller)."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import select

from dailies.service.db.engine import make_engine
from dailies.service.db.tables import tasks
from dailies.service.tasks.rows import COLUMNS, TaskRow
from dailies.service.tasks.store import Created, KeyReused, QuotaReached, Replayed, TaskStore, new_task_id
from dailies.spec.models import ListTasksQuery


def test_a_task_row_has_exactly_the_tables_columns_in_order():
    assert COLUMNS == tuple(column.name for column in tasks.c)


@pytest.fixture
def store(tmp_path):
    engine = make_engine(tmp_path / "tasks.db")
    yield TaskStore(engine)
    engine.dispose()


def values(project: str = "p", now: float | None = None) -> dict:
    now = time.time() if now is None else now
    return {"id": new_task_id(now), "project": project, "model": "m", "endpoint": "m", "status": "queued",
            "service_tier": "default", "tier_rank": 0, "priority": None, "request": "{}", "seed": 1,
            "draft": False, "draft_task_id": None, "safety_identifier": None, "callback_url": None,
            "execution_expires_after": 3600, "deadline_at": int(now) + 3600, "created_at": int(now),
            "updated_at": int(now), "attempts": 0}


def test_insert_answers_created_then_replayed_then_refuses_in_exceptions(store):
    created = store.insert(values(), idempotency_key="k", body_hash="a")
    assert isinstance(created, Created) and isinstance(created.task, TaskRow)
    again = store.insert(values(), idempotency_key="k", body_hash="a")
    assert isinstance(again, Replayed) and again.task == created.task
    with pytest.raises(KeyReused) as reused:
        store.insert(values(), idempotency_key="k", body_hash="b")
    assert reused.value.task_id is None
    with pytest.raises(QuotaReached):
        store.insert(values(), quota=1)


def test_a_refusal_of_the_reservation_rolls_the_insert_back(store):
    def refuse(conn, row):
        assert isinstance(row, TaskRow)
        raise LookupError("over budget")

    with pytest.raises(LookupError):
        store.insert(values(project="q"), reserve=refuse)
    with store.engine.connect() as conn:
        assert conn.execute(select(tasks.c.id).where(tasks.c.project == "q")).all() == []


def test_every_read_and_transition_hands_out_task_rows(store):
    row = store.insert(values()).task
    assert isinstance(store.get("p", row.id), TaskRow)
    total, listed = store.list("p", ListTasksQuery(), int(time.time()) + 1)
    assert total == 1 and [type(item) for item in listed] == [TaskRow]
    claimed = store.claim_next("w", time.time())
    assert isinstance(claimed, TaskRow) and claimed.id == row.id and claimed.status == "running"


def test_a_statement_that_selected_other_columns_fails_loudly(store):
    store.insert(values())
    with store.engine.connect() as conn:
        partial = conn.execute(select(tasks.c.id, tasks.c.status)).first()
    with pytest.raises(TypeError):
        TaskRow.of(partial)
