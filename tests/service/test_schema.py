"""Schema install and upgrade, on each backend: a start on a current schema runs no DDL at all; a
database of an older version is upgraded once; an upgrade racing a writer that already read
`tasks` neither deadlocks nor fails the write (the cause of workers dying at start under load)."""

from __future__ import annotations

import threading

import pytest
from sqlalchemy import Engine, event, func, insert, select, text

from dailies.service.db.engine import make_engine
from dailies.service.db.schema import SCHEMA_NAME, fingerprint, is_current, schema_version
from dailies.service.db.tables import tasks
from dailies.service.tasks.counts import task_counts

from ..conftest import open_backend
from ..waiting import wait_until


def open_database(backend, tmp_path) -> Engine:
    return make_engine(backend.database_url or tmp_path / "dailies.sqlite3")


def statements_while(action) -> list[str]:
    seen: list[str] = []

    def record(conn, cursor, statement, *args):
        seen.append(statement)

    event.listen(Engine, "before_cursor_execute", record)
    try:
        action()
    finally:
        event.remove(Engine, "before_cursor_execute", record)
    return seen


DDL = ("CREATE", "DROP", "ALTER", "LOCK")


def ddl_of(statements: list[str]) -> list[str]:
    return [s for s in statements if s.lstrip().upper().startswith(DDL)]


def a_task(n: int, now: int = 1_790_000_000) -> dict:
    return {"id": f"cgt-20260101000000-{n:05d}", "project": "p", "model": "m", "endpoint": "m",
            "status": "queued", "service_tier": "default", "tier_rank": 0, "request": "{}", "seed": 1,
            "draft": False, "execution_expires_after": 3600, "deadline_at": now + 3600, "created_at": now,
            "updated_at": now, "attempts": 0}


def test_a_start_on_a_current_schema_runs_no_ddl(backend, tmp_path):
    first = open_database(backend, tmp_path)
    try:
        assert is_current(first)
        ran = statements_while(lambda: open_database(backend, tmp_path).dispose())
        assert ddl_of(ran) == []
        assert not [s for s in ran if "pg_advisory" in s]  # not even the schema lock
    finally:
        first.dispose()


def test_a_database_of_an_older_version_is_upgraded_once(backend, tmp_path):
    engine = open_database(backend, tmp_path)
    try:
        with engine.begin() as conn:
            conn.execute(insert(tasks), [a_task(n) for n in range(3)])
            # What an older version left: no fingerprint, one index fewer.
            conn.execute(schema_version.delete())
            conn.execute(text("DROP INDEX ix_tasks_deadline"))
        assert not is_current(engine)
        ran = statements_while(lambda: open_database(backend, tmp_path).dispose())
        assert any("ix_tasks_deadline" in s for s in ddl_of(ran))
        assert is_current(engine)
        with engine.connect() as conn:
            assert conn.execute(select(schema_version.c.fingerprint)
                                .where(schema_version.c.name == SCHEMA_NAME)).scalar() == fingerprint(engine.dialect)
            # The counters' trigger is in place and the counts are right (no second backfill).
            conn.execute(insert(tasks), a_task(99))
            conn.commit()
            assert conn.execute(select(func.sum(task_counts.c.n))).scalar() == 4
        # And the next start finds it current.
        assert ddl_of(statements_while(lambda: open_database(backend, tmp_path).dispose())) == []
    finally:
        engine.dispose()


@pytest.fixture
def postgres(request):
    """PostgreSQL alone: SQLite has one writer at a time, so no lock order to get wrong there."""
    with open_backend(request, "pg+s3") as opened:
        yield opened


def test_an_upgrade_racing_a_writer_that_read_tasks_first_neither_deadlocks_nor_fails_it(postgres, tmp_path):
    """The insert path reads `tasks` (the quota count) before it inserts. An upgrade that took a
    weaker lock first and then a stronger one deadlocked against it; the upgrade takes its lock
    first, so the writer just waits for it."""
    backend = postgres
    engine = open_database(backend, tmp_path)
    try:
        with engine.begin() as conn:
            conn.execute(schema_version.delete())
        writer = engine.connect()
        tx = writer.begin()
        writer.execute(select(func.count()).select_from(tasks))  # ACCESS SHARE held, as a create holds it
        upgraded: list[object] = []
        upgrade = threading.Thread(target=lambda: upgraded.append(_open_or_error(backend, tmp_path)))
        upgrade.start()
        # The upgrade holds its lock on tasks (it waits for nobody: ACCESS SHARE does not conflict).
        wait_until(lambda: _lock_granted(engine, "ShareRowExclusiveLock") or upgraded,
                   "the upgrade to take its lock on tasks")
        writer.execute(insert(tasks), a_task(1))  # waits for the upgrade's commit, then goes on
        tx.commit()
        writer.close()
        upgrade.join(60)
        assert upgraded and not isinstance(upgraded[0], Exception), upgraded
        assert is_current(engine)
        with engine.connect() as conn:
            assert conn.execute(select(func.count()).select_from(tasks)).scalar() == 1
    finally:
        engine.dispose()


def _open_or_error(backend, tmp_path):
    try:
        open_database(backend, tmp_path).dispose()
        return "ok"
    except Exception as exc:  # reported by the test, not lost in the thread
        return exc


def _lock_granted(engine: Engine, mode: str) -> bool:
    with engine.connect() as conn:
        return bool(conn.execute(text(
            "SELECT count(*) FROM pg_locks WHERE relation = 'tasks'::regclass AND mode = :mode AND granted"),
            {"mode": mode}).scalar())
