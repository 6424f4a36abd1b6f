"""The service's schema: its migrations (`migrations/versions/`, run by `db.migrate`) and what a
database made before them needs to join them.

Releases before versioned migrations kept a fingerprint of their DDL in `schema_version` and, when
it was not theirs, created what was missing. Such a database (a `tasks` table, no version table) is
brought to the first revision the same way (`migrate.catch_up` with 0001's statements), its hourly
counters filled if it had none, then stamped at 0001 and upgraded like any other.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from sqlalchemy import Connection, Engine, text

from dailies.service.db import counters, locks, migrate
from dailies.service.db.writer import Writer


def _adopt(conn: Connection, baseline: Sequence[str]) -> bool:
    if not migrate.table_exists(conn, "tasks"):
        return False  # a new database: the revisions make everything
    had_counts = migrate.table_exists(conn, "task_counts")
    migrate.catch_up(conn, baseline)
    if not had_counts:
        # The triggers count from now on; the tasks already there are counted once, here. On
        # PostgreSQL the upgrade holds tasks against writers until it commits (migrate.py).
        conn.execute(text(counters.BACKFILL))
    return True


SERVICE = migrate.Schema(
    name="service",
    scripts=Path(__file__).with_name("migrations"),
    version_table="dailies_service_version",
    lock=locks.WholeLock.SERVICE_SCHEMA,
    first_table="tasks",
    adopt=_adopt,
)


def install(engine: Engine, write: Writer | None = None) -> bool:
    """Bring the service's schema to its newest revision unless it is there (no DDL, no lock then).
    Returns whether it ran any DDL. `write` opens SQLite's write transactions."""
    return migrate.upgrade(engine, SERVICE, write)


def is_current(engine: Engine) -> bool:
    return migrate.is_current(engine, SERVICE)
