"""What reviewers decided about a task: a verdict, stars, notes."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from .view import View

VERDICTS = ("approved", "rejected")


@dataclass
class Review:
    task_id: str
    verdict: str | None = None
    stars: int | None = None
    notes: str = ""
    updated_at: float = 0.0


class ReviewsMixin(View):
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
