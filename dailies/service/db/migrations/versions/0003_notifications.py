"""Notifications out: the projects' targets, the marks of what was told once, and the channel of a
queued event (None for a task's callback, which every event before this revision is)."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"


def upgrade() -> None:
    op.create_table(
        "notification_targets",
        sa.Column("id", sa.String, primary_key=True),  # nt-…
        sa.Column("project", sa.String, nullable=False),
        sa.Column("owner", sa.String, nullable=False),  # '' for the project's channel, else a member
        sa.Column("kind", sa.String, nullable=False),  # webhook | slack | mattermost | email
        sa.Column("address", sa.String, nullable=False),
        sa.Column("events", sa.String, nullable=False),  # event kinds, comma separated
        sa.Column("created_by", sa.String, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
    )
    op.create_index("ix_notification_targets_project", "notification_targets", ["project"])
    op.create_table(
        "notification_marks",
        sa.Column("mark", sa.String, primary_key=True),
        sa.Column("at", sa.BigInteger, nullable=False),
    )
    op.add_column("callback_events", sa.Column("channel", sa.String, nullable=True))


def downgrade() -> None:
    with op.batch_alter_table("callback_events") as batch:
        batch.drop_column("channel")
    op.drop_table("notification_marks")
    op.drop_index("ix_notification_targets_project", "notification_targets")
    op.drop_table("notification_targets")
