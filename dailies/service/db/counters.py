"""The hourly task counters' table, read by tasks/counts.py. The triggers that keep it (a trigger
function on PostgreSQL, three triggers on SQLite) are DDL of the migrations (migrations/versions/
0001_baseline.py), outside `tables.metadata`."""

from __future__ import annotations

from sqlalchemy import BigInteger, Column, MetaData, String, Table

metadata = MetaData()
task_counts = Table(
    "task_counts", metadata,
    Column("project", String, primary_key=True),
    Column("service_tier", String, primary_key=True),
    Column("hour", BigInteger, primary_key=True),  # created_at rounded down to the hour
    Column("status", String, primary_key=True),
    Column("endpoint", String, primary_key=True),
    Column("n", BigInteger, nullable=False),
)

# The counts of the tasks a database had before it had counters (an older release's, schema.py).
BACKFILL = """
INSERT INTO task_counts (project, service_tier, hour, status, endpoint, n)
SELECT project, service_tier, created_at / 3600 * 3600, status, endpoint, count(*) FROM tasks GROUP BY 1, 2, 3, 4, 5
"""
