"""Callback events hold a copy of the task record (safety_identifier, signed result URLs) and the
delivery log names the task: neither outlives the 7 days a record is kept (DESIGN.md section 3).
The purge takes them with the record, and those of records deleted earlier once they are as old."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from dailies.service.db.tables import callback_attempts, callback_events
from dailies.service.tasks import store as store_module
from tests.service.conftest import text_body

pytestmark = pytest.mark.anyio

DAY = 86400
# Nothing listens on the discard port: an attempt fails at once with a connection error.
UNREACHABLE = "http://127.0.0.1:9/cb"


async def create(env, **fields) -> str:
    response = await env.create(text_body(callback_url=UNREACHABLE, **fields))
    assert response.status_code == 200, response.text
    return response.json()["id"]


def attempt_every_due_event(env) -> int:
    """One delivery attempt of each event due now, in the queue's order; how many were made."""
    queue = env.services.callbacks
    made = 0
    with queue.http_client() as http:
        while (event := queue.claim("cb-test")) is not None:
            queue.deliver(http, event)
            made += 1
    return made


def stored(env, task_id: str) -> tuple[list[tuple[str, str]], int]:
    """(status, state) of the task's callback events, and how many attempts its log holds."""
    with env.services.engine.connect() as conn:
        events = conn.execute(select(callback_events.c.status, callback_events.c.state)
                              .where(callback_events.c.task_id == task_id)
                              .order_by(callback_events.c.seq)).all()
        attempts = conn.execute(select(func.count()).select_from(callback_attempts)
                                .where(callback_attempts.c.task_id == task_id)).scalar_one()
    return [tuple(e) for e in events], attempts


async def test_a_purged_record_takes_its_callback_events_and_log_along(env):
    old = await create(env, safety_identifier="user-hash-123")
    assert env.run_next() == old
    assert attempt_every_due_event(env) == 3  # queued and running: failed; succeeded: a retry pending
    assert stored(env, old) == ([("queued", "failed"), ("running", "failed"), ("succeeded", "pending")], 3)

    env.clock.advance(8 * DAY)
    kept = await create(env)  # its `queued` callback waits for delivery
    env.services.workers.sweep()

    assert env.services.store.get_by_id(old) is None
    assert stored(env, old) == ([], 0)  # the pending retry too: its record is gone
    assert stored(env, kept) == ([("queued", "pending")], 0)
    assert attempt_every_due_event(env) == 1  # and it is still delivered
    assert stored(env, kept) == ([("queued", "failed")], 1)


async def test_events_of_a_deleted_record_go_once_as_old_as_the_records_kept(env):
    task_id = await create(env)
    env.run_next()
    attempt_every_due_event(env)
    assert (await env.delete(task_id)).status_code == 200

    # While younger than the records kept, they stay: the pending retry is still owed.
    env.clock.advance(DAY)
    env.services.workers.sweep()
    assert stored(env, task_id) == ([("queued", "failed"), ("running", "failed"), ("succeeded", "pending")], 3)

    env.clock.advance(7 * DAY)
    env.services.workers.sweep()
    assert stored(env, task_id) == ([], 0)


async def test_many_records_are_purged_with_their_callbacks_in_batches(env, monkeypatch):
    monkeypatch.setattr(store_module, "PURGE_BATCH", 2)
    purged = [await create(env, prompt=f"old {i}") for i in range(5)]
    for _ in purged:
        env.run_next()
    attempt_every_due_event(env)
    deleted = [await create(env, prompt=f"deleted {i}") for i in range(3)]
    for _ in deleted:
        env.run_next()
    attempt_every_due_event(env)
    for task_id in deleted:
        assert (await env.delete(task_id)).status_code == 200

    env.clock.advance(8 * DAY)
    kept = await create(env)
    env.services.workers.sweep()

    for task_id in purged + deleted:
        assert stored(env, task_id) == ([], 0), task_id
    assert stored(env, kept) == ([("queued", "pending")], 0)
    with env.services.engine.connect() as conn:
        assert conn.execute(select(func.count()).select_from(callback_events)).scalar_one() == 1
        assert conn.execute(select(func.count()).select_from(callback_attempts)).scalar_one() == 0
