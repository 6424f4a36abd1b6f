"""The service's schema and its migrations (dailies/service/db/migrate.py), on each backend: a start on a
current schema runs no DDL and takes no lock; a database at an older revision, or made before versioned
migrations by the fingerprint scheme of earlier releases, is upgraded once and in place; the upgrade
takes its locks first, and one racing a writer that already read `tasks` neither deadlocks nor fails the
write (the cause of workers dying at start under load); the head is what `db/tables.py` declares; and a
revision can do what the fingerprint scheme could not (a NOT NULL column with a backfill, a rename)."""

from __future__ import annotations

import dataclasses
import shutil
import threading

import pytest
from alembic.autogenerate import compare_metadata
from alembic.migration import MigrationContext
from sqlalchemy import Engine, MetaData, event, func, insert, inspect, select, text

from dailies.service.db import counters, migrate
from dailies.service.db.engine import make_engine, open_engine
from dailies.service.db.schema import SERVICE, is_current
from dailies.service.db.tables import metadata, tasks
from dailies.service.db.writer import writer
from dailies.service.tasks.counts import task_counts
from tests.conftest import open_backend
from tests.support.legacy_schema import undo_after_0001
from tests.support.waiting import wait_until


def open_database(backend, tmp_path) -> Engine:
    return make_engine(backend.database_url or tmp_path / "dailies.sqlite3")


def statements_while(action) -> list[str]:
    """What `action` ran, on this thread: other tests' services still winding down in this worker
    (a housekeeper, a callback deliverer) write on threads of their own, and are not the start counted."""
    seen: list[str] = []
    caller = threading.get_ident()

    def record(conn, cursor, statement, *args):
        if threading.get_ident() == caller:
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


def locks_of(statements: list[str]) -> list[str]:
    return [s for s in statements if "pg_advisory" in s or s.lstrip().upper().startswith(("LOCK", "BEGIN IMMEDIATE"))]


def a_task(n: int, now: int = 1_790_000_000) -> dict:
    return {"id": f"cgt-20260101000000-{n:05d}", "project": "p", "model": "m", "endpoint": "m",
            "status": "queued", "service_tier": "default", "tier_rank": 0, "request": "{}", "seed": 1,
            "draft": False, "execution_expires_after": 3600, "deadline_at": now + 3600, "created_at": now,
            "updated_at": now, "attempts": 0}


def version_of(engine: Engine, table: str = SERVICE.version_table) -> list[str]:
    with engine.connect() as conn:
        return list(conn.execute(text(f"SELECT version_num FROM {table}")).scalars())


def tables_of(engine: Engine) -> set[str]:
    return set(inspect(engine).get_table_names())


def make_legacy(backend, tmp_path, *, older: bool = False, tasks_in_it: int = 3) -> Engine:
    """A database as the last release before versioned migrations left it (the fixture generator: no
    binary): 0001's statements, which make exactly what that release's fingerprint scheme made (its
    schema dumped with pg_dump and from sqlite_master matched them), a fingerprint row, no version table.
    `older`: as a release before that one left it, without the counters, an index and a column."""
    engine = open_engine(backend.database_url or tmp_path / "dailies.sqlite3")
    with writer(engine).begin() as conn:
        for statement in migrate.baseline(SERVICE, engine.dialect.name):
            if older and ("task_counts" in statement or "ix_tasks_deadline" in statement):
                continue
            if older and statement.startswith("CREATE TABLE tasks"):
                statement = statement.replace("\tgenerator_state TEXT,\n", "")
            conn.execute(text(statement))
        conn.execute(text("INSERT INTO schema_version VALUES ('service', '22d50fdf187c71841bb8663211be8659', 0)"))
        if tasks_in_it:
            conn.execute(insert(tasks), [a_task(n) for n in range(tasks_in_it)])
    return engine


def test_a_start_on_a_current_schema_runs_no_ddl_and_takes_no_lock(backend, tmp_path):
    first = open_database(backend, tmp_path)
    try:
        assert is_current(first)
        ran = statements_while(lambda: open_database(backend, tmp_path).dispose())
        assert ddl_of(ran) == []
        assert locks_of(ran) == []  # not even the schema's advisory lock, nor SQLite's write lock
        # What it ran: the version's lookup (whether its table is there, then its row), and no write.
        assert any(SERVICE.version_table in s for s in ran)
        assert not [s for s in ran if s.lstrip().upper().startswith(("INSERT", "UPDATE", "DELETE"))]
    finally:
        first.dispose()


def test_a_new_database_gets_every_revision_and_keeps_no_fingerprint(backend, tmp_path):
    engine = open_database(backend, tmp_path)
    try:
        assert version_of(engine) == [migrate.head(SERVICE)] == ["0004"]
        assert "schema_version" not in tables_of(engine)
        assert {t.name for t in metadata.sorted_tables} | {"task_counts"} <= tables_of(engine)
    finally:
        engine.dispose()


def test_the_head_is_what_the_tables_declare(backend, tmp_path):
    """The revisions and db/tables.py (with the counters' table) agree: Alembic's own comparison finds
    no table, column, index or type that differs."""
    engine = open_database(backend, tmp_path)
    declared = MetaData()
    for table in [*metadata.sorted_tables, *counters.metadata.sorted_tables]:
        table.to_metadata(declared)
    try:
        with engine.connect() as conn:
            context = MigrationContext.configure(conn, opts={"version_table": SERVICE.version_table,
                                                             "compare_type": True})
            differences = compare_metadata(context, declared)
        assert [d for d in differences if not _is_version_table(d)] == []
    finally:
        engine.dispose()


def _is_version_table(difference) -> bool:
    return difference[0] == "remove_table" and difference[1].name == SERVICE.version_table


def test_a_database_at_an_older_revision_is_upgraded_once(backend, tmp_path):
    engine = open_database(backend, tmp_path)
    try:
        with writer(engine).begin() as conn:  # as 0001 left it
            conn.execute(text(f"UPDATE {SERVICE.version_table} SET version_num = '0001'"))
            conn.execute(text(next(s for s in migrate.baseline(SERVICE, engine.dialect.name)
                                   if s.startswith("CREATE TABLE schema_version"))))
            undo_after_0001(conn)
        assert not is_current(engine)
        ran = statements_while(lambda: open_database(backend, tmp_path).dispose())
        assert [s.strip() for s in ddl_of(ran) if "schema_version" in s] == ["DROP TABLE schema_version"]
        assert is_current(engine) and "schema_version" not in tables_of(engine)
        assert {"notification_targets", "notification_marks"} <= set(tables_of(engine))
        assert ddl_of(statements_while(lambda: open_database(backend, tmp_path).dispose())) == []
    finally:
        engine.dispose()


def test_a_database_a_newer_release_upgraded_is_left_as_it_is(backend, tmp_path, caplog):
    """A rolling upgrade: a process of the release before starts after a newer one moved the schema on."""
    engine = open_database(backend, tmp_path)
    try:
        with engine.begin() as conn:
            conn.execute(text(f"UPDATE {SERVICE.version_table} SET version_num = '9999'"))
        ran = statements_while(lambda: open_database(backend, tmp_path).dispose())
        assert ddl_of(ran) == [] and locks_of(ran) == []
        assert "revision 9999, which this release does not know" in caplog.text
    finally:
        engine.dispose()


def test_a_database_made_by_the_fingerprint_scheme_is_adopted_in_place(backend, tmp_path):
    legacy = make_legacy(backend, tmp_path)
    try:
        with legacy.connect() as conn:
            assert conn.execute(select(func.sum(task_counts.c.n))).scalar() == 3
        ran = statements_while(lambda: open_database(backend, tmp_path).dispose())
        # Recognised, not made again: nothing it had is created, the fingerprint's table goes (0002).
        assert not [s for s in ddl_of(ran) if s.startswith("CREATE TABLE") and "_version" not in s]
        assert version_of(legacy) == ["0004"] and "schema_version" not in tables_of(legacy)
        with legacy.connect() as conn:
            conn.execute(insert(tasks), a_task(99))
            conn.commit()
            assert conn.execute(select(func.count()).select_from(tasks)).scalar() == 4
            # The counters' triggers still count, and the counts were not filled a second time.
            assert conn.execute(select(func.sum(task_counts.c.n))).scalar() == 4
        assert ddl_of(statements_while(lambda: open_database(backend, tmp_path).dispose())) == []
    finally:
        legacy.dispose()


def test_a_database_of_an_older_release_gets_what_it_lacks_then_its_revisions(backend, tmp_path):
    legacy = make_legacy(backend, tmp_path, older=True)
    try:
        assert "task_counts" not in tables_of(legacy)
        ran = ddl_of(statements_while(lambda: open_database(backend, tmp_path).dispose()))
        assert any("ix_tasks_deadline" in s for s in ran) and any("generator_state" in s for s in ran)
        assert version_of(legacy) == ["0004"]
        assert "generator_state" in {c["name"] for c in inspect(legacy).get_columns("tasks")}
        assert "ix_tasks_deadline" in {i["name"] for i in inspect(legacy).get_indexes("tasks")}
        with legacy.connect() as conn:  # the tasks it had are counted once, new ones by the triggers
            assert conn.execute(select(func.sum(task_counts.c.n))).scalar() == 3
            conn.execute(insert(tasks), a_task(99))
            conn.commit()
            assert conn.execute(select(func.sum(task_counts.c.n))).scalar() == 4
    finally:
        legacy.dispose()


def test_an_upgrade_takes_its_lock_first(backend, tmp_path):
    legacy = make_legacy(backend, tmp_path)
    try:
        ran = statements_while(lambda: open_database(backend, tmp_path).dispose())
        first_ddl = ran.index(ddl_of([s for s in ran if not s.startswith("LOCK")])[0])
        if backend.team:
            advisory = next(i for i, s in enumerate(ran) if "pg_advisory_xact_lock" in s)
            table_lock = next(i for i, s in enumerate(ran) if s.startswith("LOCK TABLE tasks IN SHARE ROW EXCLUSIVE"))
            timeout = next(i for i, s in enumerate(ran) if "lock_timeout" in s)
            assert advisory < timeout < table_lock < first_ddl
        else:
            assert "BEGIN IMMEDIATE" in ran[:first_ddl]
    finally:
        legacy.dispose()


# A revision of the kind the fingerprint scheme refused ("a new NOT NULL column raises; no rename"):
# batch mode copies the table on SQLite and runs plain ALTERs on PostgreSQL.
LABEL_KEYS = '''"""Keys get a label (NOT NULL, filled from what they showed); rpm becomes create_rpm."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0005"
down_revision = "0004"


def upgrade() -> None:
    with op.batch_alter_table("api_keys") as batch:
        batch.add_column(sa.Column("label", sa.String, nullable=True))
        batch.alter_column("rpm", new_column_name="create_rpm")
    op.execute("UPDATE api_keys SET label = 'key ' || masked")
    with op.batch_alter_table("api_keys") as batch:
        batch.alter_column("label", existing_type=sa.String, nullable=False)


def downgrade() -> None:
    raise NotImplementedError
'''


def test_a_revision_adds_a_not_null_column_with_a_backfill_and_renames_one(backend, tmp_path):
    engine = open_database(backend, tmp_path)
    try:
        with engine.begin() as conn:
            conn.execute(text("INSERT INTO api_keys (key_sha256, project, masked, created_at, rpm) "
                              "VALUES ('h', 'p', 'sk-...01', 0, 7)"))
        scripts = tmp_path / "migrations"
        shutil.copytree(SERVICE.scripts, scripts, ignore=shutil.ignore_patterns("__pycache__"))
        changed = dataclasses.replace(SERVICE, scripts=scripts)
        written = migrate.new_revision(changed, "label keys")
        assert written.name == "0005_label_keys.py" and 'down_revision = \'0004\'' in written.read_text()
        written.write_text(LABEL_KEYS)
        migrate._scripts.cache_clear()  # the file changed after new_revision read it
        migrate._revisions.cache_clear()
        assert migrate.upgrade(engine, changed, writer(engine))
        columns = {c["name"]: c for c in inspect(engine).get_columns("api_keys")}
        assert "rpm" not in columns and columns["label"]["nullable"] is False
        with engine.connect() as conn:
            assert conn.execute(text("SELECT label, create_rpm FROM api_keys")).one() == ("key sk-...01", 7)
        assert version_of(engine) == ["0005"]
        # Rows without a label are refused now.
        with pytest.raises(Exception, match="(?i)not.null"), engine.begin() as conn:
            conn.execute(text("INSERT INTO api_keys (key_sha256, project, masked, created_at) "
                              "VALUES ('h2', 'p', 'sk-...02', 0)"))
        assert not migrate.upgrade(engine, changed)  # at its head: nothing to do
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
    engine = make_legacy(backend, tmp_path, tasks_in_it=0)  # every start upgrades it
    try:
        writer_conn = engine.connect()
        tx = writer_conn.begin()
        writer_conn.execute(select(func.count()).select_from(tasks))  # ACCESS SHARE held, as a create holds it
        upgraded: list[object] = []
        upgrade = threading.Thread(target=lambda: upgraded.append(_open_or_error(backend, tmp_path)))
        upgrade.start()
        # The upgrade holds its lock on tasks (it waits for nobody: ACCESS SHARE does not conflict).
        wait_until(lambda: _lock_granted(engine, "ShareRowExclusiveLock") or upgraded,
                   "the upgrade to take its lock on tasks")
        writer_conn.execute(insert(tasks), a_task(1))  # waits for the upgrade's commit, then goes on
        tx.commit()
        writer_conn.close()
        upgrade.join(60)
        assert upgraded and not isinstance(upgraded[0], Exception), upgraded
        assert is_current(engine)
        with engine.connect() as conn:
            assert conn.execute(select(func.count()).select_from(tasks)).scalar() == 1
            assert conn.execute(select(func.sum(task_counts.c.n))).scalar() == 1
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
