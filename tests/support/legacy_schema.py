"""What the service's revisions after the first added, undone: a database made at the head then put back
to look as the release before versioned migrations left it (no version table, a fingerprint) must not
hold what that release never made, or the revisions that make it would find it there already."""

from __future__ import annotations

from sqlalchemy import Connection, text

SINCE_0001 = (
    "DROP TABLE notification_targets",  # 0003
    "DROP TABLE notification_marks",
    "DROP TABLE live_sessions",  # 0004
    "ALTER TABLE callback_events DROP COLUMN channel",
)


def undo_after_0001(conn: Connection) -> None:
    for statement in SINCE_0001:
        conn.execute(text(statement))
