"""A pending retry lives in the database: a service stopped between two attempts delivers the
event after it starts again, as the next attempt and under the same webhook-id."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import update

from dailies.service.callbacks.delivery import CLAIM_TIMEOUT_SECONDS
from dailies.service.db.tables import callback_events
from tests.service.callbacks.conftest import eventually
from tests.service.callbacks.receiver import Reply, fail_first
from tests.service.conftest import FakeClock

pytestmark = pytest.mark.anyio


async def test_retry_pending_at_shutdown_is_delivered_after_restart(open_env, receiver, tmp_path):
    script = {"reply": fail_first(1)}
    url = receiver.script("/restart", lambda d: script["reply"](d))

    # First life. Its clock stands still, so the retry it schedules never comes due before it
    # stops, however slow the machine: the retry is certainly pending at shutdown.
    async with open_env(clock=FakeClock(time.time()), callback_retry_delays=(0.3, 0.3, 0.3)) as first:
        task_id = await first.create_task(url)
        first.run_next()

        def retry_pending():
            log = first.services.callbacks.log_for(task_id)
            return log if [(e["status"], e["attempt"]) for e in log][-2:] == [("succeeded", 1), ("succeeded", 2)] \
                and log[-1].get("pending") else None

        log = await eventually(retry_pending, what="the first attempt to fail and a retry to be scheduled")
    assert [(e["status"], e["attempt"], e["status_code"]) for e in log[:3]] == [
        ("queued", 1, 200), ("running", 1, 200), ("succeeded", 1, 500)]
    assert log[3]["pending"] is True and log[3]["webhook_id"] == log[2]["webhook_id"]
    assert statuses(receiver) == ["queued", "running", "succeeded"]

    # Second life, on the same data directory, with a receiver that now accepts.
    script["reply"] = lambda d: Reply(200)
    async with open_env() as second:
        log = await second.settled(task_id, events=3)
        api_log = (await second.callback_log(task_id)).json()["items"]
    assert api_log == log
    assert [(e["status"], e["attempt"], e["status_code"]) for e in log] == [
        ("queued", 1, 200), ("running", 1, 200), ("succeeded", 1, 500), ("succeeded", 2, 200)]
    assert log[2]["webhook_id"] == log[3]["webhook_id"]
    got = receiver.deliveries("/restart")
    assert statuses(receiver) == ["queued", "running", "succeeded", "succeeded"]  # nothing sent twice
    assert got[2].webhook_id == got[3].webhook_id and got[2].body == got[3].body
    assert got[3].webhook_id == log[3]["webhook_id"]


async def test_claim_of_a_deliverer_that_died_is_taken_over(open_env, receiver):
    url = receiver.url("/orphan")
    async with open_env(start_callbacks=False) as env:
        task_id = await env.create_task(url)
        # As if a process had claimed the event and died mid-delivery, long enough ago.
        with env.services.engine.begin() as conn:
            conn.execute(update(callback_events).where(callback_events.c.task_id == task_id).values(
                claimed_by="cb-dead-0", claimed_at=time.time() - CLAIM_TIMEOUT_SECONDS - 1))
        env.services.callbacks.start()
        log = await env.settled(task_id, events=1)
    assert [(e["status"], e["attempt"], e["status_code"]) for e in log] == [("queued", 1, 200)]
    assert statuses(receiver, "/orphan") == ["queued"]


def statuses(receiver, path: str = "/restart") -> list[str]:
    return [d.status for d in receiver.deliveries(path)]
