"""The dashboard's own record: SQLite in the data directory (the default), or PostgreSQL shared by the
dashboards of a team.

The list endpoint returns neither prompts nor inputs (spec 2.5), result URLs die after 24 hours
and records after 7 days. The journal keeps what the dashboard sent (prompt, inputs with
thumbnails, parameters, batch), what reviewers decided (verdict, stars, notes) and where kept
copies of videos are, keyed by task id, for as long as the user wants them.

One dashboard serves many people, each with their own key, so every row belongs to a scope: the
connection that wrote it (base URL + fingerprint of the key, never the key). `journal.scoped(scope)`
is the view a dashboard session uses: it reads and writes its own scope only, and keeps its files
(kept videos, stored uploads) in a folder of its own. Two keys of one project therefore keep two
journals: the journal records what a person did, not what the project owns.

Rows written before scopes existed (schema version 0) have the empty scope. They are visible only
to a view made with `include_unscoped=True`, which the dashboard gives to its own default
connection in single-user mode (the key `dailies up` hands it), since that is who wrote them; a team
dashboard has no default key, so nobody sees them there. `Journal(path)` itself is the unscoped view
(every scope: tests, maintenance): where several scopes hold a row for one task, it prefers a
scoped row to an old one, then the latest written.

Where it lives (`Journal(path, database_url=..., storage=...)`; each left out is read from
DAILIES_DATABASE_URL / DAILIES_STORAGE, as `dailies dashboard` passes them; "" means the default):
- the rows: the SQLite file `path` (tables `submissions`, `reviews`, ..., as ever), or, given a
  database URL, tables `journal_submissions`, `journal_reviews`, ... in that database, beside the
  service's own if it is the service's database. The same SQLAlchemy Core statements run on both.
  Several dashboards may start at once: SQLite creates and migrates in one `BEGIN IMMEDIATE`
  transaction, PostgreSQL under an advisory lock.
- the files (kept copies, stored uploads): folders beside `path`, or, given `s3://bucket/prefix`,
  objects in that bucket (dailies.journal_files), so every dashboard of the team plays a copy any
  of them kept. A kept file's row says where it is, so copies kept before a bucket was configured
  keep playing from the folder.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TypeVar

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
    and_,
    create_engine,
    event,
    func,
    insert,
    literal_column,
    select,
    text,
    true,
)
from sqlalchemy.dialects import postgresql
from sqlalchemy.schema import CreateIndex

from .api_keys import fingerprint
from .journal_files import BUCKET_SCHEME, JournalBucket

SCHEMA_VERSION = 1
UNSCOPED = ""  # the scope of rows written before scopes existed, and of the unscoped view's writes
DATABASE_ENV = "DAILIES_DATABASE_URL"
STORAGE_ENV = "DAILIES_STORAGE"
# PostgreSQL tables are named with this prefix, so they never meet the service's in one database.
POSTGRES_PREFIX = "journal_"
_SCHEMA_LOCK = 0x6A6F75726E616C  # "journal": the advisory lock held while creating the tables

T = TypeVar("T")


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
    }
    return metadata, tables, writes
@dataclass(frozen=True)
class Scope:
    """Whose rows a journal view holds: one connection (base URL + key fingerprint).

    `include_unscoped` also shows the rows from before scopes (see the module's docstring).
    """

    base_url: str
    key_fingerprint: str
    include_unscoped: bool = False

    @classmethod
    def of(cls, base_url: str, api_key: str, include_unscoped: bool = False) -> Scope:
        return cls(base_url.rstrip("/"), fingerprint(api_key) if api_key else "no-key", include_unscoped)

    @property
    def name(self) -> str:
        return f"{self.key_fingerprint}@{self.base_url}"

    @property
    def folder(self) -> str:
        """A directory name for the scope's files (a base URL is no file name)."""
        return hashlib.sha256(self.name.encode("utf-8")).hexdigest()[:16]

VERDICTS = ("approved", "rejected")


@dataclass
class InputRef:
    """One input of a submission: where it came from and a small preview."""

    index: int
    kind: str  # image_url, video_url, audio_url, draft_task
    role: str | None
    source: str  # "upload: name.png", a URL, an asset id, a task id
    thumbnail: str | None = None  # a small data URL (images only)
    url: str | None = None  # the URL sent, when short enough to keep (never a large data URL)


@dataclass
class Submission:
    task_id: str
    batch_id: str | None
    submitted_at: float
    base_url: str
    model: str
    mode: str
    prompt: str
    request: dict[str, Any]
    inputs: list[InputRef] = field(default_factory=list)


@dataclass
class Review:
    task_id: str
    verdict: str | None = None
    stars: int | None = None
    notes: str = ""
    updated_at: float = 0.0


@dataclass
class KeptFile:
    task_id: str
    name: str
    path: Path | None  # the copy on this machine's disk; None for a copy in a bucket (see `location`)
    size: int
    kept_at: float
    location: str = ""  # where the copy is, to show: the file's path, or s3://bucket/key
    bucket: JournalBucket | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.location and self.path is not None:
            self.location = str(self.path)

    @property
    def in_bucket(self) -> bool:
        return self.path is None

    def media(self, now: float | None = None) -> Path | str:
        """What a player takes: the file, or a presigned GET URL of the object (the same for an hour,
        so a page that runs again does not reload the player)."""
        if self.path is not None:
            return self.path
        assert self.bucket is not None
        return self.bucket.url(self.location, now)

    def read_bytes(self) -> bytes:
        if self.path is not None:
            return self.path.read_bytes()
        assert self.bucket is not None
        return self.bucket.read(self.location)


class _Store:
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
            conn.execute(text("SELECT pg_advisory_xact_lock(:key)"), {"key": _SCHEMA_LOCK})
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
    from .service.db import normalize_url  # postgresql:// means psycopg 3, as for the service

    return create_engine(normalize_url(url), pool_pre_ping=True, pool_size=5, max_overflow=10)


class Journal:
    """A view of the journal: one scope's rows (`scoped`), or every scope's (the constructor).

    `database_url` and `storage` default to DAILIES_DATABASE_URL and DAILIES_STORAGE; "" (or
    nothing set) keeps the rows in the SQLite file `path` and the files in folders beside it."""

    def __init__(self, path: Path, *, database_url: str | None = None, storage: str | None = None,
                 _store: _Store | None = None, _scope: Scope | None = None) -> None:
        if _store is None:
            env: Mapping[str, str] = os.environ
            _store = _Store(Path(path), env.get(DATABASE_ENV, "") if database_url is None else database_url,
                            env.get(STORAGE_ENV, "") if storage is None else storage)
        self._store = _store
        self._scope = _scope
        self.path = self._store.path
        root = self.path.parent / "archive"
        self.archive_dir = root / _scope.folder if _scope is not None else root

    def scoped(self, scope: Scope) -> Journal:
        """The view of one connection: its rows, its files; the engine is shared."""
        return Journal(self.path, _store=self._store, _scope=scope)

    @property
    def scope(self) -> Scope | None:
        return self._scope

    @property
    def shared(self) -> bool:
        """Whether the rows are in a database other dashboards may share (not this machine's file)."""
        return self._store.postgres

    def close(self) -> None:
        """Close the database's connections, for every view of it (the views share them)."""
        self._store.engine.dispose()

    @property
    def _writes_as(self) -> str:
        return self._scope.name if self._scope is not None else UNSCOPED

    @property
    def _folder(self) -> str | None:
        return self._scope.folder if self._scope is not None else None

    def _table(self, name: str) -> Table:
        return self._store.tables[name]

    def _read(self, statement) -> list[Any]:
        with self._store.engine.connect() as conn:
            return list(conn.execute(statement))

    def _write(self, name: str, rows: list[dict[str, Any]]) -> None:
        """Insert or replace whole rows, in one transaction (one commit, not one per row)."""
        key = [c.name for c in self._table(name).primary_key.columns]
        # One statement may not touch one row twice (PostgreSQL's ON CONFLICT): the last of a key wins.
        unique = list({tuple(row[k] for k in key): row for row in rows}.values())
        if unique:
            with self._store.writer.begin() as conn:
                conn.execute(self._store.upsert(name), unique)

    def _visible(self, table: Table) -> ColumnElement[bool]:
        """The condition that keeps this view's rows."""
        if self._scope is None:
            return true()
        if self._scope.include_unscoped:
            return table.c.scope.in_([self._scope.name, UNSCOPED])
        return table.c.scope == self._scope.name

    def _preferred(self, name: str, *where: ColumnElement[bool], columns: Iterable[Any] = (),
                   limit: int | None = None) -> list[Any]:
        """This view's rows of a table that meet `where`, in order of preference: where one task has
        rows in several visible scopes, a scoped row before an old one, then the newest."""
        table = self._table(name)
        statement = (select(*columns) if columns else select(table)).where(self._visible(table), *where)
        statement = statement.order_by(table.c.scope == UNSCOPED, self._store.written(table).desc()).limit(limit)
        return self._read(statement)

    def _by_task(self, name: str, task_ids: Iterable[str], make: Callable[[Any], T]) -> dict[str, T]:
        """The preferred row of each of these tasks in a table, made into `make`'s objects."""
        ids = list(dict.fromkeys(task_ids))
        if not ids:
            return {}
        out: dict[str, T] = {}
        for row in self._preferred(name, self._table(name).c.task_id.in_(ids)):
            if row.task_id not in out:
                out[row.task_id] = make(row)
        return out

    # ---------- batches and submissions ----------

    def new_batch(self, label: str, mode: str) -> str:
        batch_id = "b-" + uuid.uuid4().hex[:10]
        self._write("batches", [{"id": batch_id, "scope": self._writes_as, "created_at": time.time(), "label": label,
                                 "mode": mode}])
        return batch_id

    @property
    def inputs_dir(self) -> Path:
        root = self.path.parent / "inputs"
        return root / self._scope.folder if self._scope is not None else root

    def _stash_inline_data(self, request: dict[str, Any]) -> dict[str, Any]:
        """The request with each Base64 data URL stored once (in the bucket, or as a file; named by its
        hash) and replaced by a reference: the journal keeps uploads so a submission can be rerun,
        without megabytes of Base64 in every row."""
        from .spec.media import decode_data_url

        request = json.loads(json.dumps(request))
        for payload in _payload_urls(request):
            if not payload["url"].startswith("data:"):
                continue
            mime, raw = decode_data_url(payload["url"])
            mime = mime or "application/octet-stream"
            name = hashlib.sha256(raw).hexdigest()[:32]
            if self._store.bucket is not None:
                self._store.bucket.store_input(self._folder, name, raw, mime)
            else:
                self.inputs_dir.mkdir(parents=True, exist_ok=True)
                path = self.inputs_dir / name
                if not path.exists():
                    path.write_bytes(raw)
            payload["url"] = f"{STORED_PREFIX}{name};{mime}"
        return request

    def _stored_input(self, name: str) -> bytes:
        """A stored upload: in the bucket when there is one, else (or when it is not there: stored
        before the bucket was configured) in the scope's folder; for rows from before scopes (which
        only a view that sees them holds), in the shared folder they were written to; for the
        unscoped view, which holds every scope's rows, in any scope's folder."""
        if self._store.bucket is not None:
            try:
                return self._store.bucket.read_input(self._folder, name)
            except FileNotFoundError:
                pass
        own = self.inputs_dir / name
        if own.exists() or (self._scope is not None and not self._scope.include_unscoped):
            return own.read_bytes()
        shared = self.path.parent / "inputs"
        if self._scope is None:
            return next(iter(sorted(shared.glob(f"*/{name}"))), own).read_bytes()
        return (shared / name).read_bytes()

    def restore_request(self, request: dict[str, Any]) -> dict[str, Any]:
        """A journaled request with stored inputs turned back into data URLs, ready to resend."""
        from .spec.media import encode_data_url

        request = json.loads(json.dumps(request))
        for payload in _payload_urls(request):
            if payload["url"].startswith(STORED_PREFIX):
                name, _, mime = payload["url"].removeprefix(STORED_PREFIX).partition(";")
                if "/" in name or "\\" in name or name.startswith("."):
                    raise ValueError(f"not a stored input name: {name!r}")
                payload["url"] = encode_data_url(self._stored_input(name), mime)
        return request

    def record_submission(self, sub: Submission) -> None:
        self._write("submissions", [{
            "scope": self._writes_as, "task_id": sub.task_id, "batch_id": sub.batch_id,
            "submitted_at": sub.submitted_at, "base_url": sub.base_url, "model": sub.model, "mode": sub.mode,
            "prompt": sub.prompt, "request": json.dumps(self._stash_inline_data(sub.request)),
            "inputs": json.dumps([i.__dict__ for i in sub.inputs])}])

    @staticmethod
    def _submission(row: Any) -> Submission:
        return Submission(
            task_id=row.task_id, batch_id=row.batch_id, submitted_at=row.submitted_at,
            base_url=row.base_url, model=row.model, mode=row.mode, prompt=row.prompt,
            request=json.loads(row.request), inputs=[InputRef(**i) for i in json.loads(row.inputs)],
        )

    def submission(self, task_id: str) -> Submission | None:
        return self.submissions([task_id]).get(task_id)

    def submissions(self, task_ids: Iterable[str]) -> dict[str, Submission]:
        return self._by_task("submissions", task_ids, self._submission)

    def batch(self, batch_id: str) -> list[Submission]:
        table = self._table("submissions")
        rows = self._read(select(table).where(self._visible(table), table.c.batch_id == batch_id)
                          .order_by(table.c.submitted_at))
        return [self._submission(r) for r in rows]

    def submitted_models(self, limit: int = 200) -> list[str]:
        """The model ids and endpoint ids submitted to, most recently used first (read without
        parsing a single request: the Tasks page asks on every run)."""
        table = self._table("submissions")
        rows = self._read(select(table.c.model).where(self._visible(table), table.c.model != "")
                          .group_by(table.c.model).order_by(func.max(table.c.submitted_at).desc()).limit(limit))
        return [r.model for r in rows]

    def batches(self, limit: int = 100) -> list[dict[str, Any]]:
        b, s = self._table("batches"), self._table("submissions")
        rows = self._read(
            select(b.c.id, b.c.created_at, b.c.label, b.c.mode, func.count(s.c.task_id).label("size"))
            .select_from(b.outerjoin(s, and_(s.c.batch_id == b.c.id, s.c.scope == b.c.scope)))
            .where(self._visible(b)).group_by(b.c.id).order_by(b.c.created_at.desc()).limit(limit))
        return [dict(r._mapping) for r in rows]

    # ---------- last known records (so kept results outlive the service's record) ----------

    def save_records(self, records: Iterable[dict[str, Any]]) -> None:
        """Keep the last record seen of each task; records unchanged since this process last wrote
        them are skipped, and the rest are written in one transaction (one commit, not one each)."""
        now, scope, saved = time.time(), self._writes_as, self._store.saved_records
        texts = [(r["id"], json.dumps(r, sort_keys=True)) for r in records]
        with self._store.saved_records_lock:
            rows = [{"scope": scope, "task_id": task_id, "record": text, "saved_at": now} for task_id, text in texts
                    if saved.get((scope, task_id)) != text]
            if not rows:
                return
            self._write("records", rows)
            if len(saved) + len(rows) > _SAVED_RECORDS_REMEMBERED:
                saved.clear()
            saved.update(((scope, row["task_id"]), row["record"]) for row in rows)

    def record(self, task_id: str) -> dict[str, Any] | None:
        table = self._table("records")
        rows = self._preferred("records", table.c.task_id == task_id, columns=[table.c.record], limit=1)
        return json.loads(rows[0].record) if rows else None

    # ---------- reviews ----------

    def set_review(self, task_id: str, verdict: str | None = None, stars: int | None = None,
                   notes: str | None = None) -> Review:
        """Update the given parts of a task's review, keeping the others."""
        if verdict is not None and verdict not in VERDICTS and verdict != "":
            raise ValueError(f"verdict must be one of {VERDICTS}")
        if stars is not None and not 0 <= stars <= 5:
            raise ValueError("stars must be 0 to 5")
        current = self.review(task_id)
        updated = Review(
            task_id=task_id,
            verdict=(verdict or None) if verdict is not None else current.verdict,
            stars=stars if stars is not None else current.stars,
            notes=notes if notes is not None else current.notes,
            updated_at=time.time(),
        )
        self._write("reviews", [{"scope": self._writes_as, **updated.__dict__}])
        return updated

    @staticmethod
    def _review(row: Any) -> Review:
        return Review(row.task_id, row.verdict, row.stars, row.notes, row.updated_at)

    def review(self, task_id: str) -> Review:
        return self.reviews([task_id]).get(task_id) or Review(task_id)

    def reviews(self, task_ids: Iterable[str]) -> dict[str, Review]:
        return self._by_task("reviews", task_ids, self._review)

    # ---------- kept files ----------

    def keep_path(self, task_id: str, name: str) -> Path:
        """Where a kept copy goes on this machine: the archive itself, or, with a bucket, where it is
        downloaded before `mark_kept` uploads it."""
        if "/" in task_id or "\\" in task_id or task_id in ("", ".", ".."):
            raise ValueError(f"not a task id: {task_id!r}")
        return self.archive_dir / task_id / name

    @property
    def archive_location(self) -> str:
        """Where this view's kept copies go, to show: a folder, or s3://bucket/prefix/."""
        bucket = self._store.bucket
        if bucket is None:
            return str(self.archive_dir)
        archive = bucket.archive(self._folder)
        return bucket.location(archive.prefix)

    def mark_kept(self, task_id: str, name: str, path: Path) -> KeptFile:
        """Note a kept copy at `path`. With a bucket the file is uploaded to it, then removed here."""
        size, bucket = path.stat().st_size, self._store.bucket
        if bucket is not None:
            location = bucket.keep(self._folder, task_id, name, path)
            path.unlink(missing_ok=True)
            kept = KeptFile(task_id, name, None, size, time.time(), location, bucket)
        else:
            kept = KeptFile(task_id, name, path, size, time.time())
        self._write("kept", [{"scope": self._writes_as, "task_id": task_id, "name": name, "path": kept.location,
                              "size": size, "kept_at": kept.kept_at}])
        return kept

    def _kept_file(self, row: Any) -> KeptFile | None:
        """A kept copy this dashboard can play: its file exists here, or it is in this dashboard's bucket."""
        if row.path.startswith(BUCKET_SCHEME):
            bucket = self._store.bucket
            if bucket is None or bucket.key_of(row.path) is None:
                return None
            return KeptFile(row.task_id, row.name, None, row.size, row.kept_at, row.path, bucket)
        path = Path(row.path)
        return KeptFile(row.task_id, row.name, path, row.size, row.kept_at) if path.exists() else None

    def _kept_rows(self, task_id: str | None) -> list[KeptFile]:
        where = [self._table("kept").c.task_id == task_id] if task_id is not None else []
        rows = self._preferred("kept", *where)
        files = {(r.task_id, r.name): r for r in rows[::-1]}  # the preferred row of each file wins
        return [k for k in map(self._kept_file, files.values()) if k is not None]

    def kept(self, task_id: str) -> dict[str, KeptFile]:
        return {k.name: k for k in self._kept_rows(task_id)}

    def all_kept(self) -> list[KeptFile]:
        return sorted(self._kept_rows(None), key=lambda k: k.kept_at, reverse=True)

    # ---------- preferences ----------

    def preference(self, name: str, default: Any = None) -> Any:
        table = self._table("preferences")
        rows = self._preferred("preferences", table.c.name == name, columns=[table.c.value], limit=1)
        return json.loads(rows[0].value) if rows else default

    def set_preference(self, name: str, value: Any) -> None:
        self._write("preferences", [{"scope": self._writes_as, "name": name, "value": json.dumps(value)}])


STORED_PREFIX = "journal-input:"
# How many written records `save_records` remembers, to skip rewriting them (a few MB at most).
_SAVED_RECORDS_REMEMBERED = 20_000


def _payload_urls(request: dict[str, Any]):
    for item in request.get("content", []):
        for kind in ("image_url", "video_url", "audio_url"):
            payload = item.get(kind)
            if isinstance(payload, dict) and isinstance(payload.get("url"), str):
                yield payload
