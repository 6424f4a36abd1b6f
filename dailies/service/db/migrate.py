"""Versioned migrations (Alembic) of a schema of Dailies, run by whichever process starts on a database
that is not at the newest revision, without getting in the way of running writers.

Two schemas use it, each with its own history and version table, so both can share one PostgreSQL
database: the service's (`db.schema.SERVICE`, revisions in `db/migrations/versions/`) and the
journal's (`journal.schema.JOURNAL`, `journal/migrations/versions/`). How to add a revision: the
docstring of `db/migrations/__init__.py`.

Every process (API node, worker, `dailies keys`, a dashboard) opens the database at start, often while
others write: a worker added under load, a rolling restart. DDL takes table locks, and a start that
took them every time could stall or deadlock against inserts (an earlier version re-created the
counters' trigger at every start, and a worker started under load died with `DeadlockDetected`). So:

- a start reads the version table with a plain SELECT and, at the head revision, does nothing more:
  no DDL, no lock;
- otherwise one process upgrades, in one transaction, under the schema's advisory lock (PostgreSQL;
  `locks.WholeLock`) or the SQLite write lock (`BEGIN IMMEDIATE`), and reads the version again once
  it holds it (another process may have upgraded meanwhile);
- on PostgreSQL it then takes the strongest table lock the upgrade needs (`SHARE ROW EXCLUSIVE` on
  `tasks`, what `CREATE TRIGGER` needs) before touching anything, so it never strengthens a lock
  while inserts wait on it; in-flight inserts finish, new ones wait the milliseconds the upgrade
  takes. `lock_timeout` bounds that wait; an upgrade that runs out (or meets a deadlock) changed
  nothing, and is tried again.

A database made before versioned migrations (no version table) is brought to the first revision by
the schema's `adopt` (creating only what it lacks, `catch_up`), stamped there, then upgraded.

Alembic runs programmatically on the connection opened here (its transaction, its locks): no
alembic.ini; each migrations folder has an env.py that calls `run_env`.
"""

from __future__ import annotations

import functools
import logging
import re
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from alembic import command, op
from alembic.config import Config
from alembic.script import ScriptDirectory
from sqlalchemy import Connection, Engine, inspect, text
from sqlalchemy.exc import DBAPIError, OperationalError

from dailies.service.db import locks
from dailies.service.db.writer import Writer

log = logging.getLogger("dailies.schema")

# How long an upgrade waits for a table lock before it lets writers go on and tries again.
_LOCK_TIMEOUT = "5s"
_UPGRADE_TRIES = 5

# What a revision's SQL differs in per dialect, by word (`read_statements`), e.g.
# {"postgresql": {"serial": "BIGSERIAL"}, "sqlite": {"serial": "INTEGER"}}.
DialectWords = Mapping[str, Mapping[str, str]]


@dataclass(frozen=True)
class Schema:
    """One schema's migrations: where its revisions are, where its version is kept, what it locks."""

    name: str
    scripts: Path  # an Alembic script location: env.py and versions/
    version_table: str
    lock: locks.WholeLock
    # PostgreSQL: the table locked SHARE ROW EXCLUSIVE before anything else, when it exists.
    first_table: str | None = None
    # Brings a database made before versioned migrations to the first revision; True when it found one.
    adopt: Callable[[Connection, Sequence[str]], bool] | None = field(default=None, compare=False)


@functools.cache
def _scripts(folder: Path) -> ScriptDirectory:
    return ScriptDirectory.from_config(_config(folder))


def _config(folder: Path) -> Config:
    config = Config()
    config.set_main_option("script_location", str(folder))
    return config


def head(schema: Schema) -> str:
    found = _scripts(schema.scripts).get_current_head()
    assert found is not None, f"{schema.name}: no revisions"
    return found


def first_revision(schema: Schema) -> str:
    base = _scripts(schema.scripts).get_base()
    assert base is not None, f"{schema.name}: no revisions"
    return base


def baseline(schema: Schema, dialect_name: str) -> list[str]:
    """The statements of the first revision on a dialect (the SQL files beside it)."""
    script = _scripts(schema.scripts).get_revision(first_revision(schema))
    return read_statements(script.path, dialect_name, getattr(script.module, "WORDS", None))


def read_statements(revision_file: str, dialect_name: str, words: DialectWords | None = None) -> list[str]:
    """A revision's SQL for a dialect from the files beside it, each statement ended by a line holding
    only `;`: what both databases run (NNNN_name.sql, each `{word}` in it filled in from
    `words[dialect_name]`), then what only this one runs (NNNN_name.<dialect>.sql). Either may be absent."""
    path = Path(revision_file)
    shared, own = path.with_suffix(".sql"), path.with_suffix(f".{dialect_name}.sql")
    if not (shared.exists() or own.exists()):
        raise FileNotFoundError(f"no {shared.name} nor {own.name} beside {path.name}")
    texts = [shared.read_text().format_map((words or {}).get(dialect_name, {}))] if shared.exists() else []
    texts += [own.read_text()] if own.exists() else []
    return [s.strip() for sql in texts for s in sql.split("\n;\n") if s.strip()]


def run_sql_beside(revision_file: str, words: DialectWords | None = None) -> None:
    """In a revision's `upgrade`: run its SQL for the database at hand (`read_statements`)."""
    for statement in read_statements(revision_file, op.get_bind().dialect.name, words):
        op.execute(statement)


def table_exists(conn: Connection, name: str) -> bool:
    """Without an inspector's catalogue queries: one cheap lookup that takes no lock a writer waits on.

    On PostgreSQL a query of pg_class, not to_regclass: to_regclass answers from the session's catalogue
    cache, which learns of another session's commit only when this one next locks a relation, and an
    advisory lock is no such lock; so a process that waited on the upgrade lock while another created
    the version table was told it was still missing, and upgraded again."""
    if conn.dialect.name == "postgresql":
        return bool(conn.execute(text(
            "SELECT EXISTS (SELECT 1 FROM pg_catalog.pg_class WHERE relname = :name "
            "AND relnamespace = current_schema()::regnamespace)"), {"name": name}).scalar())
    return conn.execute(text("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = :name"),
                        {"name": name}).first() is not None


def current(conn: Connection, schema: Schema) -> str | None:
    """The revision the database is at, None before any (a new database, or one made before migrations)."""
    if not table_exists(conn, schema.version_table):
        return None
    return conn.execute(text(f"SELECT version_num FROM {schema.version_table}")).scalar()


def is_current(engine: Engine, schema: Schema) -> bool:
    with engine.connect() as conn:
        return current(conn, schema) == head(schema)


@functools.cache
def _revisions(folder: Path) -> frozenset[str]:
    return frozenset(script.revision for script in _scripts(folder).walk_revisions())


def _nothing_to_do(schema: Schema, found: str | None) -> bool:
    """At the head, or ahead of it: a newer release upgraded the database (a rolling upgrade, or this
    release started again after one). Its revisions are left alone; they add to what this one reads."""
    if found is not None and found != head(schema) and found not in _revisions(schema.scripts):
        log.warning("%s schema is at revision %s, which this release does not know (its newest: %s): "
                    "left as it is", schema.name, found, head(schema))
        return True
    return found == head(schema)


def upgrade(engine: Engine, schema: Schema, write: Writer | None = None) -> bool:
    """Bring the schema to its head revision unless it is there. Returns whether it ran any DDL.
    `write` opens SQLite's write transactions (`BEGIN IMMEDIATE`, the process's write lock)."""
    with engine.connect() as conn:
        if _nothing_to_do(schema, current(conn, schema)):
            return False
    if engine.dialect.name == "postgresql":
        return _upgrade_postgres(engine, schema)
    return _upgrade_sqlite(write or Writer(engine), schema)


def _upgrade_postgres(engine: Engine, schema: Schema) -> bool:
    for attempt in range(1, _UPGRADE_TRIES + 1):
        try:
            with engine.begin() as conn:
                locks.hold_whole(conn, schema.lock)
                found = current(conn, schema)
                if _nothing_to_do(schema, found):
                    return False  # another process upgraded while we waited for the lock
                conn.execute(text(f"SET LOCAL lock_timeout = '{_LOCK_TIMEOUT}'"))
                if schema.first_table and table_exists(conn, schema.first_table):
                    # The strongest lock the upgrade needs, first (see the module docstring).
                    conn.execute(text(f"LOCK TABLE {schema.first_table} IN SHARE ROW EXCLUSIVE MODE"))
                _migrate(conn, schema, found)
            log.info("%s schema upgraded to revision %s", schema.name, head(schema))
            return True
        except (OperationalError, DBAPIError) as exc:
            # lock_timeout or a deadlock against some writer: nothing was changed (one transaction);
            # let the writers through and try again.
            if attempt == _UPGRADE_TRIES or not _is_lock_conflict(exc):
                raise
            log.warning("%s schema upgrade waited too long for a table lock (try %d of %d); retrying",
                        schema.name, attempt, _UPGRADE_TRIES)
            time.sleep(0.2 * attempt)
    return False  # pragma: no cover - the loop returns or raises


def _upgrade_sqlite(write: Writer, schema: Schema) -> bool:
    # Two processes starting on one fresh data directory may both try; BEGIN IMMEDIATE makes the
    # second wait, and it then finds the work done.
    for attempt in range(3):
        try:
            with write.begin() as conn:
                found = current(conn, schema)
                if _nothing_to_do(schema, found):
                    return False
                _migrate(conn, schema, found)
            return True
        except OperationalError:
            if attempt == 2:
                raise
    return False  # pragma: no cover


def _migrate(conn: Connection, schema: Schema, found: str | None) -> None:
    if found is None and schema.adopt is not None and schema.adopt(conn, baseline(schema, conn.dialect.name)):
        _alembic(conn, schema, command.stamp, first_revision(schema))
    _alembic(conn, schema, command.upgrade, "head")


def _alembic(conn: Connection, schema: Schema, run: Callable[..., None], revision: str) -> None:
    config = _config(schema.scripts)
    config.attributes.update(connection=conn, version_table=schema.version_table)
    run(config, revision)


def run_env(context) -> None:
    """What each migrations folder's env.py runs: the revisions on the connection `upgrade` opened,
    inside its transaction (Alembic neither begins nor commits one of its own there)."""
    config = context.config
    context.configure(connection=config.attributes["connection"],
                      version_table=config.attributes["version_table"])
    with context.begin_transaction():
        context.run_migrations()


_TEMPLATE = '''"""{message}"""

from __future__ import annotations

from alembic import op

revision = "{revision}"
down_revision = {down!r}


def upgrade() -> None:
    op.execute(...)  # or op.add_column, op.batch_alter_table (SQLite), ...


def downgrade() -> None:
    raise NotImplementedError
'''


def new_revision(schema: Schema, message: str) -> Path:
    """Write the next revision's file (numbered 0001, 0002, ...) after the head; for developers."""
    down = _scripts(schema.scripts).get_current_head()
    number = int(down or "0") + 1
    slug = re.sub(r"[^a-z0-9]+", "_", message.lower()).strip("_")[:40]
    path = schema.scripts / "versions" / f"{number:04d}_{slug}.py"
    path.write_text(_TEMPLATE.format(message=message, revision=f"{number:04d}", down=down))
    _scripts.cache_clear()
    _revisions.cache_clear()
    return path


# ---- databases made before versioned migrations ----

_NAME = r'"?([A-Za-z_][A-Za-z0-9_]*)"?'


def catch_up(conn: Connection, statements: Sequence[str]) -> None:
    """Bring a database made by an older release to the first revision: run its statements, creating
    only what is missing, as the fingerprint scheme of those releases did (tables, nullable columns,
    indexes, sequences; functions are replaced; a PostgreSQL trigger is created when absent, a SQLite
    one replaced). A missing NOT NULL column without a default cannot be added to rows that exist.
    Runs in the upgrade's transaction, under its locks."""
    existing = inspect(conn)
    tables = set(existing.get_table_names())
    # Relations by name (indexes, sequences): one that exists is left alone, without even the lock
    # `CREATE INDEX IF NOT EXISTS` takes on its table, which writers of that table would wait on.
    relations = set(conn.execute(text(
        "SELECT relname FROM pg_class WHERE relnamespace = current_schema()::regnamespace"
        if conn.dialect.name == "postgresql" else "SELECT name FROM sqlite_master")).scalars())
    for statement in statements:
        head_line = statement.split("\n", 1)[0]
        if match := re.match(rf"CREATE TABLE {_NAME}", head_line):
            if match[1] in tables:
                _add_missing_columns(conn, match[1], statement, {c["name"] for c in existing.get_columns(match[1])})
                continue
        elif match := re.match(rf"CREATE (?:UNIQUE )?(?:INDEX|SEQUENCE) {_NAME}", head_line):
            if match[1] in relations:
                continue
        elif match := re.match(rf"CREATE TRIGGER IF NOT EXISTS {_NAME}", head_line):
            conn.execute(text(f"DROP TRIGGER IF EXISTS {match[1]}"))  # an older release's body, replaced
        elif match := re.match(rf"CREATE TRIGGER {_NAME}", head_line):
            if conn.execute(text("SELECT 1 FROM pg_trigger WHERE tgname = :name"), {"name": match[1]}).first():
                continue  # dropping it would lock the table against every insert
        conn.execute(text(statement))


def _add_missing_columns(conn: Connection, table: str, create: str, have: set[str]) -> None:
    for line in create.splitlines()[1:-1]:
        column = line.strip().rstrip(",")
        match = re.match(_NAME, column)
        if not match or column.startswith(("PRIMARY KEY", "UNIQUE", "CONSTRAINT", "FOREIGN KEY", "CHECK")):
            continue
        if match[1] in have:
            continue
        if "NOT NULL" in column and "DEFAULT" not in column:
            raise RuntimeError(f"schema upgrade: {table}.{match[1]} is missing and NOT NULL without a default")
        conn.execute(text(f"ALTER TABLE {table} ADD COLUMN {column}"))


def _is_lock_conflict(exc: Exception) -> bool:
    code = getattr(getattr(exc, "orig", None), "sqlstate", None)
    return code in ("55P03", "40P01")  # lock_not_available, deadlock_detected
