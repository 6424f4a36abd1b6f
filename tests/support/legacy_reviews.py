"""The previous release's per-key reviews (the journal's table `reviews`: a verdict, stars and notes per
task), which the product no longer writes or reads: old databases still hold them until
`adopt` (dailies/journal/adopt.py) turns them into statuses, stars and comments. The tests of that
conversion make such rows, and check who sees them, through the journal's own table objects."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass

from dailies.journal import Journal


@dataclass(frozen=True)
class LegacyReview:
    task_id: str
    verdict: str | None
    stars: int | None
    notes: str
    updated_at: float


def write_review(view: Journal, task_id: str, verdict: str | None = None, stars: int | None = None,
                 notes: str = "", at: float | None = None) -> None:
    """A legacy review of the task in the view's scope (the unscoped view: a row from before scopes), as
    the previous release wrote it."""
    view._write("reviews", [{"scope": view._writes_as, "task_id": task_id, "verdict": verdict, "stars": stars,
                             "notes": notes, "updated_at": time.time() if at is None else at}])


def legacy_reviews(view: Journal, task_ids: Iterable[str]) -> dict[str, LegacyReview]:
    """The legacy reviews the view sees, by the journal's rule for one row per task (`View._by_task`)."""
    return view._by_task("reviews", task_ids, lambda row: LegacyReview(row.task_id, row.verdict, row.stars,
                                                                        row.notes, row.updated_at))


def legacy_review(view: Journal, task_id: str) -> LegacyReview | None:
    return legacy_reviews(view, [task_id]).get(task_id)
