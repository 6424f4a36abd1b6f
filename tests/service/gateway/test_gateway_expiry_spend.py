"""Money of a gateway's task that expires here after it was handed to the upstream: still queued
there, the upstream cancels it and nothing is spent; already running there, the upstream runs and
bills it, so the ledger settles it at its estimate (with the upstream key) instead of releasing it.

The upstream only queues (no render slots); "running upstream" is made by marking its task running in
its database, as a provider that has started it would answer the DELETE (409). The gateway's clock
is moved past the member's deadline instead of waiting an hour."""

from __future__ import annotations

import contextlib
import json
import time

import pytest
from sqlalchemy import select, update

from dailies.client import Client
from dailies.service.db.tables import ledger, tasks
from dailies.service.gateway.forwarding import UpstreamKey
from tests.support.live_service import start_live_service
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow

UPSTREAM_KEY = "upstream-team-key"
MEMBER_KEY = "member-key-0001"
SMALL = {"model": "doubao-seedance-1-0-pro-250528", "resolution": "480p", "duration": 2,
         "execution_expires_after": 3600}
TWO_HOURS = 7200.0


@contextlib.contextmanager
def gateway_before_a_queue(tmp_path, **gateway_settings):
    """A gateway (two render slots, a clock the test moves on: `moved[0]` seconds) in front of a
    service that only queues; (gateway, upstream, moved)."""
    moved = [0.0]
    queue_only = start_live_service(tmp_path / "up", workers=0, api_keys={UPSTREAM_KEY: "team"})
    gateway = start_live_service(tmp_path / "gw", workers=2, api_keys={MEMBER_KEY: "studio"},
                                 upstream_url=queue_only.base_url, upstream_keys=[UpstreamKey("main", UPSTREAM_KEY)],
                                 clock=lambda: time.time() + moved[0], **gateway_settings)
    try:
        yield gateway, queue_only, moved
    finally:
        gateway.stop()
        queue_only.stop()


@pytest.fixture
def services(tmp_path):
    with gateway_before_a_queue(tmp_path) as both:
        yield both


def handed_over(gateway, task_id: str) -> str | None:
    state = gateway.app.state.services.store.get_by_id(task_id).generator_state
    return json.loads(state).get("upstream_id") if state else None


def ledger_row(gateway, task_id: str):
    with gateway.app.state.services.engine.connect() as conn:
        return conn.execute(select(ledger.c.state, ledger.c.amount, ledger.c.upstream_key)
                            .where(ledger.c.task_id == task_id)).first()


def test_an_expired_task_is_spent_if_the_upstream_runs_it_and_released_if_it_was_cancelled_there(services):
    gateway, upstream, moved = services
    with Client(base_url=gateway.base_url, api_key=MEMBER_KEY) as client:
        waiting_there = client.tasks.create({**SMALL, "content": [{"type": "text", "text": "still queued there"}]}).id
        running_there = client.tasks.create({**SMALL, "content": [{"type": "text", "text": "started there"}]}).id
        upstream_ids = {task: wait_for(lambda task=task: handed_over(gateway, task), "the task to be handed over", 60)
                        for task in (waiting_there, running_there)}
        with upstream.app.state.services.engine.begin() as conn:
            conn.execute(update(tasks).where(tasks.c.id == upstream_ids[running_there]).values(status="running"))
        reserved = ledger_row(gateway, running_there)
        assert reserved.state == "reserved" and reserved.amount > 0

        moved[0] = TWO_HOURS  # past both members' deadlines
        gateway.app.state.services.workers.sweep()
        for task in (waiting_there, running_there):
            assert client.tasks.get(task).status == "expired"

    assert wait_for(lambda: ledger_row(gateway, waiting_there).state != "reserved" and
                    ledger_row(gateway, waiting_there), "the queued one's reservation to end", 30).state == "released"
    spent = wait_for(lambda: ledger_row(gateway, running_there).state != "reserved" and
                     ledger_row(gateway, running_there), "the running one's reservation to end", 30)
    assert (spent.state, spent.amount, spent.upstream_key) == ("settled", reserved.amount, "main")
    with upstream.app.state.services.engine.connect() as conn:
        there = dict(conn.execute(select(tasks.c.id, tasks.c.status)).all())
    assert there[upstream_ids[waiting_there]] == "cancelled" and there[upstream_ids[running_there]] == "running"
