"""The gateway's typed surface: its checkpoint read from every shape earlier versions stored, its hooks
given once at construction, its clocks injected, and its lock never held while a LIST is on its way."""

from __future__ import annotations

import dataclasses
import json
import threading

import httpx
import pytest

from dailies.service.billing import budgets
from dailies.service.billing.budgets import UpstreamBill
from dailies.service.gateway.checkpoint import UpstreamCheckpoint
from dailies.service.gateway.forwarding import UpstreamGenerator
from dailies.service.gateway.hooks import GatewayHooks
from tests.service.gateway.test_upstream import BASE, MAIN, FakeTime, Upstream, created, job, render


def upstream_may_bill(state: dict) -> bool:
    """The rule as the service read it from the raw JSON before the checkpoint had a type."""
    if state.get("upstream_ended"):
        return False
    return bool(state.get("upstream_id")) or state.get("phase") == "creating"


# Every checkpoint the service wrote before it had a type (tasks in flight across an upgrade).
LEGACY = [
    '{"draft_upstream_id": "cgt-up-draft"}',  # a final, as created
    "{}",  # a create that did not leave
    '{"phase": "creating", "key": "main", "sent_at": 1767225600.25}',
    '{"draft_upstream_id": "cgt-up-draft", "phase": "creating", "key": "main", "sent_at": 1767225600}',
    '{"phase": "running", "key": "main", "upstream_id": "cgt-up-1"}',
    '{"phase": "running", "key": "main", "upstream_id": "cgt-up-1", "upstream_ended": true}',
    '{"phase": "running", "key": "main", "upstream_id": "cgt-up-1", "upstream_missing": true}',
    '{"phase": "running", "key": "main", "upstream_id": "cgt-up-1", "upstream_succeeded": true}',
    '{"phase": "running", "key": "spare", "upstream_id": "cgt-up-2", "created_at": 1767225660.5}',  # an orphan
    '{"upstream_id": "cgt-up-x", "key": "main"}',  # older still: no phase
]


@pytest.mark.parametrize("stored", LEGACY)
def test_every_stored_checkpoint_reads_and_writes_back_as_it_was(stored):
    checkpoint = UpstreamCheckpoint.from_json(stored)
    assert json.loads(checkpoint.to_json()) == json.loads(stored)
    assert UpstreamCheckpoint.from_dict(json.loads(stored)) == checkpoint
    state = json.loads(stored)
    # What each module read from the raw JSON, read through the type.
    assert checkpoint.handed_over == bool(state.get("upstream_id"))
    assert checkpoint.upstream_id == state.get("upstream_id") and checkpoint.key == state.get("key")
    held = checkpoint.bill in (UpstreamBill.HANDED, UpstreamBill.UNANSWERED)
    assert held == (upstream_may_bill(state) and not state.get("upstream_succeeded"))
    assert (checkpoint.bill is UpstreamBill.MADE) == bool(state.get("upstream_succeeded"))


@pytest.mark.parametrize("stored", [None, "", "null", "[1, 2]", "not json", '{"upstream_id": 7, "sent_at": "soon",'
                                    ' "upstream_ended": 0}'])
def test_a_checkpoint_that_cannot_be_read_is_an_empty_one_never_an_error(stored):
    assert UpstreamCheckpoint.from_json(stored) == UpstreamCheckpoint()


def test_keys_a_newer_version_wrote_and_the_sweeps_ended_at_are_ignored():
    checkpoint = UpstreamCheckpoint.from_json(
        '{"phase": "running", "key": "main", "upstream_id": "cgt-up-1", "ended_at": 5, "from_the_future": 1}')
    assert checkpoint.to_dict() == {"phase": "running", "key": "main", "upstream_id": "cgt-up-1"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        checkpoint.upstream_id = "another"  # type: ignore[misc]


def test_a_render_continues_a_legacy_running_checkpoint_and_creates_nothing(tmp_path):
    upstream = Upstream([])
    state = json.loads('{"phase": "running", "key": "main", "upstream_id": "cgt-up-9", "from_the_future": 1}')
    saved: list[dict] = []
    result = render(UpstreamGenerator(BASE, list(MAIN), transport=httpx.MockTransport(upstream),
                                      sleep=lambda s: None, poll_first=0.0, poll_max=0.0),
                    job(tmp_path, state=state, saved=saved), tmp_path)
    assert upstream.posts == [] and result.completion_tokens == 40594
    assert saved == [{"phase": "running", "key": "main", "upstream_id": "cgt-up-9", "upstream_succeeded": True}]


def test_the_hooks_given_at_construction_are_the_ones_called(tmp_path):
    calls: list[tuple] = []
    hooks = GatewayHooks(
        admit=lambda key, model: calls.append(("admit", key)) or 0.0,
        answered=lambda key, model: calls.append(("answered", key)),
        observe=lambda call, outcome, seconds: calls.append(("observe", call, outcome)),
        callback_url_for=lambda task_id: calls.append(("callback_url_for", task_id)) or f"https://gw.test/{task_id}",
        on_set_aside=lambda name, why: calls.append(("on_set_aside", name, why)))
    keys = [*MAIN, dataclasses.replace(MAIN[0], name="spare", key="sk-spare")]
    upstream = Upstream([httpx.Response(401, json={"error": {"code": "AuthenticationError"}}), created()])
    gen = UpstreamGenerator(BASE, keys, hooks=hooks, transport=httpx.MockTransport(upstream), sleep=lambda s: None,
                            poll_first=0.0, poll_max=0.0)
    render(gen, job(tmp_path), tmp_path)
    assert gen.hooks is hooks
    assert upstream.posts[0]["callback_url"] == "https://gw.test/cgt-local-1"  # ours, never the member's
    assert ("on_set_aside", "main", "HTTP 401 AuthenticationError") in calls
    assert [c for c in calls if c[0] in ("admit", "answered")] == [
        ("admit", "main"), ("answered", "main"), ("admit", "spare"), ("answered", "spare")]
    assert ("observe", "create", "401") in calls and ("observe", "create", "200") in calls
    with pytest.raises(dataclasses.FrozenInstanceError):
        hooks.admit = lambda key, model: 0.0  # type: ignore[misc]


def test_a_gateway_the_service_makes_is_given_the_services_hooks(tmp_path):
    from dailies.service.api.app import create_app
    from dailies.service.settings import Settings

    settings = Settings(data_dir=tmp_path, api_keys={"member": "studio"}, workers=0, log_requests=False,
                        upstream_url=BASE, upstream_keys=list(MAIN), upstream_callback_url="https://gw.test")
    services = create_app(settings, start_background=False).state.services
    try:
        gateway = services.gateway
        assert services.generator is gateway.generator and services.workers.gateway is gateway.generator
        hooks = gateway.generator.hooks
        assert hooks.observe == services.metrics.upstream_call
        assert services.wakeups.on_upstream == gateway.generator.wake
        assert services.tasks.forwarding is gateway.tasks
        assert hooks.callback_url_for("cgt-1").startswith("https://gw.test/dailies/v1/upstream/callback/cgt-1?")
        assert services.info()["mode"] == "gateway"
    finally:
        services.stop()


def test_the_generators_times_are_its_injected_clocks(tmp_path):
    fake = FakeTime()
    upstream = Upstream([created()])
    gen = UpstreamGenerator(BASE, list(MAIN), transport=httpx.MockTransport(upstream), sleep=fake.sleep,
                            monotonic=fake.monotonic, clock=lambda: 1_800_000_000.0, poll_first=1.0, poll_max=1.0)
    saved: list[dict] = []
    made = dataclasses.replace(job(tmp_path, saved=saved), deadline_at=1_800_000_000.0 + 7200)
    render(gen, made, tmp_path)
    assert saved[0] == {"phase": "creating", "key": "main", "sent_at": 1_800_000_000.0}
    assert upstream.posts[0]["execution_expires_after"] == 7200  # the member's deadline, on that clock


def test_no_lock_is_held_while_a_list_is_on_its_way():
    listing, release = threading.Event(), threading.Event()
    lists: list[list[str]] = []

    def slow_upstream(request: httpx.Request) -> httpx.Response:
        ids = request.url.params.get_list("filter.task_ids")
        lists.append(ids)
        listing.set()
        assert release.wait(10), "the LIST was never let go"
        return httpx.Response(200, json={"total": len(ids), "items": [{"id": i, "status": "running"} for i in ids]})

    gen = UpstreamGenerator(BASE, list(MAIN), transport=httpx.MockTransport(slow_upstream), list_interval=60.0)
    key = gen.keys[0]
    gen._following.update({"up-1": (key.name, "default"), "up-2": (key.name, "default")})
    looked: list = []
    first = threading.Thread(target=lambda: looked.append(gen._look("up-1", key, "default")))
    first.start()
    try:
        assert listing.wait(10)
        # While the LIST is in flight: the lock is free, and another render of the key neither waits
        # for it nor sends a second LIST (nothing is known of its task yet).
        assert gen._lock.acquire(timeout=1)
        gen._lock.release()
        assert gen.wake("up-2") is False  # takes the lock too
        assert gen._look("up-2", key, "default") is None
        assert len(lists) == 1
    finally:
        release.set()
        first.join(10)
    assert looked == [{"id": "up-1", "status": "running"}]
    assert gen._look("up-2", key, "default") == {"id": "up-2", "status": "running"}  # what that LIST said
    assert len(lists) == 1


def test_the_ledger_decides_when_a_reservation_is_settled_or_released():
    """budgets.py alone decides, from the task's transition and what the upstream may bill."""
    assert budgets.held_outcome(UpstreamBill.NONE, 0) is False
    assert budgets.held_outcome(UpstreamBill.HANDED, 10, True) is True
    assert budgets.held_outcome(UpstreamBill.HANDED, 10, None) is None  # asked again next sweep
    assert budgets.held_outcome(UpstreamBill.HANDED, budgets.UPSTREAM_SILENT_S, None) is True
    assert budgets.held_outcome(UpstreamBill.UNANSWERED, budgets.UNANSWERED_CREATE_S - 1) is None
    assert budgets.held_outcome(UpstreamBill.UNANSWERED, budgets.UNANSWERED_CREATE_S) is True
