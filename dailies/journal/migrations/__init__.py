"""The journal schema's history (Alembic), beside the service's and run the same way
(dailies/service/db/migrate.py), with its own version table, `journal_version`. How to add a revision:
dailies/service/db/migrations/__init__.py."""
