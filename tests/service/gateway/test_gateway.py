"""A gateway in front of an upstream: two real services on loopback, the upstream a Dailies with the
preview renderer and keys of its own, the gateway a Dailies started with `upstream_url` (as `dailies
serve --upstream URL`). Members use the gateway's keys only; the gateway holds the upstream key.

Shared by the module (one upstream, one gateway: small clips, so each task takes seconds)."""

from __future__ import annotations

import json
import threading
import time
from collections import Counter
from decimal import Decimal

import httpx
import pytest
from sqlalchemy import create_engine, select

from dailies.client import Client
from dailies.service.db.tables import tasks
from dailies.service.gateway.forwarding import UpstreamKey
from tests.service.callbacks.receiver import Receiver
from tests.support.live_service import start_live_service
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow

UPSTREAM_KEY = "upstream-team-key"
MEMBER_KEY = "member-key-0001"
SMALL = {"model": "doubao-seedance-1-0-pro-250528", "resolution": "480p", "duration": 2}
CONCURRENCY = 2


@pytest.fixture(scope="module")
def upstream(tmp_path_factory):
    # More render slots than the gateway's cap, so that only the cap can keep the upstream at it.
    served = start_live_service(tmp_path_factory.mktemp("upstream"), workers=4, api_keys={UPSTREAM_KEY: "team"})
    yield served
    served.stop()


@pytest.fixture(scope="module")
def gateway(tmp_path_factory, upstream, module_backend):
    """On each backend: SQLite + a folder, or PostgreSQL + an S3 bucket (the archive is the bucket)."""
    served = start_live_service(tmp_path_factory.mktemp("gateway"), workers=4, api_keys={MEMBER_KEY: "studio"},
                                upstream_url=upstream.base_url, upstream_keys=[UpstreamKey("main", UPSTREAM_KEY)],
                                upstream_concurrency=CONCURRENCY, **module_backend.settings())
    served.archive_root = module_backend.aws_environment.get("AWS_ENDPOINT_URL") or served.root
    yield served
    served.stop()


def text(prompt: str, **fields) -> dict:
    return {**SMALL, "content": [{"type": "text", "text": prompt}], **fields}


def task_rows(service) -> list:
    """The task rows of a service, read from its database."""
    engine = service.app.state.services.engine
    with engine.connect() as conn:
        return conn.execute(select(tasks.c.id, tasks.c.status, tasks.c.callback_url)).all()


def upstream_id_of(gateway, task_id: str) -> str:
    row = gateway.app.state.services.store.get_by_id(task_id)
    return json.loads(row.generator_state)["upstream_id"]


def test_a_task_through_the_gateway_is_the_upstreams_archived_behind_the_gateways_urls(gateway, upstream):
    receiver = Receiver()
    try:
        with Client(base_url=gateway.base_url, api_key=MEMBER_KEY) as client:
            task_id = client.tasks.create(text("a kite over dunes", return_last_frame=True,
                                               callback_url=receiver.url("/hook"))).id
            record = client.wait(task_id, timeout=180, poll_interval=0.2)
        assert record.status == "succeeded", record
        upstream_task = upstream_id_of(gateway, task_id)
        with Client(base_url=upstream.base_url, api_key=UPSTREAM_KEY) as up:
            original = up.tasks.get(upstream_task)
        # The member's record is the upstream's, with the gateway's own result URLs.
        for field in ("model", "seed", "resolution", "ratio", "duration", "framespersecond", "generate_audio"):
            assert getattr(record, field) == getattr(original, field), field
        assert record.usage.completion_tokens == original.usage.completion_tokens
        assert record.content.video_url.startswith(gateway.archive_root)
        assert record.content.last_frame_url.startswith(gateway.archive_root)
        # The provider never saw the member's callback URL; the member's receiver heard from the gateway.
        assert [r.callback_url for r in task_rows(upstream) if r.id == upstream_task] == [None]
        wait_for(lambda: [d.status for d in receiver.deliveries("/hook")][-1:] == ["succeeded"],
                 "the member's succeeded callback", 60)
        assert [d.status for d in receiver.deliveries("/hook")] == ["queued", "running", "succeeded"]
        # The archive outlives the upstream task.
        with Client(base_url=upstream.base_url, api_key=UPSTREAM_KEY) as up:
            up.tasks.delete(upstream_task)
        video = httpx.get(record.content.video_url)
        assert video.status_code == 200 and video.content[4:8] == b"ftyp"
    finally:
        receiver.close()


def test_the_official_sdk_works_through_the_gateway(gateway):
    from volcenginesdkarkruntime import Ark

    sdk = Ark(base_url=gateway.base_url, api_key=MEMBER_KEY).content_generation.tasks
    created = sdk.create(model=SMALL["model"], content=[{"type": "text", "text": "a lantern"}],
                         resolution="480p", duration=2)
    record = wait_for(lambda: (r := sdk.get(task_id=created.id)).status in ("succeeded", "failed") and r,
                      "the task through the gateway", 180)
    assert record.status == "succeeded" and record.content.video_url.startswith(gateway.archive_root)


def test_an_upstream_failure_fails_the_members_task_with_its_code(gateway):
    with Client(base_url=gateway.base_url, api_key=MEMBER_KEY) as client:
        body = {**SMALL, "content": [{"type": "text", "text": "from a missing frame"},
                                     {"type": "image_url", "image_url": {"url": "http://frames.invalid/missing.png"},
                                      "role": "first_frame"}]}
        task_id = client.tasks.create(body, check_rules=False).id
        record = client.wait(task_id, timeout=180, poll_interval=0.2)
    assert record.status == "failed"
    assert record.error.code == "InvalidParameter" and "resource download failed" in record.error.message


def test_beyond_the_upstream_concurrency_tasks_wait_queued_here_and_all_succeed(gateway, upstream):
    peak = {"gateway": 0, "upstream": 0}
    done = threading.Event()

    def watch() -> None:
        while not done.is_set():
            running_here = Counter(r.status for r in task_rows(gateway))["running"]
            # Queued upstream counts too: what the gateway has handed over and not seen end.
            there = Counter(r.status for r in task_rows(upstream))
            running_there = there["running"] + there["queued"]
            peak["gateway"] = max(peak["gateway"], running_here)
            peak["upstream"] = max(peak["upstream"], running_there)
            time.sleep(0.02)

    watcher = threading.Thread(target=watch)
    watcher.start()
    try:
        with Client(base_url=gateway.base_url, api_key=MEMBER_KEY) as client:
            ids = [client.tasks.create(text(f"take {n}")).id for n in range(6)]
            records = [client.wait(t, timeout=300, poll_interval=0.2) for t in ids]
    finally:
        done.set()
        watcher.join(10)
    assert [r.status for r in records] == ["succeeded"] * 6
    assert peak["gateway"] <= CONCURRENCY and peak["upstream"] <= CONCURRENCY, peak
    assert peak["gateway"] == CONCURRENCY  # the cap was reached, so it was what held the rest back


def test_a_gateway_worker_killed_mid_forward_is_continued_by_another_with_one_upstream_task(upstream, tmp_path):
    """Real processes: an API node and a gateway worker on one data directory; the worker is SIGKILLed
    once the task is running upstream, a second worker takes the task up when the first stops
    beating, and follows the same upstream task."""
    from tests.support.processes import Serve, Worker

    env = {"DAILIES_UPSTREAM_URL": upstream.base_url, "DAILIES_UPSTREAM_KEYS": f"main:{UPSTREAM_KEY}"}
    data = tmp_path / "gateway"
    api = Serve(data, workers=0, stale_after=3.0, api_keys=f"studio:{MEMBER_KEY}")
    first = Worker(data, stale_after=3.0, env=env, extra_args=("--upstream", upstream.base_url))
    second = None
    try:
        with Client(base_url=api.base_url, api_key=MEMBER_KEY) as client:
            task_id = client.tasks.create(text("a long take", duration=12)).id
            engine = create_engine(f"sqlite:///{data / 'dailies.sqlite3'}")

            def state() -> dict:
                with engine.connect() as conn:
                    raw = conn.execute(select(tasks.c.generator_state).where(tasks.c.id == task_id)).scalar()
                return json.loads(raw) if raw else {}

            upstream_task = wait_for(lambda: state().get("upstream_id"), "the task to be running upstream", 120)
            first.kill()
            second = Worker(data, stale_after=3.0, env=env, extra_args=("--upstream", upstream.base_url))
            record = client.wait(task_id, timeout=240, poll_interval=0.3)
            engine.dispose()
        assert record.status == "succeeded", record
        assert state_of(upstream, upstream_task) == "succeeded"
        mine = [r for r in task_rows(upstream) if r.id == upstream_task]
        assert len(mine) == 1  # followed, never created again
        assert f"continues upstream task {upstream_task}" in second.output()
        assert "created upstream" not in second.output()
    finally:
        for process in (api, first, second):
            if process is not None:
                process.stop()


def state_of(service, task_id: str) -> str | None:
    return next((r.status for r in task_rows(service) if r.id == task_id), None)


def test_a_task_still_queued_upstream_is_cancelled_there_and_here(tmp_path):
    """An upstream that queues only (no render slots): the member's DELETE of a task the gateway has
    handed over cancels it upstream, and here; the upstream's deadline counts from the member's create."""
    queue_only = start_live_service(tmp_path / "up", workers=0, api_keys={UPSTREAM_KEY: "team"})
    front = start_live_service(tmp_path / "gw", workers=1, api_keys={MEMBER_KEY: "studio"},
                               upstream_url=queue_only.base_url, upstream_keys=[UpstreamKey("main", UPSTREAM_KEY)])
    try:
        with Client(base_url=front.base_url, api_key=MEMBER_KEY) as client:
            task_id = client.tasks.create(text("never rendered", execution_expires_after=7200)).id
            wait_for(lambda: (front.app.state.services.store.get_by_id(task_id).generator_state or "").find(
                "upstream_id") >= 0, "the task to be handed over", 60)
            assert client.tasks.get(task_id).status == "running"
            upstream_task = upstream_id_of(front, task_id)
            with Client(base_url=queue_only.base_url, api_key=UPSTREAM_KEY) as up:
                handed = up.tasks.get(upstream_task)
                assert handed.status == "queued" and handed.execution_expires_after <= 7200
                client.tasks.delete(task_id)
                assert client.tasks.get(task_id).status == "cancelled"
                assert up.tasks.get(upstream_task).status == "cancelled"
    finally:
        front.stop()
        queue_only.stop()


def test_the_gateway_says_what_it_is_and_counts_its_upstream_calls(gateway, upstream):
    from prometheus_client.parser import text_string_to_metric_families

    headers = {"Authorization": f"Bearer {MEMBER_KEY}"}
    info = httpx.get(f"{gateway.root}/dailies/v1/service", headers=headers).json()
    assert info["mode"] == "gateway" and info["upstream"]["url"] == upstream.base_url
    assert info["upstream"]["keys"] == [{"name": "main", "healthy": True}]
    assert UPSTREAM_KEY not in json.dumps(info)
    local = httpx.get(f"{upstream.root}/dailies/v1/service", headers={"Authorization": f"Bearer {UPSTREAM_KEY}"})
    assert local.json() == {"mode": "preview", "upstream": None}
    with Client(base_url=gateway.base_url, api_key=MEMBER_KEY) as client:
        client.wait(client.tasks.create(text("counted")).id, timeout=180, poll_interval=0.2)
    samples = {(s.name, tuple(sorted(s.labels.items()))): s.value
               for f in text_string_to_metric_families(httpx.get(f"{gateway.root}/metrics").text) for s in f.samples}
    assert samples[("dailies_upstream_calls_total", (("call", "create"), ("outcome", "200")))] >= 1
    assert samples[("dailies_upstream_calls_total", (("call", "list"), ("outcome", "200")))] >= 1  # read by LIST
    assert samples[("dailies_upstream_keys_set_aside", ())] == 0


def test_the_upstream_rpm_is_counted_across_workers_in_the_database(tmp_path):
    from dailies.service.api.app import create_app
    from dailies.service.settings import Settings
    from tests.service.conftest import FakeClock

    clock = FakeClock(float(int(time.time()) // 60 * 60 + 1))
    settings = {"data_dir": tmp_path, "api_keys": {MEMBER_KEY: "studio"}, "workers": 0, "clock": clock,
                "upstream_url": "https://upstream.invalid/api/v3", "upstream_keys": [UpstreamKey("main", "k")],
                "upstream_rpm": 3}
    first, second = (create_app(Settings(**settings), start_background=False).state.services for _ in range(2))
    try:
        model = "doubao-seedance-2-0-260128"
        # The admission each gateway's hooks were given when it was made.
        admit_first, admit_second = first.generator.hooks.admit, second.generator.hooks.admit
        waits = [admit("main", model) for admit in (admit_first, admit_second, admit_first, admit_second)]
        assert waits[:3] == [0.0, 0.0, 0.0] and 0 < waits[3] <= 60  # the fourth in the minute waits
        assert admit_first("main", "doubao-seedance-1-0-pro-250528") == 0.0  # per model
        clock.advance(60)
        assert admit_second("main", model) == 0.0  # a new minute
    finally:
        first.stop()
        second.stop()


def test_a_draft_and_its_final_through_the_gateway_refer_to_the_upstreams_draft(gateway, upstream):
    v15 = "doubao-seedance-1-5-pro-251215"
    with Client(base_url=gateway.base_url, api_key=MEMBER_KEY) as client:
        draft_id = client.tasks.create({"model": v15, "draft": True, "duration": 4, "generate_audio": False,
                                        "content": [{"type": "text", "text": "a paper boat"}]}).id
        draft = client.wait(draft_id, timeout=180, poll_interval=0.2)
        assert draft.status == "succeeded" and draft.draft
        final_id = client.tasks.create({"model": v15, "resolution": "720p",
                                        "content": [{"type": "draft_task", "draft_task": {"id": draft_id}}]}).id
        final = client.wait(final_id, timeout=180, poll_interval=0.2)
    assert final.status == "succeeded", final
    assert final.draft_task_id == draft_id  # the member's record names the member's draft
    with Client(base_url=upstream.base_url, api_key=UPSTREAM_KEY) as up:
        upstream_final = up.tasks.get(upstream_id_of(gateway, final_id))
    # Upstream, the final was made from the upstream's own draft task.
    assert upstream_final.draft_task_id == upstream_id_of(gateway, draft_id)
    assert final.resolution == "720p" and final.seed == draft.seed


def test_the_ledger_settles_on_the_upstreams_usage_and_shows_each_upstream_keys_spend(gateway, upstream):
    from dailies.service.billing import budgets
    from dailies.service.db.tables import ledger

    with Client(base_url=gateway.base_url, api_key=MEMBER_KEY) as client:
        task_id = client.tasks.create(text("billed upstream")).id
        record = client.wait(task_id, timeout=180, poll_interval=0.2)
    with Client(base_url=upstream.base_url, api_key=UPSTREAM_KEY) as up:
        billed = up.tasks.get(upstream_id_of(gateway, task_id)).usage.completion_tokens
    engine = gateway.app.state.services.engine
    with engine.connect() as conn:
        row = conn.execute(select(ledger).where(ledger.c.task_id == task_id)).one()
        per_key = budgets.upstream_spend(conn)
    # What the member's task cost is what the upstream's usage says, at the model's price (¥15/M).
    assert (row.state, row.tokens, row.upstream_key) == ("settled", billed, "main")
    assert row.tokens == record.usage.completion_tokens
    assert row.amount == budgets.to_micros(Decimal(billed) * 15 / 10**6)
    main = [s for s in per_key if s.upstream_key == "main"]
    assert len(main) == 1 and main[0].currency == "CNY" and main[0].tasks >= 1 and main[0].amount >= row.amount
