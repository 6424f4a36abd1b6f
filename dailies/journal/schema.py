"""The journal's tables and where they live: their definitions, the engine (an SQLite file, or
PostgreSQL; `service.db.engine.open_engine`, as for the service), their migrations (migrations/
versions/, run by `service.db.migrate` with a version table of their own, `journal_version`) and the
statements that differ between the two databases."""

from __future__ import annotations

import threading
from collections import abc
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from sqlalchemy import (
    BigInteger,
    Column,
    ColumnElement,
    Connection,
    Double,
    Index,
    Integer,
    MetaData,
    PrimaryKeyConstraint,
    Sequence,
    String,
    Table,
    Text,
    insert,
    literal_column,
    text,
)
from sqlalchemy.dialects import postgresql

from ..service.db import locks, migrate
from ..service.db.engine import is_postgres, open_engine
from ..service.db.writer import writer
from .bucket import JournalBucket

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
                          # Revision 0002: the frame (and a range's last), and a drawing on it.
                          Column("frame", Integer), Column("out_frame", Integer), Column("drawing", Text),
                          indexes=[("task", "task_id")]),
        "authors": table("authors", ("scope", "task_id"), required("task_id"), required("author"),
                         required("at", Double)),
        "shots": table("shots", ("scope", "task_id"), required("task_id"), required("shot_id"),
                       Column("parent_id", String), required("how"), required("created_at", Double),
                       indexes=[("shot", "shot_id")]),
        # Revision 0003: what each person has read of their inbox (inbox.py): item ids, and "*" at the time
        # before which everything is.
        "inbox_reads": table("inbox_reads", ("scope", "person", "item_id"), required("person"), required("item_id"),
                             required("read_at", Double)),
        # Share links (shares.py): one row per share, found by its token's SHA-256 (the token is never stored).
        "shares": table("shares", ("id",), required("id"), required("token_hash"), required("scope_base_url"),
                        required("scope_key"), required("task_ids", Text), required("prompts", Text),
                        required("created_by"), required("created_at", Double), required("expires_at", Double),
                        Column("passphrase", String), required("allow_comments", Integer),
                        required("allow_status", Integer), required("hide_prompt", Integer),
                        Column("revoked_at", Double), required("failed_attempts", Integer),
                        Column("locked_until", Double),
                        # Revision 0004: its guest grant, told with when a guest comments (shares.py).
                        Column("notice_grant", Text), indexes=[("token", "token_hash")]),
    }
    return metadata, tables, writes


class Store:
    """The journal's engine and tables, shared by every view of it (threads of one process), and
    its bucket when it has one."""

    def __init__(self, path: Path, database_url: str, storage: str) -> None:
        self.path = path
        self.engine = open_engine(database_url or path)
        self.postgres = is_postgres(self.engine)
        self.metadata, self.tables, self._writes = _define(POSTGRES_PREFIX if self.postgres else "", self.postgres)
        self.writer = writer(self.engine)  # BEGIN IMMEDIATE on SQLite, one writer thread at a time
        self.bucket = JournalBucket(storage) if storage else None
        # The record last written per (scope, task id): a page shows the same records run after run,
        # and an unchanged one is not written again.
        self.saved_records: dict[tuple[str, str], str] = {}
        # Held across a write of records and the update of `saved_records`, so the two never disagree
        # (two sessions saving one task at once would otherwise leave the older record remembered as written).
        self.saved_records_lock = threading.Lock()
        # Several dashboards may start at once: one migrates (under the journal's advisory lock on
        # PostgreSQL, BEGIN IMMEDIATE on SQLite), the others then find the head and run no DDL.
        migrate.upgrade(self.engine, JOURNAL, self.writer)

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
        assert self._writes is not None  # PostgreSQL's tables have their sequence
        statement = postgresql.insert(table)
        key = {c.name for c in table.primary_key.columns}
        updates = {c.name: statement.excluded[c.name] for c in table.columns if c.name not in key | {"seq"}}
        return statement.on_conflict_do_update(index_elements=sorted(key),
                                               set_={**updates, "seq": self._writes.next_value()})


_TABLES = frozenset(_define("", False)[1])


def _adopt(conn: Connection, baseline: abc.Sequence[str]) -> bool:
    """A journal made before versioned migrations (no version table) brought to the first revision."""
    if conn.dialect.name == "postgresql":
        if not migrate.table_exists(conn, f"{POSTGRES_PREFIX}submissions"):
            return False
        migrate.catch_up(conn, baseline)
        return True
    old = set(conn.execute(text("SELECT name FROM sqlite_master WHERE type = 'table'")).scalars()) & _TABLES
    if not old:
        return False
    if not conn.execute(text("PRAGMA user_version")).scalar():  # 0: a file from before scopes
        _from_version_0(conn, old, baseline)
    else:
        migrate.catch_up(conn, baseline)
    return True


def _from_version_0(conn: Connection, old: set[str], baseline: abc.Sequence[str]) -> None:
    """A file from before scopes: its tables made again with a scope first in every key, their rows
    kept in the unscoped scope."""
    for name in old:
        # Index names are the database's: the new tables' indexes take the old names.
        for index in conn.execute(text("SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = :name "
                                       "AND sql IS NOT NULL"), {"name": name}).scalars().all():
            conn.execute(text(f'DROP INDEX "{index}"'))
        conn.execute(text(f"ALTER TABLE {name} RENAME TO {name}_v0"))
    migrate.catch_up(conn, baseline)
    for name in old:
        columns = ", ".join(row[1] for row in conn.execute(text(f"PRAGMA table_info({name}_v0)")) if row[1] != "scope")
        conn.execute(text(f"INSERT INTO {name} (scope, {columns}) SELECT '{UNSCOPED}', {columns} FROM {name}_v0"))
        conn.execute(text(f"DROP TABLE {name}_v0"))


JOURNAL = migrate.Schema(
    name="journal",
    scripts=Path(__file__).with_name("migrations"),
    version_table="journal_version",
    lock=locks.WholeLock.JOURNAL_SCHEMA,
    adopt=_adopt,
)
