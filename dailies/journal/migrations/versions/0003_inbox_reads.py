"""The inbox's reads (dailies/journal/inbox.py): per scope and person, the items marked read and, as
item "*", the time before which everything is. A new table: an older release never reads it."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0003"
down_revision = "0002"


def _name() -> str:
    return "journal_inbox_reads" if op.get_bind().dialect.name == "postgresql" else "inbox_reads"


def upgrade() -> None:
    postgres = op.get_bind().dialect.name == "postgresql"
    # Every journal table takes its write order from the one sequence on PostgreSQL (schema.py).
    seq = [sa.Column("seq", sa.BigInteger, nullable=False, server_default=sa.text("nextval('journal_writes')"))] \
        if postgres else []
    op.create_table(
        _name(),
        sa.Column("scope", sa.String, nullable=False, server_default=""),
        sa.Column("person", sa.String, nullable=False),
        sa.Column("item_id", sa.String, nullable=False),
        sa.Column("read_at", sa.Double, nullable=False),
        *seq,
        sa.PrimaryKeyConstraint("scope", "person", "item_id"),
    )


def downgrade() -> None:
    op.drop_table(_name())
