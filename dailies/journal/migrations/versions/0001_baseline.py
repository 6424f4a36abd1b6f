"""The journal's schema as the last release before versioned migrations made it (its version 1:
every row keyed by scope first). On SQLite the tables are named as ever; on PostgreSQL with the
prefix `journal_`, each with a `seq` from one sequence (the order rows were written in, which SQLite
keeps in its rowid).

A journal made by that release, or by one before scopes (version 0), is not run through this:
`journal.schema` finds it, brings it here (`migrate.catch_up` with these same statements) and stamps
it. SQLite files are also marked `user_version = 1`, that release's mark, so that an older release
opening a file made here does not take it for a version 0 file and convert it again.
"""

from __future__ import annotations

from dailies.service.db.migrate import run_sql_beside

revision = "0001"
down_revision = None

# The statements are the same on both databases (0001_baseline.sql) but for these words.
WORDS = {
    "postgresql": {
        "create_sequence": "CREATE SEQUENCE journal_writes",
        "prefix": "journal_",
        "double": "DOUBLE PRECISION",
        "seq_column": "\n\tseq BIGINT DEFAULT nextval('journal_writes') NOT NULL,",  # every table's last column
        "mark_version": "",
    },
    "sqlite": {"create_sequence": "", "prefix": "", "double": "DOUBLE", "seq_column": "",
               "mark_version": "PRAGMA user_version = 1"},
}


def upgrade() -> None:
    # Frozen SQL beside this file: what a database runs must never change, and SQLite keeps its text.
    run_sql_beside(__file__, WORDS)


def downgrade() -> None:
    raise NotImplementedError("the first revision is not undone: drop the tables")
