"""Hourly task counters, so that the list's `total` takes a time independent of the number of tasks.

A list answers with the total of the project's matching tasks of the last 7 days. Counting the
rows costs time in proportion to them: PostgreSQL counts rows one by one (visibility is per row),
250 ms for 900,000 tasks on 2 cores; SQLite walks its index, 4-7 ms at 100,000 and ten times that
at 1,000,000. So both keep `task_counts`: one row per (project, tier, hour of creation, status,
endpoint) with the number of such tasks, maintained by triggers on `tasks` in the same transaction
as every insert, status change and delete (so it can never disagree with the rows it counts). A total is then the
sum over the whole hours inside the window plus an exact count of the two partial hours at its
edges, read in one statement (one snapshot).

The trigger moves a task between two counter rows in a fixed order (by key), so two transactions
moving tasks in opposite directions never wait on each other in a cycle.
"""

from __future__ import annotations

import functools

from sqlalchemy import (
    BigInteger,
    Column,
    ColumnElement,
    Connection,
    MetaData,
    Select,
    String,
    Table,
    bindparam,
    cast,
    func,
    select,
    text,
)

from ..spec import limits as L
from ..spec.models import ListTasksQuery
from .db import tasks

HOUR = 3600

# Not in db.metadata: created with its triggers by `install` / `install_sqlite`.
metadata = MetaData()
task_counts = Table(
    "task_counts", metadata,
    Column("project", String, primary_key=True),
    Column("service_tier", String, primary_key=True),
    Column("hour", BigInteger, primary_key=True),  # created_at rounded down to the hour
    Column("status", String, primary_key=True),
    Column("endpoint", String, primary_key=True),
    Column("n", BigInteger, nullable=False),
)

_FUNCTIONS = """
CREATE OR REPLACE FUNCTION dailies_bump_task_count(p text, t text, h bigint, s text, e text, d integer)
RETURNS void LANGUAGE sql AS $$
    INSERT INTO task_counts AS c (project, service_tier, hour, status, endpoint, n) VALUES (p, t, h, s, e, d)
    ON CONFLICT (project, service_tier, hour, status, endpoint) DO UPDATE SET n = c.n + EXCLUDED.n
$$;

CREATE OR REPLACE FUNCTION dailies_count_task() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    old_key record;
    new_key record;
BEGIN
    IF TG_OP IN ('UPDATE', 'DELETE') THEN
        old_key := (OLD.project, OLD.service_tier, OLD.created_at / 3600 * 3600, OLD.status, OLD.endpoint);
    END IF;
    IF TG_OP IN ('UPDATE', 'INSERT') THEN
        new_key := (NEW.project, NEW.service_tier, NEW.created_at / 3600 * 3600, NEW.status, NEW.endpoint);
    END IF;
    IF TG_OP = 'INSERT' THEN
        PERFORM dailies_bump_task_count(NEW.project, NEW.service_tier, NEW.created_at / 3600 * 3600,
                                        NEW.status, NEW.endpoint, 1);
    ELSIF TG_OP = 'DELETE' THEN
        PERFORM dailies_bump_task_count(OLD.project, OLD.service_tier, OLD.created_at / 3600 * 3600,
                                        OLD.status, OLD.endpoint, -1);
    ELSIF old_key::text IS DISTINCT FROM new_key::text THEN
        IF old_key::text < new_key::text THEN
            PERFORM dailies_bump_task_count(OLD.project, OLD.service_tier, OLD.created_at / 3600 * 3600,
                                            OLD.status, OLD.endpoint, -1);
            PERFORM dailies_bump_task_count(NEW.project, NEW.service_tier, NEW.created_at / 3600 * 3600,
                                            NEW.status, NEW.endpoint, 1);
        ELSE
            PERFORM dailies_bump_task_count(NEW.project, NEW.service_tier, NEW.created_at / 3600 * 3600,
                                            NEW.status, NEW.endpoint, 1);
            PERFORM dailies_bump_task_count(OLD.project, OLD.service_tier, OLD.created_at / 3600 * 3600,
                                            OLD.status, OLD.endpoint, -1);
        END IF;
    END IF;
    RETURN NULL;
END
$$;
"""

_TRIGGER = """
CREATE TRIGGER dailies_task_counts
AFTER INSERT OR DELETE OR UPDATE OF status, project, service_tier, endpoint, created_at ON tasks
FOR EACH ROW EXECUTE FUNCTION dailies_count_task()
"""

_BACKFILL = """
INSERT INTO task_counts (project, service_tier, hour, status, endpoint, n)
SELECT project, service_tier, created_at / 3600 * 3600, status, endpoint, count(*) FROM tasks GROUP BY 1, 2, 3, 4, 5
"""


# Every change of a task rewrites a counter row, and PostgreSQL keeps the old version until a vacuum:
# a list's sum over a week of hours then walks every dead version (59,000 pages for 1,000 hours after
# a million inserts: 8 ms). Room on each page keeps an update on its page (a HOT update, pruned as
# pages are read), and a vacuum after every thousand dead versions clears the rest.
_STORAGE = """ALTER TABLE task_counts SET (fillfactor = 50, autovacuum_vacuum_scale_factor = 0,
    autovacuum_vacuum_threshold = 1000, autovacuum_analyze_scale_factor = 0.05)"""


def ddl(dialect_name: str) -> list[str]:
    """The statements behind the counters on a dialect, for the schema's fingerprint (schema.py):
    a change to any of them makes every database upgrade once."""
    if dialect_name == "postgresql":
        return [_STORAGE, _FUNCTIONS, _TRIGGER]
    return list(_SQLITE_TRIGGERS)


def install(conn: Connection) -> None:
    """Create the counters, their trigger and, on a database that had tasks before them, their
    starting values. Runs in the schema's upgrade transaction (schema.py), which holds a lock on
    `tasks` that keeps writers out until commit, so the backfill misses none. The functions are
    replaced in place; the trigger is created only when absent (dropping it at every start took
    an exclusive lock on `tasks` and deadlocked against inserts)."""
    existed = conn.execute(text("SELECT to_regclass('task_counts') IS NOT NULL")).scalar()
    metadata.create_all(conn)
    conn.execute(text(_STORAGE))
    conn.execute(text(_FUNCTIONS))
    has_trigger = conn.execute(text(
        "SELECT 1 FROM pg_trigger WHERE tgname = 'dailies_task_counts' AND tgrelid = 'tasks'::regclass")).first()
    if has_trigger is None:
        conn.execute(text(_TRIGGER))
    if not existed:
        conn.execute(text(_BACKFILL))


# SQLite: the same counters, kept by three triggers (SQLite has no trigger functions). A single
# writer at a time (BEGIN IMMEDIATE) means no lock order to keep.
_SQLITE_BUMP = """INSERT INTO task_counts (project, service_tier, hour, status, endpoint, n)
    VALUES ({row}.project, {row}.service_tier, {row}.created_at / 3600 * 3600, {row}.status, {row}.endpoint, {delta})
    ON CONFLICT (project, service_tier, hour, status, endpoint) DO UPDATE SET n = n + ({delta});"""
_SQLITE_TRIGGERS = (
    "CREATE TRIGGER IF NOT EXISTS dailies_task_counts_insert AFTER INSERT ON tasks BEGIN "
    + _SQLITE_BUMP.format(row="NEW", delta=1) + " END",
    "CREATE TRIGGER IF NOT EXISTS dailies_task_counts_delete AFTER DELETE ON tasks BEGIN "
    + _SQLITE_BUMP.format(row="OLD", delta=-1) + " END",
    "CREATE TRIGGER IF NOT EXISTS dailies_task_counts_update "
    "AFTER UPDATE OF status, project, service_tier, endpoint, created_at ON tasks "
    "WHEN OLD.status IS NOT NEW.status OR OLD.project IS NOT NEW.project "
    "OR OLD.service_tier IS NOT NEW.service_tier OR OLD.endpoint IS NOT NEW.endpoint "
    "OR OLD.created_at / 3600 IS NOT NEW.created_at / 3600 BEGIN "
    + _SQLITE_BUMP.format(row="OLD", delta=-1) + " " + _SQLITE_BUMP.format(row="NEW", delta=1) + " END",
)


def install_sqlite(conn: Connection) -> None:
    """The counters and their triggers on SQLite, with starting values on a database that had
    tasks before them. Runs in the schema's write transaction (BEGIN IMMEDIATE): no task is
    written between the backfill and the triggers, so the triggers of an older schema can be
    replaced outright."""
    existed = conn.execute(text(
        "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'task_counts'")).first() is not None
    metadata.create_all(conn)
    for name in ("insert", "delete", "update"):
        conn.execute(text(f"DROP TRIGGER IF EXISTS dailies_task_counts_{name}"))
    for trigger in _SQLITE_TRIGGERS:
        conn.execute(text(trigger))
    if not existed:
        conn.execute(text(_BACKFILL))


def total_statement(project: str, query: ListTasksQuery, now: int) -> tuple[Select, dict] | None:
    """One statement giving the list's total from the counters (no task ids in the query), with
    its parameters, or None when the window holds no whole hour."""
    start = now - L.RECORD_RETENTION_SECONDS
    whole_from = -(-start // HOUR) * HOUR  # the first whole hour inside [start, now)
    whole_to = now // HOUR * HOUR
    if whole_from >= whole_to:
        return None
    params = {"project": project, "tier": query.service_tier, "start": start, "whole_from": whole_from,
              "whole_to": whole_to, "now": now, "status": query.status, "endpoint": query.model}
    return _total_by_counters(bool(query.status), bool(query.model)), params


@functools.cache
def _total_by_counters(by_status: bool, by_endpoint: bool) -> Select:
    """The statement of `total_statement` for one shape of filters, built once: its values are
    parameters, so SQLAlchemy compiles it once and every list only binds them."""
    c = task_counts.c
    counted = [c.project == bindparam("project"), c.service_tier == bindparam("tier"),
               c.hour >= bindparam("whole_from"), c.hour < bindparam("whole_to")]
    matching = [tasks.c.project == bindparam("project"), tasks.c.service_tier == bindparam("tier")]
    if by_status:
        counted.append(c.status == bindparam("status"))
        matching.append(tasks.c.status == bindparam("status"))
    if by_endpoint:
        counted.append(c.endpoint == bindparam("endpoint"))
        matching.append(tasks.c.endpoint == bindparam("endpoint"))
    # sum() of bigint is numeric in PostgreSQL: back to a bigint, as a count is.
    whole_hours = select(cast(func.coalesce(func.sum(c.n), 0), BigInteger)).where(*counted).scalar_subquery()
    # Each edge with exactly one lower and one upper bound: SQLite takes one of each for an index
    # range, and given two upper bounds (the window's and the edge's) it may scan the whole window.
    before = _count_between(matching, "start", "whole_from")
    after = _count_between(matching, "whole_to", "now")
    return select(whole_hours + before + after)


def _count_between(matching: list[ColumnElement], low: str, high: str):
    created = tasks.c.created_at
    return (select(func.count()).select_from(tasks)
            .where(*matching, created >= bindparam(low), created < bindparam(high)).scalar_subquery())


def forget_before(conn: Connection, cutoff: int) -> None:
    """Drop the counter rows of hours wholly before `cutoff` (their tasks are purged: all zero)."""
    conn.execute(task_counts.delete().where(task_counts.c.hour < cutoff // HOUR * HOUR - HOUR))
