"""Cancelling a gateway's task, against a real upstream (a Dailies service that only queues): a DELETE
reaches the upstream only for a task the upstream still has queued, a cost the upstream bills is never
released, and an expired task's cost is settled even when the first try to settle it fails.

"The upstream has started it", or "has finished it", is made by setting its task's status in the
upstream's database, as a provider that has started or finished it would answer. The gateway follows
its tasks once an hour here, so it does not notice those changes before the test has acted."""

from __future__ import annotations

import contextlib
import json

import pytest
from sqlalchemy import select, update
from sqlalchemy.exc import OperationalError

from dailies.client import Client, ConflictError
from dailies.service.billing import budgets
from dailies.service.db.tables import ledger, tasks
from tests.service.gateway.test_gateway_expiry_spend import MEMBER_KEY, gateway_before_a_queue
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow

SMALL = {"model": "doubao-seedance-1-0-pro-250528", "resolution": "480p", "duration": 2,
         "execution_expires_after": 3600}


@pytest.fixture
def services(tmp_path):
    # Followed once an hour, so the gateway does not notice what the test does to its upstream first (a
    # minute was passed on a loaded machine: the gateway read the forced success and failed the task).
    with gateway_before_a_queue(tmp_path, upstream_poll=(3600.0, 3600.0), sweep_interval=3600.0) as both:
        yield both


def handed_over(gateway, task_id: str) -> str:
    def upstream_id():
        state = gateway.app.state.services.store.get_by_id(task_id).generator_state
        return json.loads(state).get("upstream_id") if state else None

    return wait_for(upstream_id, "the task to be handed over", 60)


def upstream_reads(gateway) -> int:
    """The gateway's answered reads of upstream tasks (LIST and GET), from its metrics."""
    counter = gateway.app.state.services.metrics.upstream_calls
    return int(sum(sample.value for metric in counter.collect() for sample in metric.samples
                   if sample.name.endswith("_total") and sample.labels.get("call") in ("list", "get")
                   and sample.labels.get("outcome") == "200"))


def set_upstream_status(upstream, upstream_id: str, status: str) -> None:
    with upstream.app.state.services.engine.begin() as conn:
        conn.execute(update(tasks).where(tasks.c.id == upstream_id).values(status=status))


def upstream_status(upstream, upstream_id: str) -> str | None:
    with upstream.app.state.services.engine.connect() as conn:
        return conn.execute(select(tasks.c.status).where(tasks.c.id == upstream_id)).scalar()


def ledger_state(gateway, task_id: str) -> str:
    with gateway.app.state.services.engine.connect() as conn:
        return conn.execute(select(ledger.c.state).where(ledger.c.task_id == task_id)).scalar()


def create(client: Client, text: str) -> str:
    return client.tasks.create({**SMALL, "content": [{"type": "text", "text": text}]}).id


def test_a_delete_after_the_upstream_finished_the_task_neither_deletes_it_there_nor_frees_its_cost(services):
    """The upstream's DELETE of a finished task deletes its record (and answers 200): taken for a
    cancel, the member's task was cancelled, its cost released and the billed result lost."""
    gateway, upstream, _ = services
    with Client(base_url=gateway.base_url, api_key=MEMBER_KEY, max_retries=0) as client:
        reads = upstream_reads(gateway)
        task_id = create(client, "finished there")
        upstream_id = handed_over(gateway, task_id)
        # Its follow reads it at once, then waits an hour: a status set before that read would be
        # seen at once (a loaded CI machine did), and the task would end before the DELETE.
        wait_for(lambda: upstream_reads(gateway) > reads, "the gateway's first read of the upstream task", 60)
        set_upstream_status(upstream, upstream_id, "succeeded")
        with pytest.raises(ConflictError):
            client.tasks.delete(task_id)
        # Not cancelled here. Having asked the upstream, the gateway may already be following the task's
        # end (this upstream's forced success has no video, so it fails here; a busy machine showed it
        # within the next request): either way neither cancelled nor freed.
        assert client.tasks.get(task_id).status in ("running", "failed")
    assert upstream_status(upstream, upstream_id) == "succeeded"
    assert ledger_state(gateway, task_id) in ("reserved", "spent")  # billed upstream: never released


def test_a_delete_while_the_upstream_still_queues_the_task_cancels_it_on_both_sides(services):
    gateway, upstream, _ = services
    with Client(base_url=gateway.base_url, api_key=MEMBER_KEY, max_retries=0) as client:
        task_id = create(client, "still queued there")
        upstream_id = handed_over(gateway, task_id)
        client.tasks.delete(task_id)
        assert client.tasks.get(task_id).status == "cancelled"
    assert upstream_status(upstream, upstream_id) == "cancelled"
    assert wait_for(lambda: ledger_state(gateway, task_id) != "reserved" and ledger_state(gateway, task_id),
                    "the reservation to end", 30) == "released"


def test_a_task_queued_here_again_after_the_handover_is_cancelled_upstream_or_not_at_all(services):
    """A clean stop puts a handed-over task back in the queue here; the upstream still has it. While
    it waits there a DELETE cancels it on both sides; once it runs there, the DELETE is refused and
    its cost stays reserved (the upstream bills it)."""
    gateway, upstream, _ = services
    with Client(base_url=gateway.base_url, api_key=MEMBER_KEY, max_retries=0) as client:
        waiting, started = create(client, "waits there"), create(client, "started there")
        upstream_ids = {task: handed_over(gateway, task) for task in (waiting, started)}
        set_upstream_status(upstream, upstream_ids[started], "running")
        gateway.app.state.services.workers.stop(grace=0)  # a rolling restart: back in the queue here
        assert {client.tasks.get(t).status for t in (waiting, started)} == {"queued"}

        client.tasks.delete(waiting)
        assert client.tasks.get(waiting).status == "cancelled"
        with pytest.raises(ConflictError) as refused:
            client.tasks.delete(started)
        assert "started at the provider" in str(refused.value)
        assert client.tasks.get(started).status == "queued"
    assert upstream_status(upstream, upstream_ids[waiting]) == "cancelled"
    assert upstream_status(upstream, upstream_ids[started]) == "running"
    assert (ledger_state(gateway, waiting), ledger_state(gateway, started)) == ("released", "reserved")


def test_an_expired_tasks_cost_is_settled_by_a_later_sweep_when_the_first_try_fails(services, monkeypatch):
    gateway, upstream, moved = services
    with Client(base_url=gateway.base_url, api_key=MEMBER_KEY, max_retries=0) as client:
        task_id = create(client, "expires here")
        upstream_id = handed_over(gateway, task_id)
        set_upstream_status(upstream, upstream_id, "running")
        real, tries = budgets.settle_at_estimate, []

        def blip_once(*args, **kwargs):
            tries.append(1)
            if len(tries) == 1:
                raise OperationalError("UPDATE ledger", {}, Exception("server closed the connection"))
            return real(*args, **kwargs)

        monkeypatch.setattr(budgets, "settle_at_estimate", blip_once)
        moved[0] = 7200.0  # past the member's deadline
        workers = gateway.app.state.services.workers
        with contextlib.suppress(OperationalError):
            workers.sweep()  # the housekeeper logs what a sweep raises and sweeps again later
        assert client.tasks.get(task_id).status == "expired"
        assert ledger_state(gateway, task_id) == "reserved"
        workers.sweep()
    assert ledger_state(gateway, task_id) == "settled" and len(tries) == 2
    workers.sweep()  # settled: not taken again
    assert len(tries) == 2
