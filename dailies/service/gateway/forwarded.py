"""What the task rules ask of a gateway (tasks/actions.py `Forwarding`): whether a task was handed
over, cancelling it upstream while it still waits there, and a final's start from its draft's
upstream task."""

from __future__ import annotations

from collections.abc import Callable

from dailies.service.errors import from_problems
from dailies.service.gateway.checkpoint import UpstreamCheckpoint
from dailies.service.gateway.forwarding import UpstreamGenerator
from dailies.service.tasks.rows import TaskRow
from dailies.service.tasks.store import TaskStore
from dailies.spec.problems import Problem


class ForwardedTasks:
    def __init__(self, gateway: UpstreamGenerator, store: TaskStore, clock: Callable[[], float]) -> None:
        self.gateway = gateway
        self.store = store
        self.clock = clock

    def handed_over(self, row: TaskRow) -> bool:
        return UpstreamCheckpoint.from_json(row.generator_state).handed_over

    def cancel_upstream(self, row: TaskRow) -> bool:
        """Cancel the task upstream if it still waits there; True once the upstream shows it cancelled."""
        return self.gateway.cancel_queued(UpstreamCheckpoint.from_json(row.generator_state))

    def cancel_running(self, project: str, row: TaskRow) -> bool:
        """A task "running" here from its handover may still wait in the upstream's queue, where it
        can be cancelled like a task queued here: cancelled there, then here."""
        if not row.generator_state or not self.cancel_upstream(row):
            return False
        return self.store.cancel_forwarded(project, row.id, self.clock()) is not None

    def final_state(self, draft_row: TaskRow) -> str:
        """A final refers upstream to its draft's upstream task (the upstream keeps the draft, not
        Dailies' id): the checkpoint its render starts from."""
        upstream_id = UpstreamCheckpoint.from_json(draft_row.generator_state).upstream_id
        if upstream_id is None:
            raise from_problems([Problem("content[0].draft_task.id", f"draft task {draft_row.id} was not made "
                                         "through this gateway's upstream, so the upstream cannot finalise it")])
        return UpstreamCheckpoint(draft_upstream_id=upstream_id).to_json()
