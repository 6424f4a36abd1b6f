"""Versions of a shot: a rerun, an edit, a final from a draft or a shot chained from a last frame,
submitted from the dashboard, joins the shot of the task it came from. A task with no row is a shot
of its own (its v1). Versions are numbered by submission time within the shot."""

from __future__ import annotations

import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from .view import View

# How a version came from its parent.
HOWS = ("rerun", "edit", "final", "chain")


@dataclass(frozen=True)
class ShotLink:
    task_id: str
    shot_id: str  # the first version's task id
    parent_id: str | None
    how: str
    created_at: float


class ShotsMixin(View):
    def link_version(self, task_id: str, parent_id: str, how: str, at: float | None = None) -> ShotLink:
        """Record that `task_id` is a new version of the shot `parent_id` belongs to."""
        if how not in HOWS:
            raise ValueError(f"how must be one of {', '.join(HOWS)}")
        parent = self.shot_links([parent_id]).get(parent_id)
        link = ShotLink(task_id, parent.shot_id if parent is not None else parent_id, parent_id, how,
                        time.time() if at is None else at)
        self._write("shots", [{"scope": self._writes_as, **link.__dict__}])
        return link

    @staticmethod
    def _link(row: Any) -> ShotLink:
        return ShotLink(row.task_id, row.shot_id, row.parent_id, row.how, row.created_at)

    def shot_links(self, task_ids: Iterable[str]) -> dict[str, ShotLink]:
        return self._by_task("shots", task_ids, self._link)

    def shot_members(self, shot_ids: Iterable[str]) -> dict[str, list[str]]:
        """The later versions of each shot (task ids, in the order they were made; the shot's own id,
        its v1, is not among them)."""
        ids = list(dict.fromkeys(shot_ids))
        if not ids:
            return {}
        table = self._table("shots")
        out: dict[str, list[str]] = {}
        for row in self._read(select(table.c.shot_id, table.c.task_id)
                              .where(self._visible(table), table.c.shot_id.in_(ids)).order_by(table.c.created_at)):
            if row.task_id not in out.setdefault(row.shot_id, []):
                out[row.shot_id].append(row.task_id)
        return out


def group_versions(task_ids: list[str], links: dict[str, ShotLink]) -> dict[str, list[str]]:
    """Tasks grouped by shot, each shot's versions oldest first (v1 first), in the order of `task_ids`
    (given oldest first). A task without a link is its own shot."""
    shots: dict[str, list[str]] = {}
    for task_id in task_ids:
        link = links.get(task_id)
        shots.setdefault(link.shot_id if link is not None else task_id, []).append(task_id)
    for shot_id, versions in shots.items():
        if shot_id in versions and versions[0] != shot_id:  # the first version leads whatever the order
            versions.remove(shot_id)
            versions.insert(0, shot_id)
    return shots
