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


def upgrade() -> None:
    # Frozen SQL, one file per database beside this one (0001_baseline.<dialect>.sql).
    run_sql_beside(__file__)


def downgrade() -> None:
    raise NotImplementedError("the first revision is not undone: drop the tables")
