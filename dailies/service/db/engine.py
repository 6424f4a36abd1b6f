"""The engine: SQLAlchemy Core on SQLite in WAL mode (the embedded default) or on
PostgreSQL (a team's deployment: several API nodes and render workers on one database).

SQLite: writers open their transaction with `BEGIN IMMEDIATE`, so two processes on one data
directory queue for the write lock instead of failing with "database is locked" when a read
transaction tries to become a write one; readers use plain deferred transactions and never block
writers.

PostgreSQL (psycopg 3): plain READ COMMITTED transactions; what must not race takes a row lock
(`FOR UPDATE SKIP LOCKED` claims, in store.py and callbacks.py) or an advisory lock (the schema
at start, a project's quota and idempotency check). The schema is created or upgraded by whichever
process finds it missing or outdated, and only then (migrate.py); a process that finds it current
runs no DDL, so starting never gets in the way of writers.

`open_engine` is the engine alone, for any schema (the journal's too); `make_engine` adds the service's.
"""

from __future__ import annotations

from pathlib import Path

from sqlalchemy import (
    Engine,
    create_engine,
    event,
)

from dailies.service.db.schema import install
from dailies.service.db.writer import writer


def normalize_url(url: str) -> str:
    """`postgresql://` and `postgres://` (what people and platforms write) mean psycopg 3 here."""
    for scheme in ("postgresql://", "postgres://"):
        if url.startswith(scheme):
            return "postgresql+psycopg://" + url.removeprefix(scheme)
    return url


def is_postgres(engine: Engine) -> bool:
    return engine.dialect.name == "postgresql"


def make_engine(database: Path | str) -> Engine:
    """An engine with the service's schema in place: a Path is a SQLite file, a string a database URL."""
    engine = open_engine(database)
    install(engine, writer(engine))
    return engine


def open_engine(database: Path | str) -> Engine:
    """An engine on a SQLite file (a Path, or a `sqlite:///` URL) or a PostgreSQL URL, no schema made."""
    if isinstance(database, str) and not database.startswith("sqlite"):
        return _postgres_engine(normalize_url(database))
    if isinstance(database, str):
        database = Path(database.removeprefix("sqlite:///"))
    return _sqlite_engine(database)


def _sqlite_engine(db_path: Path) -> Engine:
    db_path.parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(f"sqlite:///{db_path}", connect_args={"timeout": 30, "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record):
        # Take transaction control from the driver so that BEGIN is ours to choose.
        dbapi_conn.isolation_level = None
        cur = dbapi_conn.cursor()
        cur.execute("PRAGMA journal_mode=WAL")
        cur.execute("PRAGMA synchronous=NORMAL")
        cur.execute("PRAGMA busy_timeout=30000")
        cur.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn):
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("write") else "BEGIN")

    return engine


# libpq's connection options (psycopg passes them on). connect_timeout: a database that does not
# answer a new connection is noticed in seconds (and claims pause, workers.py), not after the
# system's TCP timeout. The rest are for connections already open (in the pool, or mid-statement)
# when the database's host freezes or the network drops without a reset: without them a statement
# waits for its answer for the system's TCP timeout (15 minutes and more). Keepalives find an idle
# peer gone after 10 s of silence and 3 unanswered probes 5 s apart; tcp_user_timeout ends a
# connection whose sent data goes unacknowledged for 25 s. Either way the statement fails with an
# OperationalError (the database is down, faults.py) within about 30 s. A database that is alive
# but does not answer (its host's kernel still acknowledges) is not caught here: the readiness
# probe and the key lookup wait with deadlines of their own (health.py, shared_secrets.py).
POSTGRES_CONNECT_ARGS = {
    "connect_timeout": 5,
    "keepalives": 1,
    "keepalives_idle": 10,
    "keepalives_interval": 5,
    "keepalives_count": 3,
    "tcp_user_timeout": 25_000,  # milliseconds
}


def _postgres_engine(url: str) -> Engine:
    # pre_ping: a worker idle through a database restart or a proxy's idle cut gets a fresh
    # connection instead of an error on its next claim.
    return create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=15,
                         connect_args=dict(POSTGRES_CONNECT_ARGS))
