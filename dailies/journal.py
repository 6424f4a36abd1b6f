"""The dashboard's own record, in SQLite in the data directory.

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
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .api_keys import fingerprint

SCHEMA_VERSION = 1
UNSCOPED = ""  # the scope of rows written before scopes existed, and of the unscoped view's writes

SCHEMA = """
CREATE TABLE IF NOT EXISTS batches (
    id TEXT PRIMARY KEY,
    scope TEXT NOT NULL DEFAULT '',
    created_at REAL NOT NULL,
    label TEXT NOT NULL,
    mode TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS submissions (
    scope TEXT NOT NULL DEFAULT '',
    task_id TEXT NOT NULL,
    batch_id TEXT,
    submitted_at REAL NOT NULL,
    base_url TEXT NOT NULL,
    model TEXT NOT NULL,
    mode TEXT NOT NULL,
    prompt TEXT NOT NULL,
    request TEXT NOT NULL,
    inputs TEXT NOT NULL,
    PRIMARY KEY (scope, task_id)
);
CREATE INDEX IF NOT EXISTS ix_submissions_batch ON submissions (batch_id);
CREATE INDEX IF NOT EXISTS ix_submissions_time ON submissions (submitted_at);
CREATE TABLE IF NOT EXISTS reviews (
    scope TEXT NOT NULL DEFAULT '',
    task_id TEXT NOT NULL,
    verdict TEXT,
    stars INTEGER,
    notes TEXT NOT NULL DEFAULT '',
    updated_at REAL NOT NULL,
    PRIMARY KEY (scope, task_id)
);
CREATE TABLE IF NOT EXISTS kept (
    scope TEXT NOT NULL DEFAULT '',
    task_id TEXT NOT NULL,
    name TEXT NOT NULL,
    path TEXT NOT NULL,
    size INTEGER NOT NULL,
    kept_at REAL NOT NULL,
    PRIMARY KEY (scope, task_id, name)
);
CREATE TABLE IF NOT EXISTS records (
    scope TEXT NOT NULL DEFAULT '',
    task_id TEXT NOT NULL,
    record TEXT NOT NULL,
    saved_at REAL NOT NULL,
    PRIMARY KEY (scope, task_id)
);
CREATE TABLE IF NOT EXISTS preferences (
    scope TEXT NOT NULL DEFAULT '',
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (scope, name)
);
"""

# Version 0 had no scope column and keyed rows by task id (or name) alone. Its tables are rebuilt
# with the new keys; every old row keeps the empty scope.
_SCOPED_TABLES = {
    "batches": "id, created_at, label, mode",
    "submissions": "task_id, batch_id, submitted_at, base_url, model, mode, prompt, request, inputs",
    "reviews": "task_id, verdict, stars, notes, updated_at",
    "kept": "task_id, name, path, size, kept_at",
    "records": "task_id, record, saved_at",
    "preferences": "name, value",
}


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
    path: Path
    size: int
    kept_at: float


class _Store:
    """One SQLite connection per journal file, shared by every view of it (threads of one process)."""

    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.lock = threading.Lock()
        self.conn = sqlite3.connect(path, check_same_thread=False, timeout=30, isolation_level=None)
        self.conn.row_factory = sqlite3.Row
        self.conn.execute("PRAGMA journal_mode=WAL")
        # The record last written per (scope, task id): a page shows the same records run after run,
        # and an unchanged one is not written again.
        self.saved_records: dict[tuple[str, str], str] = {}
        self._migrate()

    @contextmanager
    def transaction(self, begin: str = "BEGIN") -> Iterator[sqlite3.Connection]:
        """One transaction, under the lock (the connection autocommits each statement otherwise)."""
        with self.lock:
            self.conn.execute(begin)
            try:
                yield self.conn
                self.conn.execute("COMMIT")
            except BaseException:
                self.conn.execute("ROLLBACK")
                raise

    def _migrate(self) -> None:
        with self.transaction("BEGIN IMMEDIATE"):  # one process migrates; the others then see version 1
            version = self.conn.execute("PRAGMA user_version").fetchone()[0]
            if version < SCHEMA_VERSION:
                old = {r[0] for r in self.conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
                for table in _SCOPED_TABLES.keys() & old:
                    self.conn.execute(f"ALTER TABLE {table} RENAME TO {table}_v0")
                self._create_tables()
                for table, columns in _SCOPED_TABLES.items():
                    if table in old:
                        self.conn.execute(f"INSERT INTO {table} (scope, {columns}) "
                                          f"SELECT '{UNSCOPED}', {columns} FROM {table}_v0")
                        self.conn.execute(f"DROP TABLE {table}_v0")
                # The old indexes went with the old tables (a renamed table keeps its indexes).
                self._create_tables()
                self.conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")

    def _create_tables(self) -> None:
        # executescript would commit the migration's transaction half-way: one statement at a time.
        for statement in SCHEMA.split(";"):
            if statement.strip():
                self.conn.execute(statement)


class Journal:
    """A view of the journal: one scope's rows (`scoped`), or every scope's (the constructor)."""

    def __init__(self, path: Path, *, _store: _Store | None = None, _scope: Scope | None = None) -> None:
        self._store = _store or _Store(path)
        self._scope = _scope
        self.path = self._store.path
        root = self.path.parent / "archive"
        self.archive_dir = root / _scope.folder if _scope is not None else root

    def scoped(self, scope: Scope) -> Journal:
        """The view of one connection: its rows, its files; the connection to SQLite is shared."""
        return Journal(self.path, _store=self._store, _scope=scope)

    @property
    def scope(self) -> Scope | None:
        return self._scope

    def close(self) -> None:
        """Close the file, for every view of it (the views share one connection)."""
        self._store.conn.close()

    def _exec(self, sql: str, params: Iterable[Any] = ()) -> list[sqlite3.Row]:
        with self._store.lock:
            return self._store.conn.execute(sql, tuple(params)).fetchall()

    @property
    def _writes_as(self) -> str:
        return self._scope.name if self._scope is not None else UNSCOPED

    def _visible(self, alias: str = "") -> tuple[str, list[str]]:
        """The WHERE condition (and its parameters) that keeps this view's rows."""
        column = f"{alias}.scope" if alias else "scope"
        if self._scope is None:
            return "1", []
        if self._scope.include_unscoped:
            return f"{column} IN (?, '{UNSCOPED}')", [self._scope.name]
        return f"{column} = ?", [self._scope.name]

    # Where one task has rows in several visible scopes: a scoped row before an old one, then the newest.
    _PREFERRED = f"scope = '{UNSCOPED}', rowid DESC"

    def _first_per(self, rows: list[sqlite3.Row], key: str) -> dict[str, sqlite3.Row]:
        out: dict[str, sqlite3.Row] = {}
        for row in rows:
            out.setdefault(row[key], row)
        return out

    # ---------- batches and submissions ----------

    def new_batch(self, label: str, mode: str) -> str:
        batch_id = "b-" + uuid.uuid4().hex[:10]
        self._exec("INSERT INTO batches (id, scope, created_at, label, mode) VALUES (?, ?, ?, ?, ?)",
                   (batch_id, self._writes_as, time.time(), label, mode))
        return batch_id

    @property
    def inputs_dir(self) -> Path:
        root = self.path.parent / "inputs"
        return root / self._scope.folder if self._scope is not None else root

    def _stash_inline_data(self, request: dict[str, Any]) -> dict[str, Any]:
        """The request with each Base64 data URL stored once as a file (named by its hash) and
        replaced by a reference: the journal keeps uploads so a submission can be rerun, without
        megabytes of Base64 in every row."""
        from .spec.media import decode_data_url

        request = json.loads(json.dumps(request))
        for payload in _payload_urls(request):
            if not payload["url"].startswith("data:"):
                continue
            mime, raw = decode_data_url(payload["url"])
            name = hashlib.sha256(raw).hexdigest()[:32]
            self.inputs_dir.mkdir(parents=True, exist_ok=True)
            path = self.inputs_dir / name
            if not path.exists():
                path.write_bytes(raw)
            payload["url"] = f"{STORED_PREFIX}{name};{mime or 'application/octet-stream'}"
        return request

    def _stored_input(self, name: str) -> Path:
        """A stored upload: in the scope's folder; for rows from before scopes (which only a view that
        sees them holds), in the shared folder they were written to; for the unscoped view, which
        holds every scope's rows, in any scope's folder."""
        own = self.inputs_dir / name
        if own.exists() or (self._scope is not None and not self._scope.include_unscoped):
            return own
        shared = self.path.parent / "inputs"
        if self._scope is None:
            return next(iter(sorted(shared.glob(f"*/{name}"))), own)
        return shared / name

    def restore_request(self, request: dict[str, Any]) -> dict[str, Any]:
        """A journaled request with stored inputs turned back into data URLs, ready to resend."""
        from .spec.media import encode_data_url

        request = json.loads(json.dumps(request))
        for payload in _payload_urls(request):
            if payload["url"].startswith(STORED_PREFIX):
                name, _, mime = payload["url"].removeprefix(STORED_PREFIX).partition(";")
                if "/" in name or "\\" in name or name.startswith("."):
                    raise ValueError(f"not a stored input name: {name!r}")
                payload["url"] = encode_data_url(self._stored_input(name).read_bytes(), mime)
        return request

    def record_submission(self, sub: Submission) -> None:
        self._exec(
            "INSERT OR REPLACE INTO submissions (scope, task_id, batch_id, submitted_at, base_url, model, mode, prompt,"
            " request, inputs) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (self._writes_as, sub.task_id, sub.batch_id, sub.submitted_at, sub.base_url, sub.model, sub.mode,
             sub.prompt, json.dumps(self._stash_inline_data(sub.request)),
             json.dumps([i.__dict__ for i in sub.inputs])),
        )

    @staticmethod
    def _submission(row: sqlite3.Row) -> Submission:
        return Submission(
            task_id=row["task_id"], batch_id=row["batch_id"], submitted_at=row["submitted_at"],
            base_url=row["base_url"], model=row["model"], mode=row["mode"], prompt=row["prompt"],
            request=json.loads(row["request"]), inputs=[InputRef(**i) for i in json.loads(row["inputs"])],
        )

    def submission(self, task_id: str) -> Submission | None:
        return self.submissions([task_id]).get(task_id)

    def submissions(self, task_ids: Iterable[str]) -> dict[str, Submission]:
        ids = list(task_ids)
        if not ids:
            return {}
        where, params = self._visible()
        rows = self._exec(f"SELECT * FROM submissions WHERE {where} AND task_id IN ({','.join('?' * len(ids))})"
                          f" ORDER BY {self._PREFERRED}", [*params, *ids])
        return {tid: self._submission(r) for tid, r in self._first_per(rows, "task_id").items()}

    def batch(self, batch_id: str) -> list[Submission]:
        where, params = self._visible()
        rows = self._exec(f"SELECT * FROM submissions WHERE {where} AND batch_id = ? ORDER BY submitted_at",
                          [*params, batch_id])
        return [self._submission(r) for r in rows]

    def submitted_models(self, limit: int = 200) -> list[str]:
        """The model ids and endpoint ids submitted to, most recently used first (read without
        parsing a single request: the Tasks page asks on every run)."""
        where, params = self._visible()
        rows = self._exec(f"SELECT model FROM submissions WHERE {where} AND model != '' GROUP BY model"
                          " ORDER BY MAX(submitted_at) DESC LIMIT ?", [*params, limit])
        return [r["model"] for r in rows]

    def batches(self, limit: int = 100) -> list[dict[str, Any]]:
        where, params = self._visible("b")
        rows = self._exec(
            "SELECT b.id, b.created_at, b.label, b.mode, COUNT(s.task_id) AS size FROM batches b"
            f" LEFT JOIN submissions s ON s.batch_id = b.id AND s.scope = b.scope WHERE {where}"
            " GROUP BY b.id ORDER BY b.created_at DESC LIMIT ?", [*params, limit])
        return [dict(r) for r in rows]

    # ---------- last known records (so kept results outlive the service's record) ----------

    def save_records(self, records: Iterable[dict[str, Any]]) -> None:
        """Keep the last record seen of each task; records unchanged since this process last wrote
        them are skipped, and the rest are written in one transaction (one commit, not one each)."""
        now, scope, saved = time.time(), self._writes_as, self._store.saved_records
        rows = [(scope, r["id"], text, now) for r in records
                if saved.get((scope, r["id"])) != (text := json.dumps(r, sort_keys=True))]
        if not rows:
            return
        with self._store.transaction() as conn:
            conn.executemany("INSERT OR REPLACE INTO records (scope, task_id, record, saved_at) VALUES (?, ?, ?, ?)",
                             rows)
            if len(saved) + len(rows) > _SAVED_RECORDS_REMEMBERED:
                saved.clear()
            saved.update(((scope, task_id), text) for scope, task_id, text, _ in rows)

    def record(self, task_id: str) -> dict[str, Any] | None:
        where, params = self._visible()
        rows = self._exec(f"SELECT record FROM records WHERE {where} AND task_id = ? ORDER BY {self._PREFERRED}"
                          " LIMIT 1", [*params, task_id])
        return json.loads(rows[0]["record"]) if rows else None

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
        self._exec("INSERT OR REPLACE INTO reviews (scope, task_id, verdict, stars, notes, updated_at)"
                   " VALUES (?, ?, ?, ?, ?, ?)",
                   (self._writes_as, updated.task_id, updated.verdict, updated.stars, updated.notes,
                    updated.updated_at))
        return updated

    @staticmethod
    def _review(row: sqlite3.Row) -> Review:
        return Review(row["task_id"], row["verdict"], row["stars"], row["notes"], row["updated_at"])

    def review(self, task_id: str) -> Review:
        return self.reviews([task_id]).get(task_id) or Review(task_id)

    def reviews(self, task_ids: Iterable[str]) -> dict[str, Review]:
        ids = list(task_ids)
        if not ids:
            return {}
        where, params = self._visible()
        rows = self._exec(f"SELECT * FROM reviews WHERE {where} AND task_id IN ({','.join('?' * len(ids))})"
                          f" ORDER BY {self._PREFERRED}", [*params, *ids])
        return {tid: self._review(r) for tid, r in self._first_per(rows, "task_id").items()}

    # ---------- kept files ----------

    def keep_path(self, task_id: str, name: str) -> Path:
        if "/" in task_id or "\\" in task_id or task_id in ("", ".", ".."):
            raise ValueError(f"not a task id: {task_id!r}")
        return self.archive_dir / task_id / name

    def mark_kept(self, task_id: str, name: str, path: Path) -> KeptFile:
        kept = KeptFile(task_id, name, path, path.stat().st_size, time.time())
        self._exec("INSERT OR REPLACE INTO kept (scope, task_id, name, path, size, kept_at) VALUES (?, ?, ?, ?, ?, ?)",
                   (self._writes_as, task_id, name, str(path), kept.size, kept.kept_at))
        return kept

    def _kept_rows(self, task_id: str | None) -> list[KeptFile]:
        where, params = self._visible()
        if task_id is not None:
            where, params = f"{where} AND task_id = ?", [*params, task_id]
        rows = self._exec(f"SELECT * FROM kept WHERE {where} ORDER BY {self._PREFERRED}", params)
        files = {(r["task_id"], r["name"]): r for r in rows[::-1]}  # the preferred row of each file wins
        out = [KeptFile(r["task_id"], r["name"], Path(r["path"]), r["size"], r["kept_at"]) for r in files.values()]
        return [k for k in out if k.path.exists()]

    def kept(self, task_id: str) -> dict[str, KeptFile]:
        return {k.name: k for k in self._kept_rows(task_id)}

    def all_kept(self) -> list[KeptFile]:
        return sorted(self._kept_rows(None), key=lambda k: k.kept_at, reverse=True)

    # ---------- preferences ----------

    def preference(self, name: str, default: Any = None) -> Any:
        where, params = self._visible()
        rows = self._exec(f"SELECT value FROM preferences WHERE {where} AND name = ? ORDER BY {self._PREFERRED}"
                          " LIMIT 1", [*params, name])
        return json.loads(rows[0]["value"]) if rows else default

    def set_preference(self, name: str, value: Any) -> None:
        self._exec("INSERT OR REPLACE INTO preferences (scope, name, value) VALUES (?, ?, ?)",
                   (self._writes_as, name, json.dumps(value)))


STORED_PREFIX = "journal-input:"
# How many written records `save_records` remembers, to skip rewriting them (a few MB at most).
_SAVED_RECORDS_REMEMBERED = 20_000


def _payload_urls(request: dict[str, Any]):
    for item in request.get("content", []):
        for kind in ("image_url", "video_url", "audio_url"):
            payload = item.get(kind)
            if isinstance(payload, dict) and isinstance(payload.get("url"), str):
                yield payload
