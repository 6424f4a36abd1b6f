"""Schema and engine: SQLAlchemy Core on SQLite in WAL mode (the embedded default) or on
PostgreSQL (a team's deployment: several API nodes and render workers on one database).

SQLite: writers open their transaction with `BEGIN IMMEDIATE`, so two processes on one data
directory queue for the write lock instead of failing with "database is locked" when a read
transaction tries to become a write one; readers use plain deferred transactions and never block
writers.

PostgreSQL (psycopg 3): plain READ COMMITTED transactions; what must not race takes a row lock
(`FOR UPDATE SKIP LOCKED` claims, in store.py and callbacks.py) or an advisory lock (the schema
at start, a project's quota and idempotency check). The schema is created or upgraded by whichever
process finds it missing or outdated, and only then (schema.py); a process that finds it current
runs no DDL, so starting never gets in the way of writers.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from sqlalchemy import (
    BigInteger,
    Boolean,
    Column,
    Connection,
    Engine,
    Float,
    Index,
    Integer,
    MetaData,
    String,
    Table,
    Text,
    create_engine,
    event,
)

metadata = MetaData()

# Row counters: 64-bit on PostgreSQL; on SQLite an `INTEGER PRIMARY KEY` (the rowid) is already
# 64-bit and only that exact type name autoincrements.
Serial = BigInteger().with_variant(Integer, "sqlite")
# Unix seconds outlive 2038 in 64 bits; seeds reach 2**32 - 1, past PostgreSQL's INTEGER.
Epoch = BigInteger

# The scheduler's first key: the online tier before flex (offline, cheaper, may wait hours).
TIER_RANK = {"default": 0, "flex": 1}
DEFAULT_TIER_RANK = TIER_RANK["default"]


tasks = Table(
    "tasks", metadata,
    Column("seq", Serial, primary_key=True, autoincrement=True),
    Column("id", String, nullable=False, unique=True),
    Column("project", String, nullable=False),
    Column("model", String, nullable=False),  # the model id, as the record shows it
    Column("endpoint", String, nullable=False),  # what the request named; filter.model matches it
    Column("status", String, nullable=False),
    Column("service_tier", String, nullable=False),
    Column("tier_rank", Integer, nullable=False),  # TIER_RANK: the scheduler's first key
    Column("priority", Integer),
    Column("request", Text, nullable=False),  # the request to render, as JSON
    Column("seed", BigInteger, nullable=False),  # the seed used: drawn at creation when -1 or not given
    Column("draft", Boolean, nullable=False, default=False),
    Column("draft_task_id", String),
    Column("safety_identifier", String),
    Column("callback_url", String),
    Column("execution_expires_after", Integer, nullable=False),
    Column("deadline_at", Epoch, nullable=False),
    Column("created_at", Epoch, nullable=False),
    Column("updated_at", Epoch, nullable=False),
    Column("started_at", Epoch),
    Column("finished_at", Epoch),
    Column("worker_id", String),
    Column("heartbeat_at", Float),
    Column("attempts", Integer, nullable=False, default=0),
    Column("error_code", String),
    Column("error_message", Text),
    Column("result", Text),  # what the render actually used, as JSON
    Column("video_file", String),
    Column("last_frame_file", String),
    Column("generator_state", Text),  # what the generator checkpointed (RenderJob.state), as JSON
    Index("ix_tasks_list", "project", "service_tier", "created_at"),
    Index("ix_tasks_list_status", "project", "service_tier", "status", "created_at"),
    Index("ix_tasks_list_endpoint", "project", "service_tier", "endpoint", "created_at"),
    # The create path's quota check counts a project's queued tasks; the list indexes put the
    # tier between project and status, so without this one it reads all of the project's tasks.
    Index("ix_tasks_project_status", "project", "status"),
    Index("ix_tasks_queue", "status", "tier_rank", "endpoint", "created_at"),
    Index("ix_tasks_deadline", "status", "deadline_at"),
    Index("ix_tasks_created", "created_at"),
)

idempotency = Table(
    "idempotency", metadata,
    Column("project", String, primary_key=True),
    Column("key", String, primary_key=True),
    Column("body_hash", String, nullable=False),
    Column("task_id", String, nullable=False),
    Column("created_at", Epoch, nullable=False),
)

# One row per callback event (a task's status change to be POSTed), written in the same
# transaction as the change itself, so no event is lost to a crash.
callback_events = Table(
    "callback_events", metadata,
    Column("seq", Serial, primary_key=True, autoincrement=True),
    Column("webhook_id", String, nullable=False, unique=True),
    Column("task_id", String, nullable=False),
    Column("project", String, nullable=False),
    Column("url", String, nullable=False),
    Column("status", String, nullable=False),
    Column("body", Text, nullable=False),
    Column("state", String, nullable=False),  # pending, delivered, failed
    Column("attempts", Integer, nullable=False, default=0),
    Column("max_attempts", Integer, nullable=False),
    Column("next_attempt_at", Float, nullable=False),
    Column("created_at", Float, nullable=False),
    Column("claimed_by", String),
    Column("claimed_at", Float),
    Index("ix_callback_due", "state", "next_attempt_at"),
    Index("ix_callback_task", "task_id", "seq"),
)

callback_attempts = Table(
    "callback_attempts", metadata,
    Column("seq", Serial, primary_key=True, autoincrement=True),
    Column("webhook_id", String, nullable=False),
    Column("task_id", String, nullable=False),
    Column("status", String, nullable=False),  # the task status the event reported
    Column("attempt", Integer, nullable=False),
    Column("at", Float, nullable=False),
    Column("status_code", Integer),
    Column("latency_ms", Float),
    Column("error", Text),
    Index("ix_callback_attempts_task", "task_id", "seq"),
)


# Secrets and keys that every machine of a team deployment needs, so they live in the database and
# not in one machine's data directory (README, "Team deployment"). On SQLite they stay unused: the
# keys file of the data directory holds them, as it always did.
service_secrets = Table(
    "service_secrets", metadata,
    Column("name", String, primary_key=True),  # e.g. "url-signing"
    Column("value", Text, nullable=False),
)

project_secrets = Table(
    "project_secrets", metadata,
    Column("project", String, primary_key=True),
    Column("webhook_secret", Text, nullable=False),
)

# Keys made by `dailies keys create` on a team database. Only a SHA-256 of each key is kept: a
# copy of the database does not hand out working keys.
api_keys = Table(
    "api_keys", metadata,
    Column("key_sha256", String, primary_key=True),
    Column("project", String, nullable=False),
    Column("masked", String, nullable=False),  # what `dailies keys` may show
    Column("created_at", Epoch, nullable=False),
    Column("name", String),  # the member name (members.py), shown where the key never is
    Column("rpm", Integer),  # creates per minute, None: no limit
    Column("read_rpm", Integer),  # lists and gets per minute
)

# Money in millionths of the currency unit (integers: exact, and the same on SQLite and PostgreSQL).
Micros = BigInteger

# A budget per project ('' member) or per member of a project, per calendar month (UTC) or in total.
budgets = Table(
    "budgets", metadata,
    Column("project", String, primary_key=True),
    Column("member", String, primary_key=True),  # '' for the whole project
    Column("period", String, nullable=False),  # month | total
    Column("currency", String, nullable=False),  # CNY | USD
    Column("amount", Micros, nullable=False),
    Column("updated_at", Epoch, nullable=False),
)

# One row per task: what it is expected to cost (reserved at create), then what it cost (settled at
# success) or nothing (released on failure, cancellation, expiry). Kept after the task's record is
# purged: it is the bill. budgets.py holds the statements.
ledger = Table(
    "ledger", metadata,
    Column("task_id", String, primary_key=True),
    Column("project", String, nullable=False),
    Column("member", String, nullable=False),
    Column("model", String, nullable=False),
    Column("currency", String, nullable=False),  # '' when the model has no known price
    Column("amount", Micros, nullable=False),
    Column("tokens", BigInteger, nullable=False),
    Column("state", String, nullable=False),  # reserved | settled | released
    Column("month", Integer, nullable=False),  # YYYYMM (UTC) of the create: the period a month budget counts
    Column("created_at", Epoch, nullable=False),
    Column("settled_at", Epoch),
    Column("upstream_key", String),  # a gateway's: the name of the upstream key the task ran on
    Index("ix_ledger_project", "project", "month", "state"),
)

# Requests per key and minute: one row per (key, kind, minute), counted by one guarded upsert
# (rate_limits.py), shared by every API node.
rate_windows = Table(
    "rate_windows", metadata,
    Column("key_id", String, primary_key=True),
    Column("kind", String, primary_key=True),  # create | read
    Column("window", Epoch, primary_key=True),  # unix minute start
    Column("n", Integer, nullable=False),
)

# A gateway's upstream creates, one row each (upstream key name, upstream model id, when it was let
# go): the sliding window of `--upstream-rpm` (upstream_pacing.py), shared by every worker.
upstream_creates = Table(
    "upstream_creates", metadata,
    Column("seq", Serial, primary_key=True, autoincrement=True),
    Column("upstream_key", String, nullable=False),
    Column("model", String, nullable=False),
    Column("at", Float, nullable=False),  # unix seconds, with their fraction
    Index("ix_upstream_creates_pair", "upstream_key", "model", "at"),
)


def normalize_url(url: str) -> str:
    """`postgresql://` and `postgres://` (what people and platforms write) mean psycopg 3 here."""
    for scheme in ("postgresql://", "postgres://"):
        if url.startswith(scheme):
            return "postgresql+psycopg://" + url.removeprefix(scheme)
    return url


def is_postgres(engine: Engine) -> bool:
    return engine.dialect.name == "postgresql"


def make_engine(database: Path | str) -> Engine:
    """An engine with the schema in place: a Path is a SQLite file, a string a database URL."""
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

    _create_sqlite_schema(engine)
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
    engine = create_engine(url, pool_pre_ping=True, pool_size=5, max_overflow=15,
                           connect_args=dict(POSTGRES_CONNECT_ARGS))
    from .schema import install  # it imports this module

    install(engine)
    return engine


def _create_sqlite_schema(engine: Engine) -> None:
    from .schema import install  # it imports this module

    install(engine, writer(engine))


class Writer:
    """Write transactions on an engine: `with writer.begin() as conn: ...`.

    SQLite has one writer at a time. Left to itself, a thread that finds the database locked
    sleeps in SQLite's busy handler (1, 2, 5, 10 ... 100 ms) and tries again, so under concurrent
    creates most threads sleep while the lock is free, and the slowest wait close to a second.
    The threads of one process therefore queue on a lock of their own (woken the moment it is
    released) and only another process is left to the busy handler. PostgreSQL takes row locks
    and needs none of this.
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine.execution_options(write=True)  # BEGIN IMMEDIATE on SQLite
        self._lock = _sqlite_write_lock(engine) if engine.dialect.name == "sqlite" else None

    @contextmanager
    def begin(self) -> Iterator[Connection]:
        if self._lock is None:
            with self.engine.begin() as conn:
                yield conn
            return
        with self._lock, self.engine.begin() as conn:
            yield conn

    @contextmanager
    def held_if_free(self) -> Iterator[bool]:
        """Hold this process's write lock for a block if no other thread holds it (True); else hold
        nothing (False), at once. The lock is re-entrant: `begin` inside the block does not wait.
        Always False on PostgreSQL, which has no such lock."""
        if self._lock is None:
            yield False
            return
        held = self._lock.acquire(blocking=False)
        try:
            yield held
        finally:
            if held:
                self._lock.release()


_sqlite_write_locks: dict[str, threading.RLock] = {}
_sqlite_write_locks_guard = threading.Lock()


def _sqlite_write_lock(engine: Engine) -> threading.RLock:
    """One lock per database file in this process, whichever engine writes to it."""
    with _sqlite_write_locks_guard:
        return _sqlite_write_locks.setdefault(str(engine.url.database), threading.RLock())


def writer(engine: Engine) -> Writer:
    """Write transactions on `engine` (see `Writer`)."""
    return Writer(engine)
