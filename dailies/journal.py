"""The dashboard's own record, in SQLite in the data directory.

The list endpoint returns neither prompts nor inputs (spec 2.5), result URLs die after 24 hours
and records after 7 days. The journal keeps what the dashboard sent (prompt, inputs with
thumbnails, parameters, batch), what reviewers decided (verdict, stars, notes) and where kept
copies of videos are, keyed by task id, for as long as the user wants them.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SCHEMA = """
CREATE TABLE IF NOT EXISTS batches (
    id TEXT PRIMARY KEY,
    created_at REAL NOT NULL,
    label TEXT NOT NULL,
    mode TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS submissions (
    task_id TEXT PRIMARY KEY,
    batch_id TEXT,
    submitted_at REAL NOT NULL,
    base_url TEXT NOT NULL,
    model TEXT NOT NULL,
    mode TEXT NOT NULL,
    prompt TEXT NOT NULL,
    request TEXT NOT NULL,
    inputs TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ix_submissions_batch ON submissions (batch_id);
CREATE INDEX IF NOT EXISTS ix_submissions_time ON submissions (submitted_at);
CREATE TABLE IF NOT EXISTS reviews (
    task_id TEXT PRIMARY KEY,
    verdict TEXT,
    stars INTEGER,
    notes TEXT NOT NULL DEFAULT '',
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS kept (
    task_id TEXT NOT NULL,
    name TEXT NOT NULL,
    path TEXT NOT NULL,
    size INTEGER NOT NULL,
    kept_at REAL NOT NULL,
    PRIMARY KEY (task_id, name)
);
CREATE TABLE IF NOT EXISTS records (
    task_id TEXT PRIMARY KEY,
    record TEXT NOT NULL,
    saved_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS preferences (
    name TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
"""

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


class Journal:
    def __init__(self, path: Path) -> None:
        path.parent.mkdir(parents=True, exist_ok=True)
        self.path = path
        self.archive_dir = path.parent / "archive"
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(path, check_same_thread=False, timeout=30, isolation_level=None)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.executescript(SCHEMA)

    def close(self) -> None:
        self._conn.close()

    def _exec(self, sql: str, params: Iterable[Any] = ()) -> list[sqlite3.Row]:
        with self._lock:
            return self._conn.execute(sql, tuple(params)).fetchall()

    # ---------- batches and submissions ----------

    def new_batch(self, label: str, mode: str) -> str:
        batch_id = "b-" + uuid.uuid4().hex[:10]
        self._exec("INSERT INTO batches (id, created_at, label, mode) VALUES (?, ?, ?, ?)",
                   (batch_id, time.time(), label, mode))
        return batch_id

    @property
    def inputs_dir(self) -> Path:
        return self.path.parent / "inputs"

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

    def restore_request(self, request: dict[str, Any]) -> dict[str, Any]:
        """A journaled request with stored inputs turned back into data URLs, ready to resend."""
        from .spec.media import encode_data_url

        request = json.loads(json.dumps(request))
        for payload in _payload_urls(request):
            if payload["url"].startswith(STORED_PREFIX):
                name, _, mime = payload["url"].removeprefix(STORED_PREFIX).partition(";")
                payload["url"] = encode_data_url((self.inputs_dir / name).read_bytes(), mime)
        return request

    def record_submission(self, sub: Submission) -> None:
        self._exec(
            "INSERT OR REPLACE INTO submissions (task_id, batch_id, submitted_at, base_url, model, mode, prompt,"
            " request, inputs) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (sub.task_id, sub.batch_id, sub.submitted_at, sub.base_url, sub.model, sub.mode, sub.prompt,
             json.dumps(self._stash_inline_data(sub.request)), json.dumps([i.__dict__ for i in sub.inputs])),
        )

    @staticmethod
    def _submission(row: sqlite3.Row) -> Submission:
        return Submission(
            task_id=row["task_id"], batch_id=row["batch_id"], submitted_at=row["submitted_at"],
            base_url=row["base_url"], model=row["model"], mode=row["mode"], prompt=row["prompt"],
            request=json.loads(row["request"]), inputs=[InputRef(**i) for i in json.loads(row["inputs"])],
        )

    def submission(self, task_id: str) -> Submission | None:
        rows = self._exec("SELECT * FROM submissions WHERE task_id = ?", (task_id,))
        return self._submission(rows[0]) if rows else None

    def submissions(self, task_ids: Iterable[str]) -> dict[str, Submission]:
        ids = list(task_ids)
        if not ids:
            return {}
        marks = ",".join("?" * len(ids))
        rows = self._exec(f"SELECT * FROM submissions WHERE task_id IN ({marks})", ids)
        return {r["task_id"]: self._submission(r) for r in rows}

    def batch(self, batch_id: str) -> list[Submission]:
        rows = self._exec("SELECT * FROM submissions WHERE batch_id = ? ORDER BY submitted_at", (batch_id,))
        return [self._submission(r) for r in rows]

    def recent_submissions(self, limit: int = 200) -> list[Submission]:
        rows = self._exec("SELECT * FROM submissions ORDER BY submitted_at DESC LIMIT ?", (limit,))
        return [self._submission(r) for r in rows]

    def batches(self, limit: int = 100) -> list[dict[str, Any]]:
        rows = self._exec(
            "SELECT b.*, COUNT(s.task_id) AS size FROM batches b LEFT JOIN submissions s ON s.batch_id = b.id"
            " GROUP BY b.id ORDER BY b.created_at DESC LIMIT ?", (limit,))
        return [dict(r) for r in rows]

    # ---------- last known records (so kept results outlive the service's record) ----------

    def save_records(self, records: Iterable[dict[str, Any]]) -> None:
        now = time.time()
        with self._lock:
            self._conn.executemany(
                "INSERT OR REPLACE INTO records (task_id, record, saved_at) VALUES (?, ?, ?)",
                [(r["id"], json.dumps(r), now) for r in records],
            )

    def record(self, task_id: str) -> dict[str, Any] | None:
        rows = self._exec("SELECT record FROM records WHERE task_id = ?", (task_id,))
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
        self._exec("INSERT OR REPLACE INTO reviews (task_id, verdict, stars, notes, updated_at) VALUES (?, ?, ?, ?, ?)",
                   (updated.task_id, updated.verdict, updated.stars, updated.notes, updated.updated_at))
        return updated

    def review(self, task_id: str) -> Review:
        rows = self._exec("SELECT * FROM reviews WHERE task_id = ?", (task_id,))
        return Review(**dict(rows[0])) if rows else Review(task_id)

    def reviews(self, task_ids: Iterable[str]) -> dict[str, Review]:
        ids = list(task_ids)
        if not ids:
            return {}
        rows = self._exec(f"SELECT * FROM reviews WHERE task_id IN ({','.join('?' * len(ids))})", ids)
        return {r["task_id"]: Review(**dict(r)) for r in rows}

    # ---------- kept files ----------

    def keep_path(self, task_id: str, name: str) -> Path:
        return self.archive_dir / task_id / name

    def mark_kept(self, task_id: str, name: str, path: Path) -> KeptFile:
        kept = KeptFile(task_id, name, path, path.stat().st_size, time.time())
        self._exec("INSERT OR REPLACE INTO kept (task_id, name, path, size, kept_at) VALUES (?, ?, ?, ?, ?)",
                   (task_id, name, str(path), kept.size, kept.kept_at))
        return kept

    def kept(self, task_id: str) -> dict[str, KeptFile]:
        rows = self._exec("SELECT * FROM kept WHERE task_id = ?", (task_id,))
        out = {}
        for r in rows:
            path = Path(r["path"])
            if path.exists():
                out[r["name"]] = KeptFile(r["task_id"], r["name"], path, r["size"], r["kept_at"])
        return out

    def all_kept(self) -> list[KeptFile]:
        rows = self._exec("SELECT * FROM kept ORDER BY kept_at DESC")
        return [KeptFile(r["task_id"], r["name"], Path(r["path"]), r["size"], r["kept_at"])
                for r in rows if Path(r["path"]).exists()]

    # ---------- preferences ----------

    def preference(self, name: str, default: Any = None) -> Any:
        rows = self._exec("SELECT value FROM preferences WHERE name = ?", (name,))
        return json.loads(rows[0]["value"]) if rows else default

    def set_preference(self, name: str, value: Any) -> None:
        self._exec("INSERT OR REPLACE INTO preferences (name, value) VALUES (?, ?)", (name, json.dumps(value)))


STORED_PREFIX = "journal-input:"


def _payload_urls(request: dict[str, Any]):
    for item in request.get("content", []):
        for kind in ("image_url", "video_url", "audio_url"):
            payload = item.get(kind)
            if isinstance(payload, dict) and isinstance(payload.get("url"), str):
                yield payload
