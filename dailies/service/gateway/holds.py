"""A gateway's held reservations: tasks that ended here (failed, expired) while the upstream may bill
them. Their cost stays reserved until the upstream says, and the ledger's rule of when to settle or
release is budgets.py's (`held_outcome`); this module finds them, asks the upstream, and keeps the
upstream task of an orphan (a create answered after its task ended here) with its task.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Protocol

from sqlalchemy import select, update

from dailies.service.billing import budgets
from dailies.service.db.tables import ledger, tasks
from dailies.service.gateway.checkpoint import UpstreamCheckpoint
from dailies.service.runtime.faults import database_unreachable, describe
from dailies.service.tasks.rows import TaskRow
from dailies.service.tasks.store import TaskStore
from dailies.spec.statuses import TaskStatus

log = logging.getLogger("dailies.workers")

_ENDED_HERE = (TaskStatus.EXPIRED, TaskStatus.FAILED)


class AsksUpstream(Protocol):
    def bills(self, state: UpstreamCheckpoint, ended_at: float | None) -> bool | None: ...


def ended_holding_reservations(store: TaskStore) -> list[TaskRow]:
    """Failed and expired tasks with a checkpoint whose cost is still reserved. Read from the
    database on every sweep, so a settle that failed (a database blip, a process stopped between
    the end and the settle) is done by a later one."""
    with store.engine.connect() as conn:
        return TaskRow.all_of(conn.execute(
            select(*tasks.c).join(ledger, ledger.c.task_id == tasks.c.id)
            .where(tasks.c.status.in_(_ENDED_HERE), tasks.c.generator_state.is_not(None),
                   ledger.c.state == "reserved")
            .order_by(tasks.c.finished_at)
        ))


def settle_holds(store: TaskStore, upstream: AsksUpstream, now: float, clock: Callable[[], float]) -> None:
    """Each held task settled or released once its outcome is known (budgets.held_outcome). Each
    task on its own, so one that fails does not hold up the others; once the upstream does not
    answer, the sweep asks it no more (each unanswered read may take the HTTP timeout, and the
    housekeeper also expires and requeues tasks)."""
    upstream_silent = False
    for row in ended_holding_reservations(store):
        state = UpstreamCheckpoint.from_json(row.generator_state)
        ended_at = row.finished_at or row.updated_at
        try:
            says = None
            if budgets.asks_upstream(state.bill) and not upstream_silent:
                # When it ended tells the gateway how old its upstream task is at least (a 404 soon
                # after the create may be the upstream's lag, not a task it does not have).
                says = upstream.bills(state, ended_at)
                upstream_silent = says is None
            billed = budgets.held_outcome(state.bill, now - ended_at, says)
            if billed is None:
                continue
            with store.write.begin() as conn:
                budgets.settle_held(conn, row.id, billed, clock(), state.key)
        except Exception as exc:
            if database_unreachable(exc):
                raise  # the housekeeper waits for the database; the next sweep takes it again
            log.warning("the cost of ended %s was not settled (tried again next sweep): %s", row.id, describe(exc))


def keep_orphan(store: TaskStore, task_id: str, state: UpstreamCheckpoint) -> None:
    """An upstream task created for a task that ended here meanwhile: its checkpoint is kept with
    the task, so the sweep cancels it there or counts what it costs (it would run unowned)."""
    log.warning("task %s ended here while its upstream create was answered (%s): kept to cancel or count",
                task_id, state.upstream_id)
    try:
        with store.write.begin() as conn:
            conn.execute(update(tasks).where(tasks.c.id == task_id, tasks.c.status.in_(_ENDED_HERE))
                         .values(generator_state=state.to_json()))
    except Exception:  # the reservation stays held; the sweep counts it at its estimate
        log.exception("keeping the upstream task of %s failed", task_id)
