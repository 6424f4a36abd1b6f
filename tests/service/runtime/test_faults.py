"""Faults inside one process, on each backend: a storage that stops answering, a database write
that fails, a slot whose outcome cannot be recorded. What a task goes through, read from its record;
what the process reports, read from its metrics and readiness. (The same with real servers killed
and restarted: tests/team/test_faults.py.)"""

from __future__ import annotations

import threading
from pathlib import Path

import pytest
from botocore.exceptions import ClientError, EndpointConnectionError
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy.exc import OperationalError

from dailies.service.runtime.faults import RESULT_STORAGE_REJECTED, Dependency
from dailies.spec.statuses import TaskStatus
from tests.service.conftest import text_body
from tests.support.waiting import wait_until

pytestmark = pytest.mark.anyio


def bucket_down() -> EndpointConnectionError:
    return EndpointConnectionError(endpoint_url="http://bucket.invalid")


def refused(code: str, status: int) -> ClientError:
    return ClientError({"Error": {"Code": code, "Message": code},
                        "ResponseMetadata": {"HTTPStatusCode": status}}, "PutObject")


class FlakyStorage:
    """The service's storage, with its puts (and probes) failing while `down` is set, or refusing
    with `refusal` for good."""

    def __init__(self, storage, failures_left: int = 0, refusal: Exception | None = None) -> None:
        self.storage = storage
        self.failures_left = failures_left
        self.refusal = refusal
        self.puts = 0
        self.failed_puts = 0

    def put(self, task_id: str, name: str, source: Path) -> None:
        self.puts += 1
        if self.refusal is not None:
            self.failed_puts += 1
            raise self.refusal
        if self.failures_left > 0:
            self.failures_left -= 1
            self.failed_puts += 1
            raise bucket_down()
        self.storage.put(task_id, name, source)

    def probe(self) -> None:
        if self.failures_left > 0:
            raise bucket_down()
        self.storage.probe()

    def __getattr__(self, name):
        return getattr(self.storage, name)


def metric(services, name: str, **labels) -> float:
    for family in text_string_to_metric_families(services.metrics.exposition().decode()):
        for sample in family.samples:
            if sample.name == name and all(sample.labels.get(k) == v for k, v in labels.items()):
                return sample.value
    raise AssertionError(f"no sample {name} {labels}")


def use_storage(env, storage) -> None:
    env.services.workers.storage = storage
    env.services.health[Dependency.STORAGE].probe = storage.probe


async def test_a_result_the_storage_cannot_take_yet_is_kept_and_uploaded_when_it_answers(env):
    task_id = (await env.create(text_body())).json()["id"]
    flaky = FlakyStorage(env.services.storage, failures_left=3)
    use_storage(env, flaky)
    assert env.run_next() == task_id
    record = (await env.get(task_id)).json()
    assert record["status"] == "succeeded", record
    assert flaky.failed_puts == 3 and env.stored(task_id) == {"video.mp4"}
    assert env.services.store.get_by_id(task_id).attempts == 1  # rendered once, not again
    assert metric(env.services, "dailies_dependency_errors_total", dependency="storage") == 3
    assert env.services.health[Dependency.STORAGE].up  # the successful upload closed the breaker
    assert metric(env.services, "dailies_dependency_up", dependency="storage") == 1


async def test_a_file_the_storage_refuses_for_good_fails_the_task_with_a_precise_code(env):
    task_id = (await env.create(text_body())).json()["id"]
    use_storage(env, FlakyStorage(env.services.storage, refusal=refused("EntityTooLarge", 400)))
    env.run_next()
    record = (await env.get(task_id)).json()
    assert record["status"] == "failed"
    assert record["error"]["code"] == RESULT_STORAGE_REJECTED
    assert "EntityTooLarge" in record["error"]["message"]


async def test_a_refusal_of_every_request_is_an_outage_not_a_failure(env):
    """AccessDenied while the bucket itself refuses the probe too (credentials being rotated): the
    upload waits; it never fails the task."""
    task_id = (await env.create(text_body())).json()["id"]
    flaky = FlakyStorage(env.services.storage, refusal=refused("AccessDenied", 403))
    use_storage(env, flaky)
    real_put = flaky.put

    def put(task_id: str, name: str, source: Path) -> None:
        if flaky.failed_puts == 3:
            flaky.refusal = None  # the operator fixed the credentials between two attempts
        real_put(task_id, name, source)

    def probe() -> None:
        if flaky.refusal is not None:
            raise refused("AccessDenied", 403)

    flaky.put, flaky.probe = put, probe
    env.services.health[Dependency.STORAGE].probe = probe
    env.run_next()
    assert (await env.get(task_id)).json()["status"] == "succeeded"
    assert flaky.failed_puts == 3


async def test_an_upload_waiting_for_the_storage_gives_up_at_the_deadline_and_the_task_expires(env):
    task_id = (await env.create(text_body(execution_expires_after=3600))).json()["id"]
    flaky = FlakyStorage(env.services.storage, failures_left=10**9)
    use_storage(env, flaky)
    row = env.services.store.claim_next("w1", env.clock())
    done = threading.Event()
    thread = threading.Thread(target=lambda: (env.services.workers.run_one(row, "w1"), done.set()))
    thread.start()
    wait_until(lambda: flaky.failed_puts >= 2, "the upload to be retried")
    assert not done.is_set()
    assert env.services.store.get_by_id(task_id).status == TaskStatus.RUNNING  # waiting, not failed
    env.clock.advance(3600)
    wait_until(done.is_set, "the retries to stop at the deadline", timeout=30)
    env.services.workers.sweep()
    assert (await env.get(task_id)).json()["status"] == "expired"


async def test_slots_pause_claiming_while_a_dependency_is_down_and_resume_by_themselves(env):
    services = env.services
    health = services.health
    storage_up = threading.Event()

    def probe() -> None:
        if not storage_up.is_set():
            raise bucket_down()

    health[Dependency.STORAGE].probe = probe
    services.settings.workers = 1
    health.start()
    health.failed(Dependency.STORAGE, bucket_down())
    assert metric(services, "dailies_dependency_up", dependency="storage") == 0
    assert metric(services, "dailies_claims_paused") == 1
    services.workers.start()
    try:
        ids = [(await env.create(text_body(f"shot {n}"))).json()["id"] for n in range(2)]
        # While the breaker is open, the queue stays as it is: no claim, no render, no failure.
        for _ in range(3):
            assert not health.wait_all_up(0.2)
        assert all(services.store.get_by_id(t).status == TaskStatus.QUEUED for t in ids)
        assert env.generator.rendered == []
        storage_up.set()  # the bucket answers again: the watch notices, slots resume
        wait_until(lambda: all(services.store.get_by_id(t).status == TaskStatus.SUCCEEDED for t in ids),
                   "the queue to be worked off after the storage came back", timeout=60)
        assert metric(services, "dailies_dependency_up", dependency="storage") == 1
        assert metric(services, "dailies_claims_paused") == 0
    finally:
        services.workers.stop()
        health.stop()


class FailingStore:
    """The task store of a service, with `fail` raising as a dead connection (or a bug) would."""

    def __init__(self, store, error: Exception, times: int) -> None:
        self.store = store
        self.error = error
        self.times = times

    def fail(self, *args, **kwargs):
        if self.times > 0:
            self.times -= 1
            raise self.error
        return self.store.fail(*args, **kwargs)

    def __getattr__(self, name):
        return getattr(self.store, name)


async def test_a_slot_whose_store_fail_raises_keeps_running(env):
    services = env.services
    doomed, fine = [(await env.create(text_body(f"shot {n}"))).json()["id"] for n in range(2)]
    env.generator.fail_inputs.add(doomed)
    services.workers.store = FailingStore(services.store, RuntimeError("a bug in recording a failure"), times=1)
    services.settings.workers = 1
    services.workers.start()
    try:
        wait_until(lambda: services.store.get_by_id(fine).status == TaskStatus.SUCCEEDED,
                   "the slot to go on to the next task after its store.fail raised")
        assert all(t.is_alive() for t in services.workers.threads)
        # The doomed task was not lost either: still running under the slot's id, it goes back to the
        # queue when that id stops beating (and the heartbeats stopped with its render).
        assert services.store.get_by_id(doomed).status == TaskStatus.RUNNING
    finally:
        services.workers.stop()


async def test_a_failure_the_database_could_not_record_is_retried_not_dropped(env):
    services = env.services
    task_id = (await env.create(text_body())).json()["id"]
    env.generator.fail_inputs.add(task_id)
    dead_connection = OperationalError("UPDATE tasks", {}, Exception("server closed the connection unexpectedly"))
    services.workers.store = FailingStore(services.store, dead_connection, times=2)
    env.run_next()
    record = (await env.get(task_id)).json()
    assert record["status"] == "failed" and record["error"]["code"] == "InvalidParameter"
    assert metric(services, "dailies_dependency_errors_total", dependency="database") == 2


class SlowGenerator:
    """Renders with the fake generator once `release` is set, noticing cancellation meanwhile."""

    def __init__(self, inner) -> None:
        self.inner = inner
        self.started = threading.Event()
        self.release = threading.Event()

    def render(self, job, inputs, progress, is_cancelled):
        from dailies.generator.protocol import RenderCancelled

        self.started.set()
        while not self.release.wait(0.02):
            if is_cancelled():
                raise RenderCancelled()
        return self.inner.render(job, inputs, progress, is_cancelled)


@pytest.mark.parametrize("finishes_in_grace", [True, False])
async def test_a_graceful_stop_lets_renders_finish_or_puts_them_back(env, finishes_in_grace):
    services = env.services
    slow = SlowGenerator(env.generator)
    services.workers.generator = slow
    task_id, waiting = [(await env.create(text_body(f"shot {n}"))).json()["id"] for n in range(2)]
    services.settings.workers = 1
    services.workers.start()
    wait_until(slow.started.is_set, "the render to start")
    if finishes_in_grace:
        threading.Timer(0.3, slow.release.set).start()  # the render ends while the stop waits
        services.workers.stop(grace=120)
    else:
        services.workers.stop(grace=0)
    row = services.store.get_by_id(task_id)
    if finishes_in_grace:
        assert row.status == TaskStatus.SUCCEEDED
    else:
        assert (row.status, row.attempts, row.worker_id) == (TaskStatus.QUEUED, 0, None)
    # The stop claimed nothing new, and failed nothing.
    assert services.store.get_by_id(waiting).status == TaskStatus.QUEUED


class CancelFirst:
    """A generator that looks for a cancellation before anything else."""

    def __init__(self, inner) -> None:
        self.inner = inner

    def render(self, job, inputs, progress, is_cancelled):
        from dailies.generator.protocol import RenderCancelled

        if is_cancelled():
            raise RenderCancelled()
        return self.inner.render(job, inputs, progress, is_cancelled)


class GatedClaims:
    """The store, with each claim held (the task already running in the database) until `go` is set."""

    def __init__(self, store) -> None:
        self.store = store
        self.claimed = threading.Event()
        self.go = threading.Event()

    def __getattr__(self, name):
        return getattr(self.store, name)

    def claim_next(self, *args, **kwargs):
        row = self.store.claim_next(*args, **kwargs)
        if row is not None:
            self.claimed.set()
            self.go.wait(60)
        return row


async def test_a_graceful_stop_waits_for_a_task_claimed_but_not_yet_rendering(env):
    """A stop between a claim and the render's start (the task already `running`) lets it finish."""
    services = env.services
    services.workers.generator = CancelFirst(env.generator)  # as a real renderer, it honours a cancellation
    gated = GatedClaims(services.store)
    services.workers.store = gated
    task_id = (await env.create(text_body())).json()["id"]
    services.settings.workers = 1
    services.workers.start()
    wait_until(gated.claimed.is_set, "the claim")
    assert services.store.get_by_id(task_id).status == TaskStatus.RUNNING
    stopping = threading.Thread(target=services.workers.stop, kwargs={"grace": 120})
    stopping.start()
    wait_until(services.workers.draining.is_set, "the stop to begin")
    gated.go.set()
    stopping.join(60)
    assert not stopping.is_alive()
    assert services.store.get_by_id(task_id).status == TaskStatus.SUCCEEDED


async def test_readiness_names_the_dependency_that_does_not_answer(env):
    ready = await env.client.get("/readyz")
    assert ready.status_code == 200 and ready.json()["status"] == "ready"
    env.services.health[Dependency.STORAGE].probe = lambda: (_ for _ in ()).throw(bucket_down())
    down = await env.client.get("/readyz")
    assert down.status_code == 503
    error = down.json()["error"]
    assert error["param"] == "storage" and error["code"] == "ServiceUnavailable"
    assert "storage does not answer" in error["message"] and "EndpointConnectionError" in error["message"]
    assert (await env.client.get("/healthz")).status_code == 200  # alive all the same


async def test_metrics_parse_and_the_queue_depth_is_the_number_of_queued_tasks(env):
    ids = [(await env.create(text_body(f"shot {n}"))).json()["id"] for n in range(5)]
    claimed = env.services.store.claim_next("w1", env.clock())
    flex = (await env.create(text_body(model="doubao-seedance-1-5-pro-251215", service_tier="flex"))).json()["id"]
    response = await env.client.get("/metrics")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/plain")
    families = {f.name: f for f in text_string_to_metric_families(response.text)}
    depth = {(s.labels["tier"], s.labels["status"]): s.value for s in families["dailies_queue_depth"].samples}
    assert depth == {("default", "queued"): 4, ("default", "running"): 1, ("flex", "queued"): 1,
                     ("flex", "running"): 0}
    assert families["dailies_running_tasks"].samples[0].value == 1
    env.services.workers.run_one(claimed, "w1")
    env.run_all()
    assert {env.services.store.get_by_id(t).status for t in [*ids, flex]} == {TaskStatus.SUCCEEDED}
    assert metric(env.services, "dailies_task_outcomes_total", status="succeeded", code="") == 6
    assert metric(env.services, "dailies_render_seconds_count") == 6
    assert metric(env.services, "dailies_queue_depth", tier="default", status="queued") == 0


async def test_a_capped_claim_counts_one_model_once_whichever_id_family_names_it(env):
    """A gateway's cap on tasks running upstream: a model's Volcengine and BytePlus ids are one model
    to the upstream, so they share the cap; another model has its own."""
    volcengine = (await env.create(text_body("one", model="doubao-seedance-2-0-260128"))).json()["id"]
    byteplus = (await env.create(text_body("two", model="dreamina-seedance-2-0-260128"))).json()["id"]
    other = (await env.create(text_body("three", model="doubao-seedance-1-0-pro-250528"))).json()["id"]
    store = env.services.store
    assert store.claim_next("w1", env.clock(), running_cap=1).id == volcengine
    assert store.claim_next("w2", env.clock(), running_cap=1).id == other  # the BytePlus twin waits
    assert store.claim_next("w3", env.clock(), running_cap=1) is None
    assert store.get_by_id(byteplus).status == TaskStatus.QUEUED


async def test_a_postponed_render_goes_back_to_the_queue_with_its_state(env):
    from dailies.generator.protocol import RenderPostponed

    task_id = (await env.create(text_body())).json()["id"]

    class Postponing:
        def render(self, job, inputs, progress, is_cancelled):
            job.checkpoint({"upstream_id": "cgt-up-7"})
            raise RenderPostponed("the result could not be downloaded yet")

    env.services.workers.generator = Postponing()
    env.run_next()
    row = env.services.store.get_by_id(task_id)
    assert (row.status, row.attempts, row.error_code) == (TaskStatus.QUEUED, 0, None)
    assert row.generator_state == '{"upstream_id": "cgt-up-7"}'  # the next run continues from it


async def test_a_handed_over_task_that_expires_here_is_cancelled_upstream_too(env):
    task_id = (await env.create(text_body(execution_expires_after=3600))).json()["id"]
    cancelled = []

    class Gateway:
        def render(self, job, inputs, progress, is_cancelled):  # pragma: no cover - not rendered here
            raise AssertionError

        def cancel_queued(self, state):
            cancelled.append(state.to_dict())
            return True

        def bills(self, state, ended_at):  # the upstream still had it queued: cancelled there, so not billed
            return not self.cancel_queued(state)

    env.services.workers.gateway = Gateway()
    store = env.services.store
    assert store.claim_next("w1", env.clock()).id == task_id
    assert store.save_generator_state(task_id, "w1", '{"upstream_id": "cgt-up-x", "key": "main"}')
    env.clock.advance(3601)
    env.services.workers.sweep()
    assert store.get_by_id(task_id).status == TaskStatus.EXPIRED
    # The upstream state, with when the task ended here (the sweep gives bills() that since a96bf4c).
    assert [{k: v for k, v in state.items() if k != "ended_at"} for state in cancelled] == [
        {"upstream_id": "cgt-up-x", "key": "main"}]


async def test_a_capped_claim_holds_the_online_tier_only(env):
    """The upstream's tasks-at-once limit is the online (default) tier's: flex tasks, which may wait
    upstream for hours, neither count against it nor are held by it (two flex tasks handed over used
    to hold every default task of that model)."""
    model = "doubao-seedance-1-0-pro-250528"  # a model that offers flex
    flex = [(await env.create(text_body(f"flex {n}", model=model, service_tier="flex"))).json()["id"]
            for n in range(3)]
    store = env.services.store
    assert [store.claim_next(f"w{n}", env.clock(), running_cap=1).id for n in range(2)] == flex[:2]
    env.clock.advance(1)
    online = [(await env.create(text_body(f"online {n}", model=model))).json()["id"] for n in range(2)]
    assert store.claim_next("w3", env.clock(), running_cap=1).id == online[0]  # the default tier first
    assert store.claim_next("w4", env.clock(), running_cap=1).id == flex[2]  # flex is never held
    assert store.claim_next("w5", env.clock(), running_cap=1) is None  # the online cap: one at a time
    assert store.get_by_id(online[1]).status == TaskStatus.QUEUED


async def test_an_outage_is_answered_503_and_not_raised_again_for_the_server_to_log(env, monkeypatch):
    """The catch-all handler answered 503, then Starlette raised the error again, and uvicorn logged
    every 503 of an outage as "Exception in ASGI application" with its traceback. The test client
    raises what the app raises: here, an answer."""
    dead = OperationalError("SELECT", {}, Exception("server closed the connection unexpectedly"))
    monkeypatch.setattr(env.services.tasks, "list", lambda *a, **k: (_ for _ in ()).throw(dead))
    response = await env.list()
    assert response.status_code == 503 and response.headers["Retry-After"] == "2"
    assert response.json()["error"]["param"] == "database"


async def test_a_failed_readiness_probe_is_what_the_metrics_say_and_no_client_error(env):
    """/readyz said the bucket was down while dailies_dependency_up said up and no storage error was
    counted; and every probe's 503 was counted as an error answer to a client."""
    services = env.services
    answers_before = metric(services, "dailies_error_answers_total", status="503", code="ServiceUnavailable") \
        if "ServiceUnavailable" in services.metrics.exposition().decode() else 0.0
    services.health[Dependency.STORAGE].probe = lambda: (_ for _ in ()).throw(bucket_down())
    assert (await env.client.get("/readyz")).status_code == 503
    assert metric(services, "dailies_dependency_up", dependency="storage") == 0
    assert metric(services, "dailies_dependency_errors_total", dependency="storage") >= 1
    answers_after = metric(services, "dailies_error_answers_total", status="503", code="ServiceUnavailable") \
        if "ServiceUnavailable" in services.metrics.exposition().decode() else 0.0
    assert answers_after == answers_before


async def test_a_delete_asks_the_bucket_briefly_and_leaves_what_it_cannot_delete_to_the_sweep(env):
    """A DELETE waited for the bucket with the transfer client (60 s reads, retried): one took a minute
    against a bucket that took connections and never answered, forty held every request of the node.
    It asks with the probe's short timeouts; what fails is remembered, counted, and swept later."""
    from sqlalchemy import select

    from dailies.service.storage.deletions import files_to_delete

    task_id = (await env.create(text_body())).json()["id"]
    env.run_next()
    asked = []

    class Frozen:
        def __init__(self, storage):
            self.storage = storage

        def delete(self, task_ids, quick=False):
            asked.append(quick)
            raise bucket_down()

        def __getattr__(self, name):
            return getattr(self.storage, name)

    env.services.tasks.storage = Frozen(env.services.tasks.storage)
    assert (await env.delete(task_id)).status_code == 200
    assert asked == [True]
    with env.services.engine.connect() as conn:
        assert list(conn.execute(select(files_to_delete.c.task_id)).scalars()) == [task_id]
    assert metric(env.services, "dailies_dependency_errors_total", dependency="storage") >= 1


async def test_liveness_answers_while_every_request_thread_is_taken(env):
    """/healthz ran in the thread pool, so requests held there by a dependency that does not answer
    made the liveness probe fail, and an orchestrator restart a live process."""
    import anyio
    import anyio.to_thread

    limiter = anyio.to_thread.current_default_thread_limiter()
    total = limiter.total_tokens
    limiter.total_tokens = 1
    held, release = threading.Event(), threading.Event()

    def hold() -> None:  # a request's work waiting on a dependency that does not answer
        held.set()
        release.wait(60)

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(anyio.to_thread.run_sync, hold)  # the pool's one thread, taken
            await anyio.to_thread.run_sync(held.wait, 30, limiter=anyio.CapacityLimiter(1))
            with anyio.fail_after(30):
                assert (await env.client.get("/healthz")).status_code == 200
            release.set()
    finally:
        release.set()
        limiter.total_tokens = total


async def test_an_upload_the_bucket_never_answers_pauses_claims_before_it_times_out(env, monkeypatch):
    """A bucket that takes connections and never answers was noticed only when an upload's 60 s reads
    (retried) gave up, about a minute later, while every slot went on claiming tasks it could not
    store. The bucket is probed beside an upload that takes long; its failure opens the breaker."""
    from dailies.service.node import slots as workers_module

    monkeypatch.setattr(workers_module, "UPLOAD_PROBE_AFTER_S", 0.2, raising=False)
    task_id = (await env.create(text_body())).json()["id"]
    release = threading.Event()

    class Frozen:
        def __init__(self, storage):
            self.storage = storage

        def put(self, task_id, name, source):
            release.wait(60)  # the upload hangs until the bucket "answers"
            self.storage.put(task_id, name, source)

        def probe(self):
            if not release.is_set():
                raise bucket_down()
            self.storage.probe()

        def __getattr__(self, name):
            return getattr(self.storage, name)

    use_storage(env, Frozen(env.services.workers.storage))
    slot = threading.Thread(target=env.run_next)
    slot.start()
    try:
        wait_until(lambda: not env.services.health[Dependency.STORAGE].up, "the breaker to open during the upload",
                   timeout=30)
        assert metric(env.services, "dailies_dependency_up", dependency="storage") == 0
    finally:
        release.set()
        slot.join(60)
    assert (await env.get(task_id)).json()["status"] == "succeeded"
