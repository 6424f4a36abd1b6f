"""The service's schema as the last release before versioned migrations made it: every table and
index of `db/tables.py` then, `schema_version` (that scheme's fingerprint, dropped by 0002), and the
hourly task counters (`task_counts`) with the triggers that keep them.

A database made by that release is not run through this: `db.schema` finds it (tasks, no version
table), creates what it lacks from these same statements (`migrate.catch_up`) and stamps it here.

The counters: PostgreSQL keeps them with one trigger function; SQLite, which has none, with three
triggers. Every change of a task rewrites a counter row, and PostgreSQL keeps the old version until a
vacuum: a list's sum over a week of hours then walks every dead version (59,000 pages for 1,000 hours
after a million inserts: 8 ms). Room on each page (fillfactor) keeps an update on its page (a HOT
update, pruned as pages are read), and a vacuum after every thousand dead versions clears the rest.
"""

from __future__ import annotations

from dailies.service.db.migrate import run_sql_beside

revision = "0001"
down_revision = None

# The tables are the same on both databases (0001_baseline.sql) but for these words: the row counters'
# type, and the column names each one's SQLAlchemy quoted as reserved. The counters' SQL is each
# database's own (0001_baseline.<dialect>.sql).
WORDS = {
    "postgresql": {"serial": "BIGSERIAL", "key": "key", "window": '"window"'},
    "sqlite": {"serial": "INTEGER", "key": '"key"', "window": "window"},
}


def upgrade() -> None:
    # Frozen SQL beside this file: what a database runs must never change, and SQLite keeps its text.
    run_sql_beside(__file__, WORDS)


def downgrade() -> None:
    raise NotImplementedError("the first revision is not undone: drop the database")
