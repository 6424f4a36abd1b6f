"""Live review sessions: their presenter's state, who presents, and the tokens to control and follow."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"


def upgrade() -> None:
    op.create_table(
        "live_sessions",
        sa.Column("id", sa.String, primary_key=True),  # "live-" and 16 hex digits, in the session's link
        sa.Column("project", sa.String, nullable=False),
        sa.Column("title", sa.String, nullable=False),
        sa.Column("versions", sa.Text, nullable=False),  # JSON [{"task_id", "label"}]
        sa.Column("presenter", sa.String, nullable=False),
        sa.Column("control_sha256", sa.String, nullable=False),  # of the presenter's control token
        sa.Column("follow_token", sa.String, nullable=False),
        sa.Column("state", sa.Text),  # the presenter's player, as JSON
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("created_by", sa.String, nullable=False),
        sa.Column("created_at", sa.BigInteger, nullable=False),
        sa.Column("updated_at", sa.Float, nullable=False),
        sa.Column("ended_at", sa.BigInteger),
    )
    op.create_index("ix_live_sessions_project", "live_sessions", ["project", "created_at"])


def downgrade() -> None:
    op.drop_index("ix_live_sessions_project", "live_sessions")
    op.drop_table("live_sessions")
