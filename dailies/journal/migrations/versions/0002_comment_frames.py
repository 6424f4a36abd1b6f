"""Comments pinned to frames: `frame` (the frame the reviewer stopped on, counted from 0 at the
video's own rate), `out_frame` (the last frame of a range, when the comment is on one) and `drawing`
(the shapes drawn on that frame, JSON: dailies/spec/drawings.py). All three may be empty, so rows
written before stay as they are and an older release reading the table ignores them."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"


def _comments() -> str:
    return "journal_comments" if op.get_bind().dialect.name == "postgresql" else "comments"


def upgrade() -> None:
    table = _comments()
    op.add_column(table, sa.Column("frame", sa.Integer))
    op.add_column(table, sa.Column("out_frame", sa.Integer))
    op.add_column(table, sa.Column("drawing", sa.Text))


def downgrade() -> None:
    table = _comments()
    for column in ("drawing", "out_frame", "frame"):
        op.drop_column(table, column)
