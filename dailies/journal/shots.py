"""Versions of a shot: a rerun, an edit, a final from a draft or a shot chained from a last frame,
submitted from the dashboard, joins the shot of the task it came from. A task with no row is a shot
of its own (its v1). Versions are numbered by submission time within the shot, among its results
only (`version_numbers`: the one rule of the Review page, its reel, the notes report and `dailies reel`)."""

from __future__ import annotations

import json
import time
from collections.abc import Collection, Container, Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select

from ..spec.lifetimes import oldest_kept
from ..spec.results import VIDEO_NAME
from ..spec.statuses import TaskStatus
from .kept import KeptFilesMixin

# How a version came from its parent.
HOWS = ("rerun", "edit", "final", "chain")


@dataclass(frozen=True)
class ShotLink:
    task_id: str
    shot_id: str  # the first version's task id
    parent_id: str | None
    how: str
    created_at: float


class ShotsMixin(KeptFilesMixin):
    """Stands on KeptFilesMixin: a kept video makes a version a known result."""

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

    def shot_tasks(self, task_ids: Iterable[str]) -> tuple[dict[str, str], dict[str, list[str]]]:
        """Each task's shot id, and each of those shots' tasks in order (its own task, v1, first)."""
        ids = list(dict.fromkeys(task_ids))
        links = self.shot_links(ids)
        shot_of = {tid: (links[tid].shot_id if tid in links else tid) for tid in ids}
        members = self.shot_members(set(shot_of.values()))
        tasks = {shot: [shot, *[t for t in members.get(shot, []) if t != shot]] for shot in set(shot_of.values())}
        return shot_of, tasks

    def known_results(self, task_ids: Iterable[str], now: float | None = None) -> set[str]:
        """Which of these tasks the journal knows as results, as the Review page would list them: a kept
        video this dashboard can play, or a last record seen succeeded and not yet purged by the service.
        (A version deleted from the service since the dashboard last listed it is not known here.)"""
        ids = list(dict.fromkeys(task_ids))
        if not ids:
            return set()
        kept = self._table("kept")
        found = {row.task_id for row in self._preferred("kept", kept.c.task_id.in_(ids), kept.c.name == VIDEO_NAME)
                 if self._kept_file(row) is not None}
        window = oldest_kept(time.time() if now is None else now)
        for task_id, record in self._by_task("records", [t for t in ids if t not in found],
                                             lambda row: json.loads(row.record)).items():
            created = record.get("created_at")
            if record.get("status") == TaskStatus.SUCCEEDED and isinstance(created, int | float) and created >= window:
                found.add(task_id)
        return found

    def numbered_versions(self, task_ids: Iterable[str], results: Collection[str] | None = None,
                          now: float | None = None) -> dict[str, tuple[str, int | None]]:
        """Each task's shot id and version number (`version_numbers`), None for a task that is not a
        result. `results`: the tasks that are results as the caller knows them (the Review page: what it
        lists and keeps); None: as the journal knows them (`known_results`), the tasks asked for counted
        among them (a reel or a report names them: `dailies reel` has their videos)."""
        ids = list(dict.fromkeys(task_ids))
        shot_of, tasks = self.shot_tasks(ids)
        if results is None:
            results = set(ids) | self.known_results([t for shot in tasks.values() for t in shot], now)
        numbers = {shot: version_numbers(shot_tasks, results) for shot, shot_tasks in tasks.items()}
        return {tid: (shot_of[tid], numbers[shot_of[tid]].get(tid)) for tid in ids}


def version_numbers(shot_tasks: Iterable[str], results: Container[str]) -> dict[str, int]:
    """The one numbering of a shot's versions, wherever a version is named (the Review page's cards and
    picker, its reel's slates and notes report, `dailies report`, `dailies reel`'s slates): the shot's
    tasks in order (`shot_tasks`, its own task first, then later versions as they were made), numbered
    from 1 among its results alone. A task that is not a result (`results`: succeeded, and still on the
    service or kept) takes no number: a failed rerun, or a version deleted or purged, leaves no gap, so
    "v2" on a card is "v2" in the report a client reads."""
    numbers: dict[str, int] = {}
    for task_id in shot_tasks:
        if task_id in results and task_id not in numbers:
            numbers[task_id] = len(numbers) + 1
    return numbers


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
