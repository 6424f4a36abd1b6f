"""Claims and heartbeats under concurrency, on each backend: many render slots claiming at once
take every task exactly once, and one statement refreshes all of a process's heartbeats."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import event

from tests.service.conftest import text_body

pytestmark = pytest.mark.anyio


async def test_slots_claiming_at_once_take_every_task_exactly_once(env):
    ids = [(await env.create(text_body(f"shot {n}"))).json()["id"] for n in range(40)]
    store, claimed, lock = env.services.store, [], threading.Lock()
    start = threading.Barrier(8)

    def slot(worker_id: str) -> None:
        start.wait()
        while (row := store.claim_next(worker_id, env.clock())) is not None:
            with lock:
                claimed.append((row.id, worker_id))

    threads = [threading.Thread(target=slot, args=(f"w{n}",)) for n in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert sorted(task_id for task_id, _ in claimed) == sorted(ids)
    running = {row.id: row.worker_id for row in map(store.get_by_id, ids)}
    assert running == dict(claimed)


async def test_one_statement_refreshes_a_process_heartbeats_and_names_the_lost(env):
    first, second, queued = [(await env.create(text_body(f"shot {n}"))).json()["id"] for n in range(3)]
    store = env.services.store
    assert store.claim_next("w1", env.clock()).id == first
    assert store.claim_next("w2", env.clock()).id == second
    env.clock.advance(5)
    statements = []
    listener = lambda conn, cursor, sql, *rest: statements.append(sql)  # noqa: E731
    event.listen(store.engine, "before_cursor_execute", listener)
    try:
        alive = store.heartbeat_many([(first, "w1"), (second, "not-its-worker"), (queued, "w3")], env.clock())
    finally:
        event.remove(store.engine, "before_cursor_execute", listener)
    assert alive == {first}  # the others are not (or no longer) running under those workers
    assert [sql.split()[0] for sql in statements if not sql.startswith(("BEGIN", "COMMIT"))] == ["UPDATE"]
    assert store.get_by_id(first).heartbeat_at == env.clock()
    assert store.get_by_id(second).heartbeat_at == env.clock() - 5
