"""Task lifecycle: listing, deleting, quotas, idempotency, drafts, scheduling, expiry, recovery,
purging and result URLs, with the clock and the workers under the test's control."""

from __future__ import annotations

import re

import pytest

from dailies.service.errors import ApiError
from dailies.spec import limits as L
from tests.service.api.test_api_basics import assert_error
from tests.service.conftest import KEY_A, KEY_B, MODEL_1_0, MODEL_1_5, OWN_TASKS, TASKS, text_body

pytestmark = pytest.mark.anyio


async def make(env, n: int = 1, **fields) -> list[str]:
    ids = []
    for i in range(n):
        response = await env.create(text_body(f"shot {i}", **fields))
        assert response.status_code == 200, response.text
        ids.append(response.json()["id"])
        env.clock.advance(1)
    return ids


# ---------- list ----------


async def test_list_is_newest_first_with_total_and_pages(env):
    ids = await make(env, 5)
    page1 = (await env.list([("page_size", 2)])).json()
    page3 = (await env.list([("page_size", 2), ("page_num", 3)])).json()
    assert page1["total"] == 5 and page3["total"] == 5
    assert [t["id"] for t in page1["items"]] == ids[::-1][:2]
    assert [t["id"] for t in page3["items"]] == [ids[0]]
    assert (await env.list([("page_size", 2), ("page_num", 4)])).json()["items"] == []


async def test_list_window_is_the_last_seven_days_to_the_second(env):
    created_at = env.clock()
    [task_id] = await make(env)
    env.clock.now = created_at  # T equal to the creation second: [T - 7 d, T) excludes it
    assert (await env.list()).json()["total"] == 0
    env.clock.now = created_at + 1
    assert (await env.list()).json()["total"] == 1
    env.clock.now = created_at + L.RECORD_RETENTION_SECONDS
    assert (await env.list()).json()["total"] == 1
    env.clock.now = created_at + L.RECORD_RETENTION_SECONDS + 1
    assert (await env.list()).json()["total"] == 0


async def test_list_filters_status_and_task_ids(env):
    a, b, c = await make(env, 3)
    env.run_next()  # a runs and succeeds
    await env.delete(c)  # c cancelled
    succeeded = (await env.list([("filter.status", "succeeded")])).json()
    assert [t["id"] for t in succeeded["items"]] == [a]
    assert [t["id"] for t in (await env.list([("filter.status", "queued")])).json()["items"]] == [b]
    assert [t["id"] for t in (await env.list([("filter.status", "cancelled")])).json()["items"]] == [c]
    chosen = (await env.list([("filter.task_ids", a), ("filter.task_ids", c)])).json()
    assert sorted(t["id"] for t in chosen["items"]) == sorted([a, c]) and chosen["total"] == 2


async def test_flex_tasks_are_listed_only_under_the_flex_tier(env):
    [default_task] = await make(env, model=MODEL_1_5)
    [flex_task] = await make(env, model=MODEL_1_5, service_tier="flex")
    assert [t["id"] for t in (await env.list()).json()["items"]] == [default_task]
    flex = (await env.list([("filter.service_tier", "flex")])).json()
    assert [t["id"] for t in flex["items"]] == [flex_task]
    assert flex["items"][0]["service_tier"] == "flex"


@pytest.mark.parametrize(("name", "value"), [
    ("page_num", "0"), ("page_num", "501"), ("page_size", "0"), ("page_size", "501"), ("page_size", "ten"),
    ("filter.status", "expired"), ("filter.service_tier", "cheap"),
])
async def test_list_rejects_out_of_range_queries(env, name, value):
    assert_error(await env.list([(name, value)]), 400, "InvalidParameter", name)


async def test_page_size_500_is_allowed(env):
    assert (await env.list([("page_size", "500"), ("page_num", "500")])).status_code == 200


# ---------- delete ----------


async def test_delete_cancels_queued_then_409(env):
    [task_id] = await make(env)
    assert (await env.delete(task_id)).json() == {}
    assert (await env.get(task_id)).json()["status"] == "cancelled"
    assert_error(await env.delete(task_id), 409, "InvalidAction.CancelledTaskDeletion")
    assert env.run_next() is None, "a cancelled task must never run"


async def test_delete_running_is_409(env):
    [task_id] = await make(env)
    env.services.store.claim_next("w1", env.clock())
    assert_error(await env.delete(task_id), 409, "InvalidAction.RunningTaskDeletion", "id")
    assert (await env.get(task_id)).json()["status"] == "running"


async def test_delete_terminal_removes_record_and_files(env):
    [task_id] = await make(env)
    env.run_next()
    assert env.stored(task_id) == {"video.mp4"}
    assert (await env.delete(task_id)).json() == {}
    assert_error(await env.get(task_id), 404, "NotFound.Task")
    assert env.stored(task_id) == set()


async def test_the_dailies_cancel_cancels_what_waits_and_never_deletes(env):
    """`POST /dailies/v1/tasks/{id}/cancel`: the spec's DELETE of a task that ended as it was sent
    deletes its result; this cancel answers 409 for a finished task and keeps it."""
    def cancel(task_id: str, key: str = KEY_A):
        return env.client.post(f"{OWN_TASKS}/{task_id}/cancel", headers={"Authorization": f"Bearer {key}"})

    queued, running, finished = await make(env, 3)
    assert (await cancel(queued)).json() == {"id": queued, "status": "cancelled"}
    assert (await env.get(queued)).json()["status"] == "cancelled"
    assert (await cancel(queued)).status_code == 200  # a retried cancel: done already
    env.services.store.claim_next("w1", env.clock())  # the oldest waiting: `running`
    assert_error(await cancel(running), 409, "InvalidAction.RunningTaskDeletion", "id")
    env.run_next()  # `finished`
    assert (await env.get(finished)).json()["status"] == "succeeded"
    assert_error(await cancel(finished), 409, "InvalidAction.TaskFinished", "id")
    assert (await env.get(finished)).json()["status"] == "succeeded" and env.stored(finished) == {"video.mp4"}
    assert_error(await cancel(finished, key=KEY_B), 404, "NotFound.Task", "id")  # another project's


async def test_cancel_never_races_a_success(env):
    [task_id] = await make(env)
    row = env.services.store.claim_next("w1", env.clock())
    assert env.services.store.cancel("alpha", task_id, env.clock()) is None  # running: not cancellable
    assert env.services.store.succeed(row.id, "w1", env.clock(), "{}", "video.mp4", None) is not None
    assert env.services.store.succeed(row.id, "w1", env.clock(), "{}", "video.mp4", None) is None


# ---------- quota and idempotency ----------


async def test_more_than_120_queued_tasks_is_429(env):
    store = env.services.store
    for _ in range(L.QUEUED_TASKS_PER_PROJECT_MAX):
        assert (await env.create(text_body())).status_code == 200
    assert_error(await env.create(text_body()), 429, "QuotaExceeded")
    assert (await env.create(text_body(), key="key-b")).status_code == 200  # quotas are per project
    store.claim_next("w1", env.clock())  # one leaves the queue
    assert (await env.create(text_body())).status_code == 200


async def test_idempotency_key_replays_and_conflicts(env):
    first = await env.create(text_body("a"), **{"Idempotency-Key": "k-1"})
    again = await env.create(text_body("a"), **{"Idempotency-Key": "k-1"})
    assert first.json()["id"] == again.json()["id"]
    env.clock.advance(1)
    assert (await env.list()).json()["total"] == 1
    assert_error(await env.create(text_body("b"), **{"Idempotency-Key": "k-1"}), 409, "IdempotencyKeyReused")
    other = await env.create(text_body("a"), **{"Idempotency-Key": "k-2"})
    assert other.json()["id"] != first.json()["id"]
    env.clock.advance(L.IDEMPOTENCY_WINDOW_SECONDS + 1)
    later = await env.create(text_body("a"), **{"Idempotency-Key": "k-1"})
    assert later.json()["id"] != first.json()["id"]


async def test_a_key_whose_task_was_deleted_since_is_refused_naming_the_task(env):
    """A create repeated with its key after its task was run and deleted: 409 naming the task (it
    answered 500: the replay found no record)."""
    task_id = (await env.create(text_body("a"), **{"Idempotency-Key": "k-gone"})).json()["id"]
    env.run_next()
    assert (await env.delete(task_id)).status_code == 200
    again = await env.create(text_body("a"), **{"Idempotency-Key": "k-gone"})
    assert_error(again, 409, "IdempotencyKeyReused", "Idempotency-Key")
    assert task_id in again.json()["error"]["message"] and "deleted" in again.json()["error"]["message"]


# ---------- drafts ----------


async def test_draft_then_final(env):
    draft_id = (await env.create(text_body("a lighthouse", model=MODEL_1_5, draft=True, seed=42))).json()["id"]
    final_body = {"model": MODEL_1_5, "content": [{"type": "draft_task", "draft_task": {"id": draft_id}}],
                  "resolution": "1080p", "watermark": True}
    assert_error(await env.create(final_body), 400, "InvalidParameter", "content[0].draft_task.id")  # not done yet
    env.run_next()
    draft = (await env.get(draft_id)).json()
    assert draft["draft"] is True and draft["resolution"] == "480p" and draft["seed"] == 42
    final_id = (await env.create(final_body)).json()["id"]
    env.run_next()
    final = (await env.get(final_id)).json()
    assert final["draft_task_id"] == draft_id and final["draft"] is False
    assert final["resolution"] == "1080p" and final["seed"] == 42 and final["ratio"] == draft["ratio"]
    assert final["usage"]["completion_tokens"] == 1920 * 1080 * 121 // 1024
    assert draft["usage"]["completion_tokens"] == int(864 * 496 * 121 // 1024 * 0.6)


async def test_final_needs_a_succeeded_draft_of_the_same_project(env):
    plain_id = (await env.create(text_body(model=MODEL_1_5))).json()["id"]
    env.run_next()
    ref = {"model": MODEL_1_5, "content": [{"type": "draft_task", "draft_task": {"id": plain_id}}]}
    error = assert_error(await env.create(ref), 400, "InvalidParameter", "content[0].draft_task.id")
    assert "not a draft" in error["message"]
    draft_id = (await env.create(text_body(model=MODEL_1_5, draft=True))).json()["id"]
    env.run_next()
    ref = {"model": MODEL_1_5, "content": [{"type": "draft_task", "draft_task": {"id": draft_id}}]}
    assert_error(await env.create(ref, key="key-b"), 404, "NotFound.Task", "content[0].draft_task.id")
    assert_error(await env.create({**ref, "seed": 3}), 400, "InvalidParameter", "seed")
    assert (await env.create(ref)).status_code == 200


# ---------- scheduling ----------


async def test_default_tier_before_flex_then_priority_within_endpoint_then_age(env):
    flex = (await env.create(text_body(model=MODEL_1_0, service_tier="flex"))).json()["id"]
    env.clock.advance(1)
    old = (await env.create(text_body())).json()["id"]
    env.clock.advance(1)
    other_endpoint = (await env.create(text_body(model=MODEL_1_5))).json()["id"]
    env.clock.advance(1)
    urgent = (await env.create(text_body(priority=9))).json()["id"]
    env.clock.advance(1)
    middle = (await env.create(text_body(priority=4))).json()["id"]
    order = env.run_all()
    # Turns go by the age of the task each endpoint would run next: 1.5's (older than 2.0's urgent
    # one) first; within 2.0 priority 9, 4, then the old 0; flex last.
    assert order == [other_endpoint, urgent, middle, old, flex]


async def test_a_stream_of_priority_tasks_on_one_endpoint_does_not_hold_up_the_others(env):
    """One old task kept an endpoint's turn open (turns went by the oldest task), so fresh priority
    tasks of that endpoint ran ahead of every other endpoint's until those expired."""
    old = (await env.create(text_body())).json()["id"]
    env.clock.advance(1)
    waiting = (await env.create(text_body(model=MODEL_1_5))).json()["id"]
    ran = []
    for _ in range(5):  # a member keeps one priority task queued on 2.0, render after render
        env.clock.advance(1)
        await env.create(text_body(priority=9))
        ran.append(env.run_next())
    assert waiting in ran[:2], ran  # its turn comes once its task is the oldest next task
    assert old not in ran  # 2.0's own priority order is kept: its priority tasks before its old one


# ---------- expiry, recovery, purge ----------


async def test_queued_and_running_tasks_expire(env):
    queued = (await env.create(text_body(execution_expires_after=3600))).json()["id"]
    running = (await env.create(text_body(execution_expires_after=7200))).json()["id"]
    store = env.services.store
    env.clock.advance(10)
    # run the second one: claim order is by age, so claim twice and keep the right one running
    first = store.claim_next("w1", env.clock())
    assert first.id == queued
    store.requeue_stale(env.clock() + 100, 1)  # put it back
    env.clock.advance(3600)
    env.services.workers.sweep()
    assert (await env.get(queued)).json()["status"] == "expired"
    row = store.claim_next("w2", env.clock())
    assert row.id == running
    env.clock.advance(3600)
    env.services.workers.sweep()
    record = (await env.get(running)).json()
    assert record["status"] == "expired" and record["error"]["code"] == "TaskExpired"
    assert store.succeed(running, "w2", env.clock(), "{}", "video.mp4", None) is None
    assert store.heartbeat(running, "w2", env.clock()) is False


async def test_task_of_a_dead_worker_is_requeued_and_its_result_refused(env):
    [task_id] = await make(env)
    store = env.services.store
    store.claim_next("dead", env.clock())
    env.clock.advance(5)
    env.services.workers.sweep()
    assert (await env.get(task_id)).json()["status"] == "running"  # heartbeat still fresh enough
    env.clock.advance(env.services.settings.stale_after)
    env.services.workers.sweep()
    assert (await env.get(task_id)).json()["status"] == "queued"
    assert env.run_next("alive") == task_id
    assert store.succeed(task_id, "dead", env.clock(), "{}", "video.mp4", None) is None
    assert store.get_by_id(task_id).attempts == 2
    assert (await env.get(task_id)).json()["status"] == "succeeded"


def callback_events_of(env, task_id: str) -> list[tuple[str, dict]]:
    """(status, record sent) of each callback event stored for a task, in order."""
    import json

    from sqlalchemy import select

    from dailies.service.db.tables import callback_events

    with env.services.engine.connect() as conn:
        rows = conn.execute(select(callback_events.c.status, callback_events.c.body)
                            .where(callback_events.c.task_id == task_id).order_by(callback_events.c.seq)).all()
    return [(row.status, json.loads(row.body)) for row in rows]


async def test_a_task_that_kills_its_workers_fails_after_the_bound(env):
    [task_id] = await make(env, callback_url="http://127.0.0.1:9/hook")
    store = env.services.store
    stale_after = env.services.settings.stale_after
    for attempt in range(1, L.TASK_ATTEMPTS_MAX + 1):
        row = store.claim_next(f"dies-{attempt}", env.clock())
        assert row.id == task_id and row.attempts == attempt
        env.clock.advance(stale_after + 1)  # the worker died: no heartbeat since the claim
        env.services.workers.sweep()
        expected = "queued" if attempt < L.TASK_ATTEMPTS_MAX else "failed"
        assert (await env.get(task_id)).json()["status"] == expected
    record = (await env.get(task_id)).json()
    assert record["error"]["code"] == "TaskAttemptsExhausted"
    assert f"lost {L.TASK_ATTEMPTS_MAX} times" in record["error"]["message"]
    assert env.run_next() is None  # never run again
    assert store.succeed(task_id, f"dies-{L.TASK_ATTEMPTS_MAX}", env.clock(), "{}", "video.mp4", None) is None
    # The failure is announced like any other: a `failed` callback carrying the record.
    events = callback_events_of(env, task_id)
    assert [status for status, _ in events] == ["queued"] + ["running", "queued"] * (L.TASK_ATTEMPTS_MAX - 1) + [
        "running", "failed"]
    assert events[-1][1]["error"]["code"] == "TaskAttemptsExhausted"


async def test_a_run_lost_fewer_times_than_the_bound_still_succeeds(env):
    [task_id] = await make(env)
    store = env.services.store
    for attempt in range(1, L.TASK_ATTEMPTS_MAX):
        store.claim_next(f"dies-{attempt}", env.clock())
        env.clock.advance(env.services.settings.stale_after + 1)
        env.services.workers.sweep()
    assert env.run_next("survives") == task_id
    assert (await env.get(task_id)).json()["status"] == "succeeded"
    assert store.get_by_id(task_id).attempts == L.TASK_ATTEMPTS_MAX


async def test_a_clean_stop_puts_the_task_back_without_using_an_attempt(env):
    [task_id] = await make(env)
    workers = env.services.workers
    env.generator.check_cancel = True
    row = env.services.store.claim_next("stopping", env.clock())
    workers.stop_event.set()  # a shutdown, seen by the render as a cancellation
    try:
        workers.run_one(row, "stopping")
    finally:
        workers.stop_event.clear()
    back = env.services.store.get_by_id(task_id)
    assert (back.status, back.attempts, back.worker_id) == ("queued", 0, None)
    assert env.run_next("after-restart") == task_id
    assert (await env.get(task_id)).json()["status"] == "succeeded"


async def test_records_and_files_older_than_seven_days_are_purged(env):
    [task_id] = await make(env)
    env.run_next()
    assert env.stored(task_id) == {"video.mp4"}
    env.clock.advance(L.RECORD_RETENTION_SECONDS - 10)
    env.services.workers.sweep()
    assert (await env.get(task_id)).status_code == 200
    env.clock.advance(20)
    env.services.workers.sweep()
    assert (await env.get(task_id)).status_code == 404
    assert env.stored(task_id) == set()


async def test_a_live_session_untouched_for_seven_days_is_purged_with_its_tokens(env):
    [task_id] = await make(env)
    live = env.services.live
    session, _, follow = live.start("tests", "Dailies", [{"task_id": task_id, "label": ""}], "Ana")
    env.clock.advance(L.RECORD_RETENTION_SECONDS - 10)
    env.services.workers.sweep()
    assert live.get(session.id, follow_token=follow).id == session.id
    env.clock.advance(20)
    env.services.workers.sweep()
    with pytest.raises(ApiError):
        live.get(session.id, follow_token=follow)


async def test_a_backlog_is_purged_in_short_batches_and_wholly(env, monkeypatch):
    from dailies.service.tasks import store as store_module

    monkeypatch.setattr(store_module, "PURGE_BATCH", 3)
    old = await make(env, 7)
    env.run_all()
    env.clock.advance(L.RECORD_RETENTION_SECONDS + 1)
    [young] = await make(env)
    transactions = []
    begin = env.services.store.write.begin
    monkeypatch.setattr(env.services.store.write, "begin", lambda: transactions.append(1) or begin())
    purged = env.services.store.purge(env.clock())
    assert sorted(r.id for r in purged) == sorted(old)
    assert len(transactions) == 4  # 3 + 3 + 1 tasks, then the idempotency keys and counters
    for task_id in old:
        assert (await env.get(task_id)).status_code == 404
    assert (await env.get(young)).status_code == 200


async def test_failed_input_fails_the_task_with_the_real_services_error(env):
    [task_id] = await make(env)
    env.generator.fail_inputs.add(task_id)
    env.run_next()
    record = (await env.get(task_id)).json()
    assert record["status"] == "failed"
    assert record["error"]["code"] == "InvalidParameter"
    assert "content[1].image_url" in record["error"]["message"]
    assert "resource download failed" in record["error"]["message"]
    assert "content" not in record and "usage" not in record


# ---------- records and result URLs ----------


async def test_record_says_what_was_used(env):
    task_id = (await env.create(text_body(resolution="1080p", ratio="9:16", duration=8, return_last_frame=True,
                                          priority=3, tools=[{"type": "web_search"}],
                                          safety_identifier="u1"))).json()["id"]
    queued = (await env.get(task_id)).json()
    assert queued["status"] == "queued" and "content" not in queued and queued["error"] is None
    env.run_next()
    record = (await env.get(task_id)).json()
    assert record["status"] == "succeeded"
    assert {k: record[k] for k in ("resolution", "ratio", "duration", "framespersecond", "generate_audio",
                                   "priority", "safety_identifier", "service_tier", "draft",
                                   "execution_expires_after")} == {
        "resolution": "1080p", "ratio": "9:16", "duration": 8, "framespersecond": 24, "generate_audio": True,
        "priority": 3, "safety_identifier": "u1", "service_tier": "default", "draft": False,
        "execution_expires_after": 172800}
    assert "frames" not in record
    assert record["usage"] == {"completion_tokens": 1080 * 1920 * 193 // 1024,
                               "total_tokens": 1080 * 1920 * 193 // 1024, "tool_usage": {"web_search": 0}}
    assert set(record["content"]) == {"video_url", "last_frame_url"}


async def test_frames_replace_duration_in_the_record(env):
    task_id = (await env.create(text_body(model=MODEL_1_0, frames=49, duration=5))).json()["id"]
    env.run_next()
    record = (await env.get(task_id)).json()
    assert record["frames"] == 49 and "duration" not in record
    assert record["generate_audio"] is False


async def test_last_frame_url_only_when_asked(env):
    [task_id] = await make(env)
    env.run_next()
    assert set((await env.get(task_id)).json()["content"]) == {"video_url"}


def tampered(url: str) -> str:
    """The URL with the last digit of its signature changed (both kinds of URL end with it)."""
    return url[:-1] + ("1" if url[-1] == "0" else "0")


def longer(url: str) -> str:
    """The URL claiming a later expiry (local `expires=`, presigned `X-Amz-Expires=`)."""
    return re.sub("(?i)(expires=)", r"\g<1>1", url, count=1)


def assert_refused(env, response, *words: str) -> None:
    """403 from whoever serves results: the service (its error shape) or the bucket (S3's XML)."""
    assert response.status_code == 403, response.text
    if not env.backend.team:
        assert_error(response, 403, "AccessDenied")
    for word in words:
        assert word in response.text


async def test_result_urls_are_signed_and_die_after_24_hours(env):
    now = env.clock()
    env.clock.now = now - L.RESULT_URL_VALIDITY_SECONDS - 60  # a task that succeeded yesterday
    [old_task] = await make(env)
    env.run_next()
    env.clock.now = now
    [task_id] = await make(env, return_last_frame=True)
    env.run_next()
    content = (await env.get(task_id)).json()["content"]
    video = await env.fetch(content["video_url"])
    assert video.status_code == 200 and video.headers["content-type"] == "video/mp4"
    assert (await env.fetch(content["last_frame_url"])).headers["content-type"] == "image/png"
    assert_refused(env, await env.fetch(tampered(content["video_url"])))
    assert_refused(env, await env.fetch(longer(content["video_url"])))
    old_url = (await env.get(old_task)).json()["content"]["video_url"]
    assert_refused(env, await env.fetch(old_url), "expired")


async def test_range_requests_are_served_for_browser_playback(env):
    [task_id] = await make(env)
    env.run_next()
    url = (await env.get(task_id)).json()["content"]["video_url"]
    partial = await env.fetch(url, headers={"Range": "bytes=0-9"})
    assert partial.status_code == 206 and len(partial.content) == 10


async def test_openapi_documents_the_real_inputs(env):
    doc = (await env.client.get("/openapi.json")).json()
    create = doc["paths"][TASKS]["post"]
    assert create["requestBody"]["content"]["application/json"]["schema"]["$ref"].endswith("CreateTaskRequest")
    schema = doc["components"]["schemas"]["CreateTaskRequest"]
    assert schema["additionalProperties"] is False and "model" in schema["required"]
    params = {p["name"]: p for p in doc["paths"][TASKS]["get"]["parameters"]}
    assert params["page_size"]["schema"]["maximum"] == 500
    assert "expired" not in params["filter.status"]["schema"]["enum"]
    assert KEY_A not in str(doc)


async def test_own_result_urls_are_read_from_storage_for_chained_shots(env, tmp_path):
    from dailies.generator.inputs import InputError

    [task_id] = await make(env, return_last_frame=True)
    env.run_next()
    content = (await env.get(task_id)).json()["content"]
    resolver = env.services.workers.inputs
    video = (await env.fetch(content["video_url"])).content
    last_frame = (await env.fetch(content["last_frame_url"])).content
    assert resolver.read_bytes(content["video_url"], "content[1].video_url") == video
    assert resolver.fetch(content["last_frame_url"], "content[1].image_url", tmp_path).read_bytes() == last_frame
    # Not ours (bad signature): downloaded like any URL, and loopback is refused by default.
    with pytest.raises(InputError, match="content\\[1\\].video_url"):
        resolver.read_bytes(tampered(content["video_url"]), "content[1].video_url")
    env.clock.advance(L.RESULT_URL_VALIDITY_SECONDS + 1)
    with pytest.raises(InputError, match="expired"):
        resolver.read_bytes(content["video_url"], "content[1].video_url")
