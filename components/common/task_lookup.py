"""One task by id, wherever it still is: asked of the service, else the journal's last copy of it
(deleted, or purged after 7 days), so a kept result still plays and shows its parameters. The Tasks
detail and Review's single result (`?task=`) both open a task this way."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from components.common import data
from components.common.records import record_from_json
from dailies.client import APIError, Client, NotFoundError
from dailies.journal import Journal
from dailies.spec.models import TaskRecord

Source = Literal["service", "journal", "none"]


@dataclass(frozen=True)
class LoadedTask:
    """A task as found: from the service, from the journal's last copy, or not at all."""

    task_id: str
    record: TaskRecord | None
    source: Source
    problem: str = ""

    @property
    def live(self) -> bool:
        return self.source == "service"


def load(client: Client | None, journal: Journal, task_id: str) -> LoadedTask:
    """Ask the service; fall back to the journal's copy when it no longer has the task or is unreachable."""
    problem = ""
    if client is not None:
        try:
            record = client.tasks.get(task_id)
        except NotFoundError:
            problem = "The service no longer has this task (records are kept 7 days, or it was deleted)."
        except APIError as exc:
            problem = f"Could not ask the service about this task: {exc}"
        else:
            data.remember(journal, [record])
            return LoadedTask(task_id, record, "service")
    saved = journal.record(task_id)
    record = record_from_json(saved) if saved else None
    return LoadedTask(task_id, record, "journal" if record else "none", problem)
