"""A task's stored request as `GET /dailies/v1/tasks/{id}/request` shows it, made once and kept.

Making it decodes every inline image for its thumbnail (stored_requests.py): up to a second of CPU
and a hundred megabytes or more for a 6000 x 6000 PNG, which has no cheap reduced decode (a JPEG
has, `draft`). A read that did this every time let a caller repeat seconds of work at will, and
forty reads at once needed gigabytes. The answer depends only on what the task stores (its request
and creator never change), so:

- It is made by the first read that finds none, not at create: a create that decoded nine images
  would itself be the expensive call a caller can repeat.
- It is made on a small process-wide pool (`MAKERS` threads), which reads the stored request itself:
  however many first reads arrive at once, at most that many requests are parsed and images decoded
  at a time, and the readers wait on futures holding nothing, not on threads of the server's pool.
  Reads in this process that want one task's answer at once share one making.
- It is kept whole in `shown_requests`, thumbnails and "no thumbnail" alike (an image that does not
  decode is not tried again), so a later read is the get of its task and one small row.
- Written with INSERT ... ON CONFLICT DO NOTHING: two API nodes making one answer at once write the
  same row, and the second write does nothing. Written only while the task exists (on PostgreSQL
  its row is locked against a DELETE meanwhile), and deleted with the task (`store.delete_terminal`,
  `store.purge`).
"""

from __future__ import annotations

import asyncio
import json
import queue
import threading
from collections.abc import Callable, Iterable
from concurrent.futures import Future

from sqlalchemy import Connection, Engine, delete, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from dailies.service.db.engine import is_postgres
from dailies.service.db.tables import ledger, shown_requests, tasks
from dailies.service.db.writer import Writer
from dailies.service.errors import task_not_found
from dailies.service.tasks import stored_requests

# Answers made at once in one process: each may hold a parsed request and a decoded image (100-300 MB).
MAKERS = 2

_jobs: queue.SimpleQueue = queue.SimpleQueue()
_threads: list[threading.Thread] = []
_making: dict[tuple[str, str], Future] = {}
_guard = threading.Lock()


def kept(conn: Connection, task_id: str) -> str | None:
    """The task's answer as kept, None before its first read made it."""
    return conn.execute(select(shown_requests.c.answer).where(shown_requests.c.task_id == task_id)).scalar()


def forget(conn: Connection, task_ids: Iterable[str]) -> None:
    """Delete what was kept for these tasks (in the transaction that deletes them)."""
    ids = list(task_ids)
    if ids:
        conn.execute(delete(shown_requests).where(shown_requests.c.task_id.in_(ids)))


async def made(engine: Engine, write: Writer, task_id: str) -> str:
    """The task's answer (JSON text), made on the makers' pool and kept; 404 if the task is gone."""
    making = (str(engine.url), task_id)
    with _guard:
        future = _making.get(making)
        if future is None:
            future = _making[making] = _start(_make, engine, write, task_id, making)
    # Shielded: a reader that goes away must not cancel a making other readers wait for.
    return await asyncio.shield(asyncio.wrap_future(future))


def _start(function: Callable, *args) -> Future:
    """`function(*args)` on one of the `MAKERS` threads (call under `_guard`). Not a
    ThreadPoolExecutor, whose threads run every job still queued before the interpreter may exit:
    these are daemons, and a stop drops what is queued (a later read makes it)."""
    future: Future = Future()
    _jobs.put((future, function, args))
    if len(_threads) < MAKERS:
        thread = threading.Thread(target=_run_jobs, name=f"shown-requests-{len(_threads) + 1}", daemon=True)
        _threads.append(thread)
        thread.start()
    return future


def _run_jobs() -> None:
    while True:
        future, function, args = _jobs.get()
        if not future.set_running_or_notify_cancel():
            continue
        try:
            future.set_result(function(*args))
        except BaseException as exc:  # noqa: BLE001 - handed to the readers waiting on it
            future.set_exception(exc)


def _make(engine: Engine, write: Writer, task_id: str, making: tuple[str, str]) -> str:
    try:
        with engine.connect() as conn:
            # A reader that found nothing may come after another's making was kept: never made twice.
            answer = kept(conn, task_id)
            if answer is not None:
                return answer
            row = conn.execute(select(tasks).where(tasks.c.id == task_id)).first()
            if row is None:
                raise task_not_found(task_id)
            # The member whose key created it: the ledger records it with every create.
            member = conn.execute(select(ledger.c.member).where(ledger.c.task_id == task_id)).scalar()
        answer = json.dumps(stored_requests.answer(
            row.request, task_id=row.id, model=row.model, created_at=row.created_at, created_by=member,
            draft_task_id=row.draft_task_id), ensure_ascii=False, separators=(",", ":"))
        del row  # the stored request may be tens of megabytes
        keep(engine, write, task_id, answer)
        return answer
    finally:
        with _guard:
            _making.pop(making, None)


def keep(engine: Engine, write: Writer, task_id: str, answer: str) -> None:
    """Keep a task's answer, unless the task is gone or it is kept already."""
    insert = pg_insert if is_postgres(engine) else sqlite_insert
    with write.begin() as conn:
        # FOR KEY SHARE (PostgreSQL): a DELETE of the task waits for this write, then its own
        # statement deletes the row; SQLite's one writer at a time gives the same order.
        task = select(tasks.c.id).where(tasks.c.id == task_id).with_for_update(read=True, key_share=True)
        if conn.execute(task).first() is None:
            return
        conn.execute(insert(shown_requests).values(task_id=task_id, answer=answer).on_conflict_do_nothing())
