"""Money and limits in the service, on each backend: budgets reserve at create, settle on success,
release on every other end, never overspent under concurrency; per-key rates answer 429 with
Retry-After, the client waits and retries, and two API nodes share one limit."""

from __future__ import annotations

import contextlib
import re
import threading
import time
from decimal import Decimal

import anyio
import anyio.lowlevel
import httpx
import pytest
from sqlalchemy import func, select

from dailies.client import AsyncClient
from dailies.service.api.app import create_app
from dailies.service.billing import budgets
from dailies.service.callers import Caller, KeyOptions
from dailies.service.db.tables import ledger
from dailies.service.errors import ApiError
from dailies.service.settings import Settings
from dailies.spec.models import CreateTaskRequest
from dailies.spec.prices import cost
from tests.service.conftest import KEY_A, KEY_B, OWN_TASKS, Env, FakeClock, FakeGenerator, text_body

pytestmark = pytest.mark.anyio

BODY = text_body("a budgeted shot", resolution="480p", duration=4, generate_audio=False)


@contextlib.asynccontextmanager
async def node(tmp_path, backend, clock: FakeClock, generator=None, key_options=None):
    """One API node (no background threads) on the test's database, with members' options."""
    settings = Settings(data_dir=tmp_path, api_keys={KEY_A: "alpha", KEY_B: "alpha"},
                        key_options=key_options or {}, workers=0, clock=clock, log_requests=False,
                        **backend.settings())
    generator = generator or FakeGenerator()
    app = create_app(settings, generator=generator, start_background=False)
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as http:
            yield Env(app, http, clock, generator, tmp_path, backend)
    finally:
        app.state.services.stop()


def estimate_micros() -> int:
    estimate = cost(CreateTaskRequest.model_validate(BODY))
    return budgets.to_micros(estimate.amount)


def ledger_rows(env) -> dict[str, tuple[str, int]]:
    with env.services.engine.connect() as conn:
        return {r.task_id: (r.state, r.amount) for r in conn.execute(select(ledger))}


async def test_a_budget_for_five_tasks_accepts_exactly_five_of_twenty_concurrent_creates(tmp_path, backend):
    clock = FakeClock(float(int(time.time())))
    async with node(tmp_path, backend, clock) as env:
        per_task = estimate_micros()
        # Room for five and a half: the sixth would pass it.
        budgets.set_budget(env.services.engine, "alpha", "", Decimal(per_task * 11 // 2) / budgets.MICROS, "CNY",
                           "month", clock())
        accepted, refused = [], []
        lock = threading.Lock()
        start = threading.Barrier(4)

        def creator() -> None:
            start.wait()
            for _ in range(5):
                try:
                    row = env.services.tasks.create(Caller("alpha", "k"), dict(BODY))
                except ApiError as exc:
                    with lock:
                        refused.append(exc)
                else:
                    with lock:
                        accepted.append(row.id)

        threads = [threading.Thread(target=creator) for _ in range(4)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join(120)
        assert len(accepted) == 5 and len(refused) == 15
        assert {(e.status, e.code) for e in refused} == {(403, budgets.BUDGET_EXCEEDED)}
        assert "left" in refused[0].message and "¥" in refused[0].message
        rows = ledger_rows(env)
        assert set(rows) == set(accepted)  # a refused create left neither a task nor a reservation
        assert sum(amount for _, amount in rows.values()) <= per_task * 11 // 2
        # Over HTTP the refusal is in the error shape.
        response = await env.create(BODY)
        assert response.status_code == 403
        assert response.json()["error"]["code"] == "AccountOverdueError.BudgetExceeded"


class CheaperGenerator(FakeGenerator):
    """Renders with 3/4 of the estimated tokens, so what is settled differs from what was reserved."""

    def render(self, job, inputs, progress, is_cancelled):
        from dataclasses import replace

        result = super().render(job, inputs, progress, is_cancelled)
        return replace(result, completion_tokens=result.completion_tokens * 3 // 4)


async def test_settle_and_release_leave_the_ledger_equal_to_the_cost_of_what_succeeded(tmp_path, backend):
    clock = FakeClock(float(int(time.time())))
    async with node(tmp_path, backend, clock, CheaperGenerator()) as env:
        budgets.set_budget(env.services.engine, "alpha", "", Decimal(1000), "CNY", "month", clock())
        ids = {name: (await env.create({**BODY, "execution_expires_after": 3600})).json()["id"]
               for name in ("succeeds", "fails", "cancelled", "expires")}
        reserved = ledger_rows(env)
        assert {state for state, _ in reserved.values()} == {"reserved"}
        assert all(amount == estimate_micros() for _, amount in reserved.values())
        env.generator.fail_inputs.add(ids["fails"])
        assert (await env.delete(ids["cancelled"])).status_code == 200
        while (task_id := env.services.store.claim_next("w1", clock())) is not None:
            if task_id.id == ids["expires"]:
                continue  # left running past its deadline
            env.services.workers.run_one(task_id, "w1")
        clock.advance(3600)
        env.services.workers.sweep()
        statuses = {name: (await env.get(task_id)).json() for name, task_id in ids.items()}
        assert [statuses[n]["status"] for n in ids] == ["succeeded", "failed", "cancelled", "expired"]
        rows = ledger_rows(env)
        tokens = statuses["succeeds"]["usage"]["completion_tokens"]
        assert tokens < cost(CreateTaskRequest.model_validate(BODY)).tokens  # usage differs from the estimate
        from dailies.spec.models import TaskRecord

        actual = budgets.to_micros(cost(TaskRecord.model_validate(statuses["succeeds"])).amount)
        assert rows[ids["succeeds"]] == ("settled", actual)
        assert {rows[ids[n]][0] for n in ("fails", "cancelled", "expires")} == {"released"}
        with env.services.engine.connect() as conn:
            [status] = budgets.budget_status(conn, "alpha", clock())
            settled = conn.execute(select(func.sum(ledger.c.amount)).where(ledger.c.state == "settled")).scalar()
        assert status.settled == settled == actual and status.reserved == 0
        assert status.left == budgets.to_micros(Decimal(1000)) - actual
        spend = (await env.client.get("/dailies/v1/spend", headers={"Authorization": f"Bearer {KEY_A}"})).json()
        assert [(i["state"], i["tasks"]) for i in spend["items"]] == [("settled", 1)]
        assert spend["budgets"][0]["left"] == str(Decimal(status.left) / budgets.MICROS)


async def test_a_member_budget_caps_that_member_only_and_names_them(tmp_path, backend):
    clock = FakeClock(float(int(time.time())))
    options = {KEY_A: KeyOptions(name="alice"), KEY_B: KeyOptions(name="bob")}
    async with node(tmp_path, backend, clock, key_options=options) as env:
        budgets.set_budget(env.services.engine, "alpha", "alice", Decimal(estimate_micros()) / budgets.MICROS,
                           "CNY", "total", clock())
        assert (await env.create(BODY, key=KEY_A)).status_code == 200
        refused = await env.create(BODY, key=KEY_A)
        assert refused.status_code == 403 and "alice" in refused.json()["error"]["message"]
        assert (await env.create(BODY, key=KEY_B)).status_code == 200  # bob has no budget of his own
        usd = await env.create({**BODY, "model": "dreamina-seedance-2-0-260128"}, key=KEY_A)
        assert usd.status_code == 403 and "priced in USD" in usd.json()["error"]["message"]
        me = (await env.client.get("/dailies/v1/me", headers={"Authorization": f"Bearer {KEY_B}"})).json()
        assert me == {"project": "alpha", "member": "bob", "limits": {"rpm": None, "read_rpm": None}}
        assert KEY_B not in str(me)


class AdvancingClock:
    """The client's clock, tied to the service's fake clock. A sleep waits until the test moves the
    service's time to its end (`advance_when_all_sleep`), so no sleep overshoots another's."""

    def __init__(self, service_clock: FakeClock) -> None:
        self.service = service_clock
        self.slept: list[float] = []
        self.pending: list[tuple[float, anyio.Event]] = []

    def now(self) -> float:
        return self.service()

    def time(self) -> float:
        return self.service()

    def sleep(self, seconds: float) -> None:  # pragma: no cover - the async client sleeps with asleep
        raise AssertionError("the async client sleeps with asleep")

    async def asleep(self, seconds: float) -> None:
        self.slept.append(seconds)
        woken = anyio.Event()
        self.pending.append((self.service() + seconds, woken))
        await woken.wait()

    def advance(self) -> None:
        """Every unfinished request sleeps: move time to the earliest end and wake those due."""
        self.service.now = max(self.service.now, min(target for target, _ in self.pending))
        due = [(t, e) for t, e in self.pending if t <= self.service.now]
        self.pending = [(t, e) for t, e in self.pending if t > self.service.now]
        for _, event in due:
            event.set()


async def test_a_key_over_its_rpm_gets_429_the_client_waits_and_two_nodes_share_the_limit(tmp_path, backend):
    clock = FakeClock(float(int(time.time()) // 60 * 60 + 5))  # early in a minute: the burst fits one window
    options = {KEY_A: KeyOptions(name="alice", rpm=30)}
    async with node(tmp_path, backend, clock, key_options=options) as first, \
            node(tmp_path, backend, clock, key_options=options) as second:
        started = clock()
        # A raw burst through both nodes: the 31st create in the minute is refused, whichever node.
        answers = [await (first if n % 2 else second).create(BODY) for n in range(31)]
        assert [a.status_code for a in answers[:30]] == [200] * 30
        refused = answers[30]
        assert refused.status_code == 429
        assert refused.json()["error"]["code"] == "RateLimitExceeded.APIKeyRPMExceeded"
        assert 0 < int(refused.headers["Retry-After"]) <= 60
        assert refused.headers["x-ratelimit-limit"] == "30" and refused.headers["x-ratelimit-remaining"] == "0"
        assert answers[0].headers["x-ratelimit-remaining"] == "29"
        # The client honours Retry-After: the next window takes these.
        clock.advance(60 - (clock() - started))  # a fresh minute for the client's burst of 40
        burst_start = clock()
        client_clock = AdvancingClock(clock)
        clients = [AsyncClient(api_key=KEY_A, base_url="http://testserver/api/v3", max_retries=3,
                               transport=httpx.ASGITransport(app=n.app), clock=client_clock) for n in (first, second)]
        created = []

        async def one(n: int) -> None:
            created.append((await clients[n % 2].tasks.create(BODY)).id)

        async with anyio.create_task_group() as group:
            for n in range(40):
                group.start_soon(one, n)
            while len(created) < 40:  # a condition, polled: the requests run in other threads on PostgreSQL
                if client_clock.pending and len(created) + len(client_clock.pending) == 40:
                    client_clock.advance()
                await anyio.sleep(0.005)
        for client in clients:
            await client.close()
        assert len(set(created)) == 40
        assert client_clock.slept and all(s <= 60 for s in client_clock.slept)
        assert clock() - burst_start <= 120  # all 40 within the minute after the burst's own
        # Reads have their own limit, here none: lists are not counted against creates.
        assert (await first.list()).status_code == 200


async def test_malformed_key_options_are_refused_with_the_reason():
    from dailies.service.settings import parse_api_keys, parse_key_options

    assert parse_key_options("studio:sk-1;name=alice;rpm=30,studio:sk-2") == {
        "sk-1": KeyOptions(name="alice", rpm=30)}
    assert parse_api_keys("studio:sk-1;name=alice;rpm=30") == {"sk-1": "studio"}
    for bad, why in (("studio:sk-1;rpm=0", "rpm must be 1 or more"), ("studio:sk-1;colour=red", "expected name"),
                     ("studio:sk-1;rpm=x", "invalid literal")):
        with pytest.raises(ValueError, match=why):
            parse_key_options(bad)


class BilledThenLostGenerator(FakeGenerator):
    """A gateway's render whose upstream task succeeded (and was billed) and whose result could then
    not be taken: it checkpoints the upstream's success, then fails as an unreachable result does."""

    def render(self, job, inputs, progress, is_cancelled):
        from dailies.service.gateway.forwarding import UPSTREAM_RESULT_INVALID, UpstreamFailed

        job.checkpoint({"phase": "running", "key": "main", "upstream_id": "cgt-up-1", "upstream_succeeded": True})
        raise UpstreamFailed(UPSTREAM_RESULT_INVALID, "The upstream's video could not be downloaded (HTTP 403).")


async def test_a_task_the_upstream_billed_but_that_failed_here_is_spent_not_released(tmp_path, backend):
    clock = FakeClock(float(int(time.time())))
    async with node(tmp_path, backend, clock, BilledThenLostGenerator()) as env:
        task_id = (await env.create(BODY)).json()["id"]
        env.services.workers.run_one(env.services.store.claim_next("w1", clock()), "w1")
        assert (await env.get(task_id)).json()["status"] == "failed"
        assert ledger_rows(env)[task_id] == ("settled", estimate_micros())
        with env.services.engine.connect() as conn:
            assert conn.execute(select(ledger.c.upstream_key).where(ledger.c.task_id == task_id)).scalar() == "main"


async def test_deletes_count_against_the_keys_reads(tmp_path, backend):
    """On a gateway a DELETE may cost an upstream call on the team's key: a key's reads limit it."""
    clock = FakeClock(float(int(time.time()) // 60 * 60 + 5))
    async with node(tmp_path, backend, clock, key_options={KEY_A: KeyOptions(name="alice", read_rpm=3)}) as env:
        ids = [(await env.create(BODY)).json()["id"] for _ in range(3)]
        answers = [await env.delete(task_id) for task_id in ids]
        assert [a.status_code for a in answers] == [200, 200, 200]
        assert answers[0].headers["x-ratelimit-remaining"] == "2"
        refused = await env.delete(ids[0])
        assert refused.status_code == 429
        assert refused.json()["error"]["code"] == "RateLimitExceeded.APIKeyReadRPMExceeded"
        assert (await env.get(ids[0])).status_code == 429  # the same minute's reads
        clock.advance(60)
        assert (await env.get(ids[0])).json()["status"] == "cancelled"


async def test_spend_and_the_callback_log_count_against_the_keys_reads(tmp_path, backend):
    """Each is a read of the project's records (spend: two aggregates over the ledger): a key's reads
    limit them as they limit a get (they were not counted: 50 spends in a minute at read_rpm 2)."""
    clock = FakeClock(float(int(time.time()) // 60 * 60 + 5))
    async with node(tmp_path, backend, clock, key_options={KEY_A: KeyOptions(name="alice", read_rpm=2)}) as env:
        task_id = (await env.create(BODY)).json()["id"]
        headers = {"Authorization": f"Bearer {KEY_A}"}
        spend = await env.client.get("/dailies/v1/spend", headers=headers)
        assert spend.status_code == 200 and spend.headers["x-ratelimit-remaining"] == "1"
        log = await env.client.get(f"{OWN_TASKS}/{task_id}/callbacks", headers=headers)
        assert log.status_code == 200 and log.json() == {"items": []}
        for refused in (await env.client.get("/dailies/v1/spend", headers=headers),
                        await env.client.get(f"{OWN_TASKS}/{task_id}/callbacks", headers=headers)):
            assert refused.status_code == 429
            assert refused.json()["error"]["code"] == "RateLimitExceeded.APIKeyReadRPMExceeded"
        clock.advance(60)
        assert (await env.client.get("/dailies/v1/spend", headers=headers)).status_code == 200


async def test_adaptive_reserves_for_the_size_of_its_inline_image(tmp_path, backend):
    """The image `adaptive` follows is in the request: the reservation sizes the video as the render
    will (it assumed 16:9; a 21:9 frame costs 9.6% more at 1.0 Pro 720p, and a budget was passed)."""
    import base64
    import io

    from PIL import Image

    picture = io.BytesIO()
    Image.new("RGB", (2100, 900), (200, 30, 30)).save(picture, "PNG")
    url = "data:image/png;base64," + base64.b64encode(picture.getvalue()).decode()
    body = {"model": "doubao-seedance-1-0-pro-250528", "resolution": "720p", "duration": 10, "ratio": "adaptive",
            "content": [{"type": "text", "text": "a wide shot"},
                        {"type": "image_url", "image_url": {"url": url}, "role": "first_frame"}]}
    clock = FakeClock(float(int(time.time())))
    async with node(tmp_path, backend, clock) as env:
        answer = await env.create(body)
        assert answer.status_code == 200, answer.text
        wide = cost(CreateTaskRequest.model_validate(body), image_size=(2100, 900))
        assert wide.tokens == 1504 * 640 * 241 // 1024  # 1.0 Pro's 21:9 at 720p
        assert ledger_rows(env)[answer.json()["id"]] == ("reserved", budgets.to_micros(wide.amount))


async def test_operators_see_refusals_and_this_months_spend_in_the_metrics(tmp_path, backend):
    """/metrics had nothing about money or limits: budget refusals and rate limits are counted by code,
    and this month's spend is read from the ledger, settled and reserved, per currency."""
    from prometheus_client.parser import text_string_to_metric_families

    clock = FakeClock(float(int(time.time()) // 60 * 60 + 5))
    async with node(tmp_path, backend, clock, key_options={KEY_B: KeyOptions(rpm=1)}) as env:
        budgets.set_budget(env.services.engine, "alpha", "", Decimal(estimate_micros() * 2) / budgets.MICROS,
                           "CNY", "month", clock())
        first = (await env.create(BODY)).json()["id"]
        assert (await env.create(BODY, key=KEY_B)).status_code == 200
        assert (await env.create(BODY, key=KEY_B)).status_code == 429  # KEY_B's minute is used up
        assert (await env.create(BODY)).status_code == 403  # the budget holds two
        env.services.workers.run_one(env.services.store.claim_next("w1", clock()), "w1")
        families = {f.name: f for f in text_string_to_metric_families((await env.client.get("/metrics")).text)}
        errors = {(s.labels["status"], s.labels["code"]): s.value
                  for s in families["dailies_error_answers"].samples if s.name.endswith("_total")}
        assert errors == {("429", "RateLimitExceeded.APIKeyRPMExceeded"): 1,
                          ("403", budgets.BUDGET_EXCEEDED): 1}
        spend = {(s.labels["currency"], s.labels["state"]): s.value
                 for s in families["dailies_spend_this_month"].samples}
        settled = ledger_rows(env)[first][1]
        assert spend == {("CNY", "settled"): settled / 1e6, ("CNY", "reserved"): estimate_micros() / 1e6}


async def test_a_task_with_an_input_video_reserves_for_the_longest_input_videos_allowed(tmp_path, backend):
    """2.0 bills an input video's frames too, and their length is known only once they are read: the
    reservation counts the longest the spec allows (it counted none: about 4x under what a task with
    15 s of reference video costs, so concurrent creates could pass a budget)."""
    from dailies.spec import limits

    clock = FakeClock(float(int(time.time())))
    body = {"model": "doubao-seedance-2-0-260128", "resolution": "720p", "duration": 5, "content": [
        {"type": "text", "text": "the dancer of the reference"},
        {"type": "video_url", "video_url": {"url": "https://media.example/dance.mp4"}, "role": "reference_video"}]}
    async with node(tmp_path, backend, clock) as env:
        answer = await env.create(body)
        assert answer.status_code == 200, answer.text
        request = CreateTaskRequest.model_validate(body)
        longest = cost(request, input_video_seconds=limits.REFERENCE_VIDEOS_LONGEST_S)
        assert ledger_rows(env)[answer.json()["id"]] == ("reserved", budgets.to_micros(longest.amount))
        assert longest.amount > 3 * cost(request).amount


async def test_a_refusal_by_a_hair_writes_what_is_left_and_the_estimate_apart(tmp_path, backend):
    """Left one micro short of the next task: rounded to cents both would read the same, and the refusal
    would seem to refuse a task there is money for. They are written with the decimals that tell them apart."""
    clock = FakeClock(float(int(time.time())))
    async with node(tmp_path, backend, clock) as env:
        per_task = estimate_micros()
        budgets.set_budget(env.services.engine, "alpha", "", Decimal(2 * per_task - 1) / budgets.MICROS, "CNY",
                           "month", clock())
        assert (await env.create(BODY)).status_code == 200
        refused = (await env.create(BODY)).json()["error"]
        told = re.search(r"; (\S+) is left and this task is estimated at (\S+)\.", refused["message"])
        left, estimate = told.groups()
        assert left != estimate
        assert Decimal(left.lstrip("¥")) < Decimal(estimate.lstrip("¥"))
        assert "set a budget" not in refused["message"]
