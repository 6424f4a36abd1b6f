"""What the dashboard sent: batches and submissions (prompt, inputs with thumbnails, parameters)."""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import and_, func, select

from .inputs import StoredInputsMixin


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


class SubmissionsMixin(StoredInputsMixin):
    """Batches and submissions; a submission's uploads are stored once (StoredInputsMixin)."""

    def new_batch(self, label: str, mode: str) -> str:
        batch_id = "b-" + uuid.uuid4().hex[:10]
        self._write("batches", [{"id": batch_id, "scope": self._writes_as, "created_at": time.time(), "label": label,
                                 "mode": mode}])
        return batch_id

    def record_submission(self, sub: Submission) -> None:
        self._write("submissions", [{
            "scope": self._writes_as, "task_id": sub.task_id, "batch_id": sub.batch_id,
            "submitted_at": sub.submitted_at, "base_url": sub.base_url, "model": sub.model, "mode": sub.mode,
            "prompt": sub.prompt, "request": json.dumps(self._stash_inline_data(sub.request)),
            "inputs": json.dumps([i.__dict__ for i in sub.inputs])}])
        self._write("authors", [{"scope": self._writes_as, "task_id": sub.task_id, "author": self.author,
                                 "at": sub.submitted_at}])

    def authors(self, task_ids: Iterable[str]) -> dict[str, str]:
        """Who submitted each of these tasks from a dashboard (the view's author when they did)."""
        return self._by_task("authors", task_ids, lambda row: row.author)

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
