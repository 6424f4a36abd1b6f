"""A share's guest grant (`notice_grant`): what its page tells the service's notifications with when a
guest comments or sets a status (service/access/guest_grants.py). Empty for a share made before, or on
a service without notifications: its guests' comments are then told to no one, as before."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0004"
down_revision = "0003"


def _shares() -> str:
    return "journal_shares" if op.get_bind().dialect.name == "postgresql" else "shares"


def upgrade() -> None:
    op.add_column(_shares(), sa.Column("notice_grant", sa.Text))


def downgrade() -> None:
    op.drop_column(_shares(), "notice_grant")
