"""The hourly task counters' table and the triggers that keep it (DDL of their own, outside
`tables.metadata`): created and upgraded with the schema (schema.py); read by tasks/counts.py.

PostgreSQL keeps them with one trigger function; SQLite, which has no trigger functions, with three
triggers."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, Connection, MetaData, String, Table, text

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
