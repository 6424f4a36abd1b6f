"""The journal's tables and where they live: their definitions, the engine (an SQLite file, or
PostgreSQL), their creation and migration, and the statements that differ between the two databases."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sqlalchemy import (
    BigInteger,
    Column,
    ColumnElement,
    Double,
    Engine,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    Sequence,
    String,
    Table,
    Text,
    create_engine,
    event,
    insert,
    literal_column,
)
from sqlalchemy.dialects import postgresql
from sqlalchemy.schema import CreateIndex

from ..service.db import locks
from .bucket import JournalBucket

SCHEMA_VERSION = 1
UNSCOPED = ""  # the scope of rows written before scopes existed, and of the unscoped view's writes
# PostgreSQL tables are named with this prefix, so they never meet the service's in one database.
POSTGRES_PREFIX = "journal_"


def _define(prefix: str, postgres: bool) -> tuple[MetaData, dict[str, Table], Sequence | None]:
    """The journal's tables, each row keyed by scope first (a batch by its random id alone).

    "The latest written" row: on SQLite the rowid (INSERT OR REPLACE gives a replaced row a new one);
    PostgreSQL has no rowid, so a row takes a number from a sequence at every write (`seq`)."""
    metadata = MetaData()
    writes = Sequence(f"{prefix}writes", metadata=metadata) if postgres else None

    def table(name: str, key: tuple[str, ...], *columns: Column, indexes: Iterable[tuple[str, str]] = ()) -> Table:
        extra = [Column("seq", BigInteger, nullable=False, server_default=writes.next_value())] if writes else []
        return Table(f"{prefix}{name}", metadata, Column("scope", String, nullable=False, server_default=UNSCOPED),
                     *columns, *extra, PrimaryKeyConstraint(*key),
                     *[Index(f"ix_{prefix}{name}_{suffix}", column) for suffix, column in indexes])

    def required(name: str, kind: Any = String) -> Column:
        return Column(name, kind, nullable=False)

    tables = {
        "batches": table("batches", ("id",), required("id"), required("created_at", Double), required("label"),
                         required("mode")),
        "submissions": table(
            "submissions", ("scope", "task_id"), required("task_id"), Column("batch_id", String),
            required("submitted_at", Double), required("base_url"), required("model"), required("mode"),
            required("prompt", Text), required("request", Text), required("inputs", Text),
            indexes=[("batch", "batch_id"), ("time", "submitted_at")]),
        "reviews": table("reviews", ("scope", "task_id"), required("task_id"), Column("verdict", String),
                         Column("stars", Integer), Column("notes", Text, nullable=False, server_default=""),
                         required("updated_at", Double)),
        "kept": table("kept", ("scope", "task_id", "name"), required("task_id"), required("name"),
                      required("path", Text), required("size", BigInteger), required("kept_at", Double)),
        "records": table("records", ("scope", "task_id"), required("task_id"), required("record", Text),
                         required("saved_at", Double)),
        "preferences": table("preferences", ("scope", "name"), required("name"), required("value", Text)),
        # Review together (statuses.py, comments.py, shots.py): appended, never rewritten, except a
        # comment's resolution and a person's own rating.
        "statuses": table("statuses", ("scope", "id"), required("id"), required("task_id"), required("status"),
                          required("author"), Column("previous", String), required("at", Double),
                          indexes=[("task", "task_id")]),
        "ratings": table("ratings", ("scope", "task_id", "author"), required("task_id"), required("author"),
                         required("stars", Integer), required("at", Double)),
        "comments": table("comments", ("scope", "id"), required("id"), required("task_id"), Column("parent_id", String),
                          required("author"), required("body", Text), Column("timecode", Double),
                          required("created_at", Double), Column("resolved_at", Double), Column("resolved_by", String),
                          indexes=[("task", "task_id")]),
        "authors": table("authors", ("scope", "task_id"), required("task_id"), required("author"),
                         required("at", Double)),
        "shots": table("shots", ("scope", "task_id"), required("task_id"), required("shot_id"),
                       Column("parent_id", String), required("how"), required("created_at", Double),
                       indexes=[("shot", "shot_id")]),
        # Share links (shares.py): one row per share, found by its token's SHA-256 (the token is never stored).
        "shares": table("shares", ("id",), required("id"), required("token_hash"), required("scope_base_url"),
                        required("scope_key"), required("task_ids", Text), required("prompts", Text),
                        required("created_by"), required("created_at", Double), required("expires_at", Double),
                        Column("passphrase", String), required("allow_comments", Integer),
                        required("allow_status", Integer), required("hide_prompt", Integer),
                        Column("revoked_at", Double), required("failed_attempts", Integer),
                        Column("locked_until", Double), indexes=[("token", "token_hash")]),
    }
    return metadata, tables, writes


class Store:
    """The journal's engine and tables, shared by every view of it (threads of one process), and
    its bucket when it has one."""

    def __init__(self, path: Path, database_url: str, storage: str) -> None:
        self.path = path
        if database_url.startswith("sqlite:///"):
            path, database_url = Path(database_url.removeprefix("sqlite:///")), ""
        self.postgres = bool(database_url)
        self.metadata, self.tables, self._writes = _define(POSTGRES_PREFIX if self.postgres else "", self.postgres)
        self.engine = _postgres_engine(database_url) if self.postgres else _sqlite_engine(path)
        self.writer = self.engine.execution_options(write=True)  # BEGIN IMMEDIATE on SQLite
        self.bucket = JournalBucket(storage) if storage else None
        # The record last written per (scope, task id): a page shows the same records run after run,
        # and an unchanged one is not written again.
        self.saved_records: dict[tuple[str, str], str] = {}
        # Held across a write of records and the update of `saved_records`, so the two never disagree
        # (two sessions saving one task at once would otherwise leave the older record remembered as written).
        self.saved_records_lock = threading.Lock()
        if self.postgres:
            self._create_postgres()
        else:
            self._migrate_sqlite()

    def written(self, table: Table) -> ColumnElement:
        """The order rows were last written in."""
        return table.c.seq if self.postgres else literal_column("rowid")

    def lock(self, conn, *names: str) -> None:
        """Serialise, until `conn`'s transaction ends, the writers that name the same thing (a scope and a
        task), when a write depends on what it reads. SQLite's writer transaction (BEGIN IMMEDIATE)
        already runs alone; on PostgreSQL, where dashboards write at once, a transaction-scoped advisory
        lock (released at commit, so the next writer reads what this one wrote)."""
        if self.postgres:
            locks.hold(conn, locks.Namespace.JOURNAL_ROW, "\x1f".join(names))

    def upsert(self, name: str):
        """INSERT of whole rows that replaces a row with the same key (and makes it the latest written)."""
        table = self.tables[name]
        if not self.postgres:
            return insert(table).prefix_with("OR REPLACE")
        statement = postgresql.insert(table)
        key = {c.name for c in table.primary_key.columns}
        updates = {c.name: statement.excluded[c.name] for c in table.columns if c.name not in key | {"seq"}}
        return statement.on_conflict_do_update(index_elements=sorted(key),
                                               set_={**updates, "seq": self._writes.next_value()})

    def _create(self, conn) -> None:
        self.metadata.create_all(conn)
        # create_all leaves a table that exists alone, indexes included: add those a newer schema declares.
        for table in self.tables.values():
            for index in table.indexes:
                conn.execute(CreateIndex(index, if_not_exists=True))

    def _create_postgres(self) -> None:
        with self.engine.begin() as conn:
            # Transaction-scoped: released at commit, with the tables visible to the next dashboard.
            locks.hold_whole(conn, locks.WholeLock.JOURNAL_SCHEMA)
            self._create(conn)

    def _migrate_sqlite(self) -> None:
        # One process creates or migrates (BEGIN IMMEDIATE); the others then find version 1.
        with self.writer.begin() as conn:
            if conn.exec_driver_sql("PRAGMA user_version").scalar() < SCHEMA_VERSION:
                old = set(conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE type = 'table'").scalars())
                renamed = [name for name in self.tables if name in old]
                for name in renamed:
                    # Index names are the database's: the new tables' indexes take the old names.
                    for index in conn.exec_driver_sql("SELECT name FROM sqlite_master WHERE type = 'index' AND "
                                                      "tbl_name = ? AND sql IS NOT NULL", (name,)).scalars().all():
                        conn.exec_driver_sql(f'DROP INDEX "{index}"')
                    conn.exec_driver_sql(f"ALTER TABLE {name} RENAME TO {name}_v0")
                self._create(conn)
                for name in renamed:
                    columns = ", ".join(c.name for c in self.tables[name].columns if c.name != "scope")
                    conn.exec_driver_sql(f"INSERT INTO {name} (scope, {columns}) "
                                         f"SELECT '{UNSCOPED}', {columns} FROM {name}_v0")
                    conn.exec_driver_sql(f"DROP TABLE {name}_v0")
                conn.exec_driver_sql(f"PRAGMA user_version = {SCHEMA_VERSION}")
            else:
                self._create(conn)


def _sqlite_engine(path: Path) -> Engine:
    path.parent.mkdir(parents=True, exist_ok=True)
    engine = create_engine(f"sqlite:///{path}", connect_args={"timeout": 30, "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_conn, _record):
        dbapi_conn.isolation_level = None  # BEGIN is ours to choose (below)
        for pragma in ("journal_mode=WAL", "synchronous=NORMAL", "busy_timeout=30000"):
            dbapi_conn.execute(f"PRAGMA {pragma}")

    @event.listens_for(engine, "begin")
    def _on_begin(conn):
        conn.exec_driver_sql("BEGIN IMMEDIATE" if conn.get_execution_options().get("write") else "BEGIN")

    return engine


def _postgres_engine(url: str) -> Engine:
    # postgresql:// means psycopg 3, and a host gone away fails a statement in about 30 s, as for the service.
    from dailies.service.db.engine import POSTGRES_CONNECT_ARGS, normalize_url

    return create_engine(normalize_url(url), pool_pre_ping=True, pool_size=5, max_overflow=10,
                         connect_args=dict(POSTGRES_CONNECT_ARGS))
