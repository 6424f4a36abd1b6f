"""Callbacks delivered over real TCP to a receiver on loopback: what is sent, in which order, how
often, and what the delivery log says."""

from __future__ import annotations

import time

import pytest
from sqlalchemy import update

from dailies.service.db.tables import callback_events
from tests.service.callbacks.conftest import eventually
from tests.service.callbacks.receiver import always, fail_first, hang, redirect, slow_first
from tests.service.conftest import KEY_B

pytestmark = pytest.mark.anyio

RETRIED = frozenset({"succeeded", "failed"})


def statuses(deliveries) -> list[str]:
    return [d.status for d in deliveries]


def attempts_by_status(log: list[dict]) -> dict[str, list[tuple[int, int | None]]]:
    out: dict[str, list[tuple[int, int | None]]] = {}
    for entry in log:
        out.setdefault(entry["status"], []).append((entry["attempt"], entry["status_code"]))
    return out


async def test_each_status_change_posts_the_record_of_that_moment(env):
    url = env.receiver.url("/hook")
    task_id = await env.create_task(url)
    queued_record = (await env.get(task_id)).json()
    row = env.claim()
    running_record = (await env.get(task_id)).json()
    env.services.workers.run_one(row, "w1")
    succeeded_record = (await env.get(task_id)).json()
    assert [queued_record["status"], running_record["status"], succeeded_record["status"]] == \
        ["queued", "running", "succeeded"]

    log = await env.settled(task_id, events=3)
    got = env.receiver.deliveries("/hook")
    assert statuses(got) == ["queued", "running", "succeeded"]
    # The body is the task record as GET showed it at that moment, not the record of later.
    assert [d.json for d in got] == [queued_record, running_record, succeeded_record]
    assert "content" in got[2].json and "video_url" in got[2].json["content"]
    for d in got:
        assert d.headers["content-type"] == "application/json"
        assert d.webhook_id.startswith("msg_")
        assert d.headers["webhook-signature"].startswith("v1,")
        assert abs(int(d.headers["webhook-timestamp"]) - d.at) < 60
    assert len({d.webhook_id for d in got}) == 3  # one id per event

    assert [(e["status"], e["attempt"], e["status_code"], e["error"]) for e in log] == [
        ("queued", 1, 200, None), ("running", 1, 200, None), ("succeeded", 1, 200, None)]
    assert [e["webhook_id"] for e in log] == [d.webhook_id for d in got]


async def test_log_endpoint_shows_each_attempt(env):
    url = env.receiver.script("/flaky", fail_first(1))
    task_id = await env.create_task(url)
    env.run_next()
    await env.settled(task_id, events=3)
    response = await env.callback_log(task_id)
    assert response.status_code == 200, response.text
    items = response.json()["items"]
    assert [(e["status"], e["attempt"], e["status_code"], e["error"]) for e in items] == [
        ("queued", 1, 200, None), ("running", 1, 200, None),
        ("succeeded", 1, 500, "receiver answered 500"), ("succeeded", 2, 200, None)]
    for entry in items:
        assert set(entry) == {"webhook_id", "status", "attempt", "at", "status_code", "latency_ms", "error"}
        assert isinstance(entry["latency_ms"], float) and entry["latency_ms"] >= 0
        assert abs(entry["at"] - time.time()) < 60
    assert items[2]["webhook_id"] == items[3]["webhook_id"]
    # Another project's task is as absent as a missing one.
    assert (await env.callback_log(task_id, key=KEY_B)).status_code == 404
    assert (await env.callback_log("cgt-20260101000000-nope0")).status_code == 404


async def test_order_per_task_holds_with_several_deliverers(env):
    # The first callback of every task is held a little, so a later one would overtake it if
    # the queue let it.
    env.receiver.script("/order", slow_first(0.15, frozenset({"queued"})))
    url = env.receiver.url("/order")
    ids = [await env.create_task(url, prompt=f"shot {i}") for i in range(6)]
    assert sorted(env.run_next() for _ in ids) == sorted(ids)
    for task_id in ids:
        await env.settled(task_id, events=3)
    got = env.receiver.deliveries("/order")
    assert len(got) == 18
    for task_id in ids:
        assert statuses(d for d in got if d.json["id"] == task_id) == ["queued", "running", "succeeded"]


async def test_receiver_failing_twice_gets_three_attempts_of_one_event(env):
    url = env.receiver.script("/twice", fail_first(2))
    task_id = await env.create_task(url)
    env.run_next()
    log = await env.settled(task_id, events=3)

    got = env.receiver.deliveries("/twice")
    assert statuses(got) == ["queued", "running", "succeeded", "succeeded", "succeeded"]
    retries = got[2:]
    assert len({d.webhook_id for d in retries}) == 1  # the same webhook-id on every retry
    assert retries[0].webhook_id not in {got[0].webhook_id, got[1].webhook_id}
    assert len({d.body for d in retries}) == 1  # and the same body
    assert attempts_by_status(log) == {"queued": [(1, 200)], "running": [(1, 200)],
                                       "succeeded": [(1, 500), (2, 500), (3, 200)]}
    assert [e["error"] for e in log if e["status"] == "succeeded"] == \
        ["receiver answered 500", "receiver answered 500", None]
    assert [e.state for e in env.events(task_id)] == ["delivered"] * 3
    # Backoff: each retry waits at least the jittered delay after the attempt before it.
    delays = env.settings.callback_retry_delays
    assert retries[1].at - retries[0].at >= 0.8 * delays[0] - 0.01
    assert retries[2].at - retries[1].at >= 0.8 * delays[1] - 0.01


async def test_receiver_always_failing_gets_1_plus_3_attempts_for_terminal_statuses(env):
    url = env.receiver.script("/down", always(500))
    ok_id = await env.create_task(url, prompt="will succeed")
    bad_id = await env.create_task(url, prompt="will fail")
    expired_id = await env.create_task(url, prompt="will expire")
    env.generator.fail_inputs.add(bad_id)
    assert env.run_next() == ok_id and env.run_next() == bad_id
    env.services.store.expire_overdue(time.time() + 10 * 86400)

    logs = {task_id: await env.settled(task_id, events=n)
            for task_id, n in ((ok_id, 3), (bad_id, 3), (expired_id, 2))}
    assert attempts_by_status(logs[ok_id]) == {
        "queued": [(1, 500)], "running": [(1, 500)], "succeeded": [(n, 500) for n in (1, 2, 3, 4)]}
    assert attempts_by_status(logs[bad_id]) == {
        "queued": [(1, 500)], "running": [(1, 500)], "failed": [(n, 500) for n in (1, 2, 3, 4)]}
    assert attempts_by_status(logs[expired_id]) == {"queued": [(1, 500)], "expired": [(1, 500)]}
    # Out of attempts: nothing more will be sent, so the receiver's counts are final.
    assert {e.state for t in logs for e in env.events(t)} == {"failed"}
    got = env.receiver.deliveries("/down")
    for task_id, expected in ((ok_id, ["queued", "running"] + ["succeeded"] * 4),
                              (bad_id, ["queued", "running"] + ["failed"] * 4),
                              (expired_id, ["queued", "expired"])):
        mine = [d for d in got if d.json["id"] == task_id]
        assert statuses(mine) == expected
        retries = [d for d in mine if d.status in RETRIED]
        assert len({d.webhook_id for d in retries}) == (1 if retries else 0)
        assert len({d.webhook_id for d in mine}) == len(set(statuses(mine)))
    failed_body = next(d.json for d in got if d.status == "failed")
    assert failed_body["error"]["code"] and failed_body["id"] == bad_id
    expired_body = next(d.json for d in got if d.status == "expired")
    assert expired_body["error"]["code"] == "TaskExpired"


async def test_expired_running_task_reports_running_then_expired(env):
    url = env.receiver.url("/expiry")
    task_id = await env.create_task(url)
    assert env.claim().id == task_id
    env.services.store.expire_overdue(time.time() + 10 * 86400)
    await env.settled(task_id, events=3)
    assert statuses(env.receiver.deliveries("/expiry")) == ["queued", "running", "expired"]


async def test_a_failed_early_callback_does_not_hold_up_later_ones(env):
    # The queued callback gets one attempt; when it fails the running one still goes, in order.
    url = env.receiver.script("/first-fails", fail_first(1, frozenset({"queued"})))
    task_id = await env.create_task(url)
    env.run_next()
    log = await env.settled(task_id, events=3)
    assert attempts_by_status(log) == {"queued": [(1, 500)], "running": [(1, 200)], "succeeded": [(1, 200)]}


async def test_slow_receiver_times_out_and_the_attempt_is_retried(open_env):
    async with open_env(callback_timeout=1.0) as env:
        url = env.receiver.script("/slow", slow_first(5.0))  # held far past the timeout
        task_id = await env.create_task(url)
        env.run_next()
        log = await env.settled(task_id, events=3)
    succeeded = [e for e in log if e["status"] == "succeeded"]
    assert [(e["attempt"], e["status_code"]) for e in succeeded] == [(1, None), (2, 200)]
    assert succeeded[0]["error"] == "timed out after 1 s"
    assert succeeded[0]["latency_ms"] >= 900
    assert succeeded[1]["error"] is None


async def test_redirect_counts_as_failure_and_is_not_followed(env):
    target = env.receiver.url("/target")
    url = env.receiver.script("/moved", redirect(target))
    task_id = await env.create_task(url)
    env.run_next()
    log = await env.settled(task_id, events=3)
    assert attempts_by_status(log) == {"queued": [(1, 302)], "running": [(1, 302)],
                                       "succeeded": [(n, 302) for n in (1, 2, 3, 4)]}
    assert {e["error"] for e in log} == {"receiver answered 302 (redirects are not followed)"}
    assert env.receiver.deliveries("/target") == []
    assert len(env.receiver.deliveries("/moved")) == 6


@pytest.mark.parametrize("code", [301, 307, 308])
async def test_other_redirects_are_not_followed_either(env, code):
    target = env.receiver.url("/target")
    url = env.receiver.script("/moved", redirect(target, code))
    task_id = await env.create_task(url)
    log = await env.settled(task_id, events=1)
    assert [(e["attempt"], e["status_code"]) for e in log] == [(1, code)]
    assert env.receiver.deliveries("/target") == []


@pytest.mark.parametrize("code", [201, 202, 204, 299])
async def test_any_2xx_counts_as_delivered(env, code):
    url = env.receiver.script("/accepts", always(code))
    task_id = await env.create_task(url)
    env.run_next()
    log = await env.settled(task_id, events=3)
    assert [(e["attempt"], e["status_code"], e["error"]) for e in log] == [(1, code, None)] * 3


async def test_unreachable_receiver_is_logged_as_a_connection_error(env):
    url = env.receiver.url("/x").replace(str(env.receiver.port), str(free_port()))
    task_id = await env.create_task(url)
    log = await env.settled(task_id, events=1)
    assert [(e["attempt"], e["status_code"]) for e in log] == [(1, None)]
    assert log[0]["error"].startswith("ConnectError")


async def test_hanging_receiver_blocks_neither_the_api_nor_rendering(open_env):
    async with open_env(callback_timeout=8.0) as env:
        url = env.receiver.script("/hang", hang())
        fast = env.receiver.url("/fast")
        hung_id = await env.create_task(url)
        await eventually(lambda: env.receiver.deliveries("/hang"), what="the hanging delivery to start")

        # The API answers while the delivery hangs.
        assert (await env.get(hung_id)).json()["status"] == "queued"
        other_id = await env.create_task(fast, prompt="another")
        assert (await env.get(other_id)).json()["status"] == "queued"
        # Rendering goes on: both tasks are claimed and rendered.
        assert sorted([env.run_next(), env.run_next()]) == sorted([hung_id, other_id])
        assert (await env.get(hung_id)).json()["status"] == "succeeded"
        # Other tasks' callbacks are delivered meanwhile...
        await env.settled(other_id, events=3)
        assert statuses(env.receiver.deliveries("/fast")) == ["queued", "running", "succeeded"]
        # ...while the hung task's later callbacks wait for its first, to keep its order.
        assert statuses(env.receiver.deliveries("/hang")) == ["queued"]
        assert env.services.callbacks.log_for(hung_id)[0]["pending"] is True

        env.receiver.released.set()
        log = await env.settled(hung_id, events=3)
        assert statuses(env.receiver.deliveries("/hang")) == ["queued", "running", "succeeded"]
        assert [(e["status"], e["status_code"]) for e in log] == \
            [("queued", 200), ("running", 200), ("succeeded", 200)]


async def test_invalid_stored_url_is_logged_and_does_not_stop_delivery(open_env):
    async with open_env(start_callbacks=False) as env:
        await _invalid_stored_url_is_logged_and_does_not_stop_delivery(env)


async def _invalid_stored_url_is_logged_and_does_not_stop_delivery(env):
    # A URL httpx refuses (a control character) is refused at create now, but one stored before
    # that check may still wait in the queue: the attempt must be logged as failed, and the
    # deliverers must live on to deliver everyone else's callbacks.
    bad_ids = [await env.create_task(env.receiver.url("/bad"), prompt=f"bad {i}")
               for i in range(env.services.callbacks.deliverers)]
    with env.services.engine.begin() as conn:
        conn.execute(update(callback_events).where(callback_events.c.task_id.in_(bad_ids))
                     .values(url=env.receiver.url("/bad\x01")))
    env.services.callbacks.start()
    for task_id in bad_ids:
        log = await env.settled(task_id, events=1)
        assert [(e["attempt"], e["status_code"]) for e in log] == [(1, None)]
        assert log[0]["error"].startswith("InvalidURL")
    assert all(t.is_alive() for t in env.services.callbacks.threads)
    good_id = await env.create_task(env.receiver.url("/good"))
    await env.settled(good_id, events=1)
    assert statuses(env.receiver.deliveries("/good")) == ["queued"]


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


async def test_an_outcome_the_database_could_not_record_is_handed_out_again_once_it_answers(env, monkeypatch):
    """A PostgreSQL restart while a deliverer recorded an attempt left the event claimed for the
    claim timeout (60 s): the fault test of a restart waited a minute for its callbacks. The
    deliverer now hands the event back as soon as the database answers, well within a few seconds."""
    from sqlalchemy.exc import OperationalError

    queue = env.services.callbacks
    assert queue.claim_timeout >= 60
    record = queue._record
    failures = []

    def record_after_a_restart(event, *args, **kwargs):
        if event.status == "succeeded" and not failures:
            failures.append(event.webhook_id)
            raise OperationalError("UPDATE callback_events", {}, Exception("the server closed the connection"))
        return record(event, *args, **kwargs)

    monkeypatch.setattr(queue, "_record", record_after_a_restart)
    url = env.receiver.script("/restart", always(200))
    task_id = await env.create_task(url)
    env.run_next()
    log = await env.settled(task_id, events=3)  # within WAIT_SECONDS (10 s), far below the claim timeout
    got = env.receiver.deliveries("/restart")
    assert statuses(got) == ["queued", "running", "succeeded", "succeeded"]  # posted again, once
    assert {d.webhook_id for d in got[2:]} == set(failures)
    assert [e["status_code"] for e in log if e["status"] == "succeeded"] == [200]
