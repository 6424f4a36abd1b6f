"""The service schema's history (Alembic): one file per revision in versions/, run at start by
`db.migrate.upgrade` (no alembic.ini). The journal keeps a history of its own beside it
(dailies/journal/migrations/), with its own version table.

Adding a revision (either history):

1. Change the tables where they are defined (`db/tables.py`, `journal/schema.py`), so queries see them.
2. Write the revision: `python -c "from dailies.service.db.migrate import new_revision; from
   dailies.service.db.schema import SERVICE; print(new_revision(SERVICE, 'what it does'))"`
   (`dailies.journal.schema.JOURNAL` for the journal) writes versions/NNNN_what_it_does.py after the
   head; fill in `upgrade` with `op.*` calls or SQL. Never edit a revision that has been released.
3. Write it for both databases. SQLite alters a table only by copying it: use `op.batch_alter_table`,
   which does so (and does plain ALTERs on PostgreSQL). Copying `tasks` drops the counters' triggers
   on it: create them again in the same revision (0001_baseline has them). A new NOT NULL column takes
   three steps: add it nullable, fill it (`op.execute("UPDATE ...")`), then make it NOT NULL.
4. On PostgreSQL the upgrade runs while others write: it holds `SHARE ROW EXCLUSIVE` on `tasks` from
   its start (`migrate.py`); a statement that needs more (an ALTER of `tasks`) waits for the readers in
   flight, bounded by lock_timeout and tried again. Keep revisions short: writers wait for the commit.
5. tests/service/test_schema.py upgrades a new and an old database to the head on both databases and
   checks the head against the tables (`test_the_head_is_what_the_tables_declare`).
"""
