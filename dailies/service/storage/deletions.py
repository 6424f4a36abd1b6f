"""Files of deleted records that the storage could not delete yet (a bucket that did not answer).

A DELETE of a finished task, or the purge of old ones, deletes the record first: answering 503 for a
delete that happened would have the client retry into a 404, and nothing would know of the files
again. Their task ids wait here instead, and every housekeeping sweep asks the storage again.
"""

from __future__ import annotations

from collections.abc import Iterable

from sqlalchemy import Connection, delete, select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from dailies.service.db.engine import is_postgres
from dailies.service.db.tables import files_to_delete

BATCH = 500


def remember(conn: Connection, task_ids: Iterable[str], now: float) -> None:
    rows = [{"task_id": task_id, "since": int(now)} for task_id in task_ids]
    if not rows:
        return
    insert = pg_insert if is_postgres(conn.engine) else sqlite_insert
    conn.execute(insert(files_to_delete).values(rows).on_conflict_do_nothing(index_elements=["task_id"]))


def waiting(conn: Connection, limit: int = BATCH) -> list[str]:
    return list(conn.execute(select(files_to_delete.c.task_id).order_by(files_to_delete.c.since)
                             .limit(limit)).scalars())


def forget(conn: Connection, task_ids: Iterable[str]) -> None:
    conn.execute(delete(files_to_delete).where(files_to_delete.c.task_id.in_(list(task_ids))))
