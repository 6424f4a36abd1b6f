"""The last record seen of each task, so kept results outlive the service's record (records die after 7
days there)."""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from typing import Any

from .view import View

# How many written records `save_records` remembers, to skip rewriting them (a few MB at most).
_SAVED_RECORDS_REMEMBERED = 20_000


class RecordsMixin(View):
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
