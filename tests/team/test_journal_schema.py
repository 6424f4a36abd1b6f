"""The journal's schema and its migrations (dailies/journal/migrations/, run by dailies/service/db/migrate.py
like the service's), on both backends: a dashboard that finds it at its head runs no DDL and takes no
lock; the head is what journal/schema.py declares; a journal made before versioned migrations is adopted
in place, its rows kept. (A journal from before scopes: tests/dashboard/test_journal_scopes.py.)"""

from __future__ import annotations

from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Engine, inspect, text

from dailies.journal import Journal, Scope
from dailies.journal.schema import JOURNAL, POSTGRES_PREFIX, _define
from dailies.service.db import migrate
from dailies.service.db.engine import open_engine
from dailies.service.db.writer import writer
from tests.service.db.test_schema import ddl_of, locks_of, statements_while

from ..dashboard.test_journal_scopes import BASE, KEY_A, TASK


def open_journal(backend, tmp_path) -> Journal:
    return Journal(tmp_path / "journal.sqlite3", database_url=backend.database_url or "", storage="")


def journal_engine(backend, tmp_path) -> Engine:
    return open_engine(backend.database_url or tmp_path / "journal.sqlite3")


def prefix(engine: Engine) -> str:
    return POSTGRES_PREFIX if engine.dialect.name == "postgresql" else ""


def test_a_dashboard_starting_on_a_current_journal_runs_no_ddl_and_takes_no_lock(backend, tmp_path):
    first = open_journal(backend, tmp_path)
    try:
        ran = statements_while(lambda: open_journal(backend, tmp_path).close())
        assert ddl_of(ran) == [] and locks_of(ran) == []
        assert any(JOURNAL.version_table in s for s in ran)
    finally:
        first.close()


def test_the_journal_head_is_what_its_tables_declare(backend, tmp_path):
    open_journal(backend, tmp_path).close()
    engine = journal_engine(backend, tmp_path)
    declared, _, _ = _define(prefix(engine), engine.dialect.name == "postgresql")
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"compare_type": True,
                                                             "version_table": JOURNAL.version_table})
            differences = compare_metadata(context, declared)
        # On a shared database the service's tables are there too; they are not the journal's business.
        ours = [d for d in differences if not (d[0] == "remove_table" and not d[1].name.startswith(prefix(engine)))
                and not (d[0] == "remove_table" and d[1].name == JOURNAL.version_table)]
        assert ours == []
    finally:
        engine.dispose()


def test_a_journal_made_before_migrations_is_adopted_in_place(backend, tmp_path):
    """As the last release before migrations left it (version 1: the first revision's statements, which
    make what it made), but without `shares` and an index, a later addition it would have created."""
    engine = journal_engine(backend, tmp_path)
    p = prefix(engine)
    try:
        with writer(engine).begin() as conn:
            for statement in migrate.baseline(JOURNAL, engine.dialect.name):
                if f"{p}shares" not in statement and f"ix_{p}statuses_task" not in statement:
                    conn.execute(text(statement))
            conn.execute(text(f"INSERT INTO {p}records (scope, task_id, record, saved_at) "
                              f"VALUES ('{Scope.of(BASE, KEY_A).name}', '{TASK}', '{{\"id\": \"{TASK}\"}}', 1)"))
        ran = ddl_of(statements_while(lambda: open_journal(backend, tmp_path).close()))
        assert any(s.startswith(f"CREATE TABLE {p}shares") for s in ran)
        assert not any(s.startswith(f"CREATE TABLE {p}records") for s in ran)  # what it had is kept
        assert {i["name"] for i in inspect(engine).get_indexes(f"{p}statuses")} == {f"ix_{p}statuses_task"}
        with engine.connect() as conn:
            # Stamped at the first revision, then upgraded to the head (0002 adds the comments' frames).
            assert conn.execute(text(f"SELECT version_num FROM {JOURNAL.version_table}")).scalars().all() == [
                migrate.head(JOURNAL)]
        assert {"frame", "out_frame", "drawing"} <= {c["name"] for c in inspect(engine).get_columns(f"{p}comments")}
        journal = open_journal(backend, tmp_path)
        try:
            assert journal.scoped(Scope.of(BASE, KEY_A)).record(TASK) == {"id": TASK}
        finally:
            journal.close()
    finally:
        engine.dispose()
