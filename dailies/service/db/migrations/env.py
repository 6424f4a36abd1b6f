"""Alembic's entry into this history: the revisions run on the connection `db.migrate` opened."""

from alembic import context

from dailies.service.db.migrate import run_env

run_env(context)
