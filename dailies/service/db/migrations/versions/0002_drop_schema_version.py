"""Drop `schema_version`, the fingerprint scheme's table: the version is Alembic's now
(`dailies_service_version`). That fingerprint hashed each table's indexes in the order of a Python set,
which often differs from one process to the next, so a process often found it outdated and ran the
upgrade again; nothing reads it any more."""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision = "0002"
down_revision = "0001"


def upgrade() -> None:
    op.drop_table("schema_version")


def downgrade() -> None:
    op.create_table("schema_version", sa.Column("name", sa.String, primary_key=True),
                    sa.Column("fingerprint", sa.String, nullable=False),
                    sa.Column("installed_at", sa.BigInteger, nullable=False))
