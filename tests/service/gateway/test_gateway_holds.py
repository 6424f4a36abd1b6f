"""Money of a gateway's task that fails or expires here while the upstream may still bill it, on each
backend, against a scripted upstream: held, then released when the upstream ended it unbilled or it
is cancelled there, its estimate spent when the upstream ran it or its create was never answered.
Before, each of these was released at once: the upstream billed the team for what the ledger said
was never spent, and a member's budget let more through than the team paid for."""

from __future__ import annotations

import json
import threading
import time
from functools import partial

import httpx
import pytest
from sqlalchemy import select

from dailies.service.api.app import create_app
from dailies.service.billing.budgets import UNANSWERED_CREATE_S
from dailies.service.callers import Caller
from dailies.service.db.tables import ledger
from dailies.service.gateway.forwarding import UpstreamGenerator, UpstreamKey
from dailies.service.settings import Settings
from tests.service.conftest import FakeClock
from tests.service.gateway.test_upstream import tiny_mp4

BASE = "http://upstream.test/api/v3"
TASKS = "/api/v3/contents/generations/tasks"
BODY = {"model": "doubao-seedance-1-0-pro-250528", "resolution": "480p", "duration": 2,
        "execution_expires_after": 3600, "content": [{"type": "text", "text": "a held shot"}]}


class ScriptedUpstream:
    """One upstream task, `cgt-up-1`: what its create answers (or raises), the status a GET reads, and
    a DELETE that cancels it while it is queued. A create may be held until the test lets it answer."""

    def __init__(self, status: str = "queued", create: object = "created") -> None:
        self.status = status
        self.create = create
        self.calls: list[tuple[str, str]] = []
        self.create_arrived = threading.Event()
        self.answer_create = threading.Event()
        self.answer_create.set()
        self.video = tiny_mp4()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.calls.append((request.method, request.url.path))
        if request.method == "POST":
            self.create_arrived.set()
            self.answer_create.wait(30)
            if isinstance(self.create, Exception):
                raise self.create
            return httpx.Response(200, json={"id": "cgt-up-1"})
        if request.method == "DELETE":
            if self.status == "queued":
                self.status = "cancelled"
            return httpx.Response(200, json={})
        if request.url.path.endswith("/video.mp4"):
            return httpx.Response(200, content=self.video)
        record = {"id": "cgt-up-1", "status": self.status}
        if self.status == "failed":
            record["error"] = {"code": "OutputVideoSensitiveContentDetected", "message": "refused"}
        if request.url.path.endswith("/tasks"):
            return httpx.Response(200, json={"total": 1, "items": [record]})
        return httpx.Response(200, json=record)

    @property
    def deleted(self) -> bool:
        return any(method == "DELETE" for method, _ in self.calls)


@pytest.fixture
def gateway(tmp_path, backend):
    """(make, clock): make(upstream) -> the gateway's services, no background threads."""
    clock = FakeClock(float(int(time.time())))
    made = []

    def make(upstream: ScriptedUpstream):
        generator = partial(UpstreamGenerator, BASE, [UpstreamKey("main", "k")],
                            transport=httpx.MockTransport(upstream), sleep=lambda s: time.sleep(0.001),
                            poll_first=0.0, poll_max=0.0, list_interval=0.0)
        settings = Settings(data_dir=tmp_path, api_keys={"member": "studio"}, workers=0, clock=clock,
                            log_requests=False, upstream_url=BASE, upstream_keys=[UpstreamKey("main", "k")],
                            **backend.settings())
        services = create_app(settings, gateway=lambda hooks: generator(hooks=hooks),
                              start_background=False).state.services
        made.append(services)
        return services

    yield make, clock
    for services in made:
        services.stop()


def ledger_of(services, task_id: str) -> str:
    with services.engine.connect() as conn:
        return conn.execute(select(ledger.c.state).where(ledger.c.task_id == task_id)).scalar_one()


def create_and_run(services, clock) -> str:
    task_id = services.tasks.create(Caller("studio", "member"), dict(BODY)).id
    services.workers.run_one(services.store.claim_next("w1", clock()), "w1")
    return task_id


@pytest.mark.parametrize(("upstream_status", "expected"), [("queued", "released"), ("running", "settled")])
def test_a_task_that_expires_while_its_create_is_answered_keeps_the_upstream_task_to_cancel_or_count(
        gateway, upstream_status, expected):
    make, clock = gateway
    upstream = ScriptedUpstream(upstream_status)
    upstream.answer_create.clear()
    services = make(upstream)
    task_id = services.tasks.create(Caller("studio", "member"), dict(BODY)).id
    render = threading.Thread(target=services.workers.run_one, args=(services.store.claim_next("w1", clock()), "w1"))
    render.start()
    try:
        assert upstream.create_arrived.wait(30)
        clock.advance(3601)  # the member's deadline passes while the create is on its way
        services.workers.sweep()
        assert services.store.get_by_id(task_id).status == "expired"
        assert ledger_of(services, task_id) == "reserved"  # the create may have arrived: held
    finally:
        upstream.answer_create.set()
        render.join(30)
    state = json.loads(services.store.get_by_id(task_id).generator_state)
    assert state["upstream_id"] == "cgt-up-1"  # the upstream's answer is kept with the ended task
    services.workers.sweep()
    assert ledger_of(services, task_id) == expected
    assert upstream.deleted is (upstream_status == "queued")  # cancelled there while it still could be


def test_a_create_whose_answer_was_lost_holds_its_cost_then_counts_it(gateway):
    make, clock = gateway
    services = make(ScriptedUpstream(create=httpx.ReadTimeout("no answer")))
    task_id = create_and_run(services, clock)
    assert services.store.get_by_id(task_id).error_code == "UpstreamOutcomeUnknown"
    services.workers.sweep()
    assert ledger_of(services, task_id) == "reserved"  # its id may still be learned
    clock.advance(UNANSWERED_CREATE_S)
    services.workers.sweep()
    assert ledger_of(services, task_id) == "settled"


def test_a_task_the_upstream_failed_is_released_at_once(gateway):
    make, clock = gateway
    services = make(ScriptedUpstream("failed"))
    task_id = create_and_run(services, clock)
    row = services.store.get_by_id(task_id)
    assert (row.status, row.error_code) == ("failed", "OutputVideoSensitiveContentDetected")
    assert ledger_of(services, task_id) == "released"


@pytest.mark.parametrize(("upstream_status", "expected"), [
    ("running", "settled"), ("succeeded", "settled"), ("queued", "released"), ("failed", "released")])
def test_a_task_failed_here_while_handed_over_is_settled_by_what_the_upstream_says(
        gateway, upstream_status, expected):
    """A worker lost three times while it followed the upstream task (TaskAttemptsExhausted): the
    upstream still has the task; the sweep asks it."""
    make, clock = gateway
    upstream = ScriptedUpstream(upstream_status)
    services = make(upstream)
    task_id = services.tasks.create(Caller("studio", "member"), dict(BODY)).id
    services.store.claim_next("w1", clock())
    assert services.store.save_generator_state(task_id, "w1", json.dumps(
        {"phase": "running", "key": "main", "upstream_id": "cgt-up-1"}))
    services.store.fail(task_id, "w1", clock(), "TaskAttemptsExhausted", "lost three times")
    assert ledger_of(services, task_id) == "reserved"
    services.workers.sweep()
    assert ledger_of(services, task_id) == expected


def test_an_upstream_that_does_not_answer_is_asked_once_a_sweep_and_the_tasks_stay_held(gateway):
    """Each unanswered read may take the HTTP timeout, and the housekeeper also expires and requeues
    tasks: once the upstream does not answer, the sweep asks it about no more tasks."""
    make, clock = gateway
    upstream = ScriptedUpstream("down")

    def unanswered(request: httpx.Request) -> httpx.Response:
        upstream.calls.append((request.method, request.url.path))
        return httpx.Response(503, json={"error": {"code": "ServiceUnavailable", "message": "down"}})

    services = make(unanswered)
    held = []
    for n in range(3):
        task_id = services.tasks.create(Caller("studio", "member"), dict(BODY)).id
        services.store.claim_next(f"w{n}", clock())
        assert services.store.save_generator_state(task_id, f"w{n}", json.dumps(
            {"phase": "running", "key": "main", "upstream_id": f"cgt-up-{n}"}))
        services.store.fail(task_id, f"w{n}", clock(), "TaskAttemptsExhausted", "lost three times")
        held.append(task_id)
    services.workers.sweep()
    assert len([c for c in upstream.calls if c[0] == "GET"]) == 1
    assert [ledger_of(services, t) for t in held] == ["reserved"] * 3
