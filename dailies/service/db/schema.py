"""Installing and upgrading the service's schema without getting in the way of running writers.

Every process (API node, worker, `dailies keys`) opens the database at start, often while others
insert tasks: a worker added under load, a rolling restart. DDL takes table locks, and a start
that took them every time could stall or deadlock against inserts: an earlier version dropped and
re-created the counters' trigger at every start, and a worker started under load died with
`DeadlockDetected` (its transaction held a SHARE lock from an index check and then wanted ACCESS
EXCLUSIVE while inserts held ACCESS SHARE from their quota count and waited on the SHARE lock).

So the schema carries a fingerprint: a hash of the DDL this version of the code would run
(tables, indexes, the counters' functions and triggers), stored in `schema_version`. A start
reads it without any lock; when it matches, it runs no DDL at all. When it does not (a new
database, or code with a newer schema), one process upgrades, under the schema's advisory lock
(PostgreSQL) or the write lock (SQLite):

- it creates only what is missing (tables, `CREATE INDEX IF NOT EXISTS`), replaces the counters'
  functions (`CREATE OR REPLACE FUNCTION`) and creates their trigger only when absent;
- on PostgreSQL it first takes the strongest table lock it will need (`SHARE ROW EXCLUSIVE` on
  `tasks`, what `CREATE TRIGGER` needs) before touching anything else, so it never upgrades a
  lock while inserts wait on it; in-flight inserts finish, new ones wait the few milliseconds the
  upgrade takes. `lock_timeout` bounds that wait, and the upgrade is retried if it runs out.
"""

from __future__ import annotations

import functools
import hashlib
import logging
import time

from sqlalchemy import Column, Connection, Engine, String, Table, inspect, select, text
from sqlalchemy.engine import Dialect
from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.schema import CreateIndex, CreateTable

from dailies.service.db import counters, locks
from dailies.service.db.tables import Epoch, metadata
from dailies.service.db.writer import Writer

log = logging.getLogger("dailies.schema")

SCHEMA_NAME = "service"

# One row per schema (this module's, "service"), holding the fingerprint of the DDL that made it.
schema_version = Table(
    "schema_version", metadata,
    Column("name", String, primary_key=True),
    Column("fingerprint", String, nullable=False),
    Column("installed_at", Epoch, nullable=False),
)

# How long an upgrade waits for the table lock before it lets writers go on and tries again.
_LOCK_TIMEOUT = "5s"
_UPGRADE_TRIES = 5


@functools.cache
def fingerprint(dialect: Dialect) -> str:
    """A hash of everything `install` would create on this dialect: a change of any table, column,
    index, trigger or counter function gives another fingerprint, and so an upgrade."""
    parts = []
    for table in [*metadata.sorted_tables, *counters.metadata.sorted_tables]:
        parts.append(str(CreateTable(table).compile(dialect=dialect)))
        parts += [str(CreateIndex(index).compile(dialect=dialect)) for index in table.indexes]
    parts += counters.ddl(dialect.name)
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]


def installed_fingerprint(conn: Connection) -> str | None:
    """The fingerprint recorded in the database, None when there is no schema (or an old one made
    before fingerprints). Takes no lock that a writer could wait on."""
    if conn.dialect.name == "postgresql":
        present = conn.execute(text("SELECT to_regclass('schema_version') IS NOT NULL")).scalar()
    else:
        present = conn.execute(text(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'schema_version'")).first() is not None
    if not present:
        return None
    return conn.execute(select(schema_version.c.fingerprint)
                        .where(schema_version.c.name == SCHEMA_NAME)).scalar()


def is_current(engine: Engine) -> bool:
    with engine.connect() as conn:
        return installed_fingerprint(conn) == fingerprint(engine.dialect)


def install(engine: Engine, write: Writer | None = None) -> bool:
    """Create or upgrade the schema when its fingerprint is not this code's. Returns whether it
    ran any DDL. `write` opens SQLite's write transactions (`BEGIN IMMEDIATE`)."""
    if is_current(engine):
        return False
    if engine.dialect.name == "postgresql":
        return _install_postgres(engine)
    return _install_sqlite(write or Writer(engine))


def _install_postgres(engine: Engine) -> bool:
    for attempt in range(1, _UPGRADE_TRIES + 1):
        try:
            with engine.begin() as conn:
                locks.hold_whole(conn, locks.WholeLock.SERVICE_SCHEMA)
                if installed_fingerprint(conn) == fingerprint(engine.dialect):
                    return False  # another process upgraded while we waited for the lock
                conn.execute(text(f"SET LOCAL lock_timeout = '{_LOCK_TIMEOUT}'"))
                if conn.execute(text("SELECT to_regclass('tasks') IS NOT NULL")).scalar():
                    # The strongest lock the upgrade needs, first (see the module docstring).
                    conn.execute(text("LOCK TABLE tasks IN SHARE ROW EXCLUSIVE MODE"))
                _create(conn)
                counters.install(conn)
                _record(conn)
            log.info("database schema installed or upgraded (fingerprint %s)", fingerprint(engine.dialect))
            return True
        except (OperationalError, DBAPIError) as exc:
            # lock_timeout or a deadlock against some writer: nothing was changed (one transaction);
            # let the writers through and try again.
            if attempt == _UPGRADE_TRIES or not _is_lock_conflict(exc):
                raise
            log.warning("schema upgrade waited too long for a table lock (try %d of %d); retrying",
                        attempt, _UPGRADE_TRIES)
            time.sleep(0.2 * attempt)
    return False  # pragma: no cover - the loop returns or raises


def _install_sqlite(write: Writer) -> bool:
    # Two processes starting on one fresh data directory may both try; BEGIN IMMEDIATE makes the
    # second wait, and it then finds the work done.
    for attempt in range(3):
        try:
            with write.begin() as conn:
                if installed_fingerprint(conn) == fingerprint(conn.dialect):
                    return False
                _create(conn)
                counters.install_sqlite(conn)
                _record(conn)
            return True
        except OperationalError:
            if attempt == 2:
                raise
    return False  # pragma: no cover


def _create(conn: Connection) -> None:
    metadata.create_all(conn)
    # create_all leaves the tables that exist alone, columns and indexes included: add the nullable
    # columns and the indexes a newer schema declares to a database made by an older one.
    existing = inspect(conn)
    for table in metadata.sorted_tables:
        have = {c["name"] for c in existing.get_columns(table.name)}
        for column in table.columns:
            if column.name not in have:
                if not column.nullable:
                    raise RuntimeError(f"schema upgrade: {table.name}.{column.name} is new and NOT NULL; "
                                       "give it a default or make it nullable")
                kind = column.type.compile(dialect=conn.dialect)
                conn.execute(text(f'ALTER TABLE {table.name} ADD COLUMN "{column.name}" {kind}'))
        for index in table.indexes:
            conn.execute(CreateIndex(index, if_not_exists=True))


def _record(conn: Connection) -> None:
    conn.execute(schema_version.delete().where(schema_version.c.name == SCHEMA_NAME))
    conn.execute(schema_version.insert().values(name=SCHEMA_NAME, fingerprint=fingerprint(conn.dialect),
                                                installed_at=int(time.time())))


def _is_lock_conflict(exc: Exception) -> bool:
    code = getattr(getattr(exc, "orig", None), "sqlstate", None)
    return code in ("55P03", "40P01")  # lock_not_available, deadlock_detected
