"""Review status of each version (a succeeded task) with its history, and each person's stars.

Every succeeded result starts `pending` (no row); anyone of the scope (the project, on a Dailies
service) sets `approved`, `changes_requested` or `rejected`, or back to `pending`. Each change is a new
row (who, when, from what), so the history is the rows in order and the current status the latest.
Stars are one per person and task (a person changes theirs); the card shows each and the average.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from .view import View

PENDING = "pending"
APPROVED = "approved"
CHANGES_REQUESTED = "changes_requested"
REJECTED = "rejected"
STATUSES = (PENDING, APPROVED, CHANGES_REQUESTED, REJECTED)
STATUS_LABELS = {PENDING: "Pending review", APPROVED: "Approved", CHANGES_REQUESTED: "Changes requested",
                 REJECTED: "Rejected"}
# The previous release's per-key verdicts (table `reviews`) as statuses, for adopt.py's conversion.
FROM_VERDICT = {"approved": APPROVED, "rejected": REJECTED}


@dataclass(frozen=True)
class StatusChange:
    task_id: str
    status: str
    author: str
    at: float
    previous: str | None = None


class StatusesMixin(View):
    def set_status(self, task_id: str, status: str, at: float | None = None, *,
                   admit: Callable[[Any, float], None] | None = None) -> StatusChange | None:
        """Record a change of the task's status; None, and nothing written, when it already has it.
        `admit(conn, when)` runs in the change's transaction before the write and may refuse it (raise):
        a share's limit on its guests, counted with the other writers held off."""
        if status not in STATUSES:
            raise ValueError(f"status must be one of {', '.join(STATUSES)}")
        table = self._table("statuses")
        # The status it changes from is read in the transaction that writes the change, with the other
        # writers of this task held off (Store.lock): read and written apart, two reviewers at once both
        # recorded "from" the status before either, and the history read "Pending → Rejected" right
        # after an "→ Approved".
        with self._store.writer.begin() as conn:
            self._store.lock(conn, "statuses", self._writes_as, task_id)
            latest = conn.execute(select(table.c.status, table.c.at)
                                  .where(self._visible(table), table.c.task_id == task_id)
                                  .order_by(table.c.at.desc(), self._store.written(table).desc()).limit(1)).first()
            previous = latest.status if latest is not None else PENDING
            if status == previous:  # a history row saying nothing, and a write anyone could repeat
                return None
            # Timed once it is this change's turn, and never before the change it follows (another
            # dashboard's clock may be ahead): the history, in time order, is the order of the changes.
            when = at if at is not None else max(time.time(), latest.at if latest is not None else 0.0)
            if admit is not None:
                admit(conn, when)
            change = StatusChange(task_id, status, self.author, when, previous)
            conn.execute(self._store.upsert("statuses"),
                         [{"scope": self._writes_as, "id": uuid.uuid4().hex, **change.__dict__}])
        return change

    @staticmethod
    def _change(row: Any) -> StatusChange:
        return StatusChange(row.task_id, row.status, row.author, row.at, row.previous)

    def statuses(self, task_ids: Iterable[str]) -> dict[str, StatusChange]:
        """The latest change of each task that has one (the others are pending)."""
        ids = list(dict.fromkeys(task_ids))
        if not ids:
            return {}
        table = self._table("statuses")
        rows = self._read(select(table).where(self._visible(table), table.c.task_id.in_(ids))
                          .order_by(table.c.at.desc(), self._store.written(table).desc()))
        out: dict[str, StatusChange] = {}
        for row in rows:
            out.setdefault(row.task_id, self._change(row))
        return out

    def status_of(self, task_id: str) -> str:
        change = self.statuses([task_id]).get(task_id)
        return change.status if change is not None else PENDING

    def status_history(self, task_id: str) -> list[StatusChange]:
        """Every change of the task's status, oldest first."""
        table = self._table("statuses")
        rows = self._read(select(table).where(self._visible(table), table.c.task_id == task_id)
                          .order_by(table.c.at, self._store.written(table)))
        return [self._change(r) for r in rows]

    def rate(self, task_id: str, stars: int | None, at: float | None = None) -> None:
        """This view's author's stars for the task, 1 to 5; None or 0 takes them back."""
        if stars is not None and not 0 <= stars <= 5:
            raise ValueError("stars must be 0 to 5")
        table = self._table("ratings")
        if not stars:
            with self._store.writer.begin() as conn:
                conn.execute(table.delete().where(table.c.scope == self._writes_as, table.c.task_id == task_id,
                                                  table.c.author == self.author))
            return
        self._write("ratings", [{"scope": self._writes_as, "task_id": task_id, "author": self.author,
                                 "stars": stars, "at": time.time() if at is None else at}])

    def ratings(self, task_ids: Iterable[str]) -> dict[str, dict[str, int]]:
        """Each task's stars by person."""
        ids = list(dict.fromkeys(task_ids))
        if not ids:
            return {}
        table = self._table("ratings")
        out: dict[str, dict[str, int]] = {}
        for row in self._read(select(table).where(self._visible(table), table.c.task_id.in_(ids))
                              .order_by(table.c.at)):
            out.setdefault(row.task_id, {})[row.author] = row.stars
        return out


def average(stars: dict[str, int]) -> float | None:
    return sum(stars.values()) / len(stars) if stars else None
