"""`POST /dailies/v1/charges`: the ledger's line of each of a page of tasks, on each backend, against a
gateway in front of a scripted upstream. It is what the ledger charges, not a second pricing: a
Volcengine id through a BytePlus gateway in USD at BytePlus' price, 2.0 with a video input at the
video-input price, a task the upstream made but whose result could not be taken at its estimate (the
dashboard showed ¥0.30, ¥9.20 and ¥0.00 for these). Another project's tasks are left out as unknown
ones, and a call counts as one read against the key's limit."""

from __future__ import annotations

import json
import time
from decimal import Decimal
from functools import partial

import httpx
import pytest
from sqlalchemy import select

from dailies.service.api.app import create_app
from dailies.service.billing import budgets
from dailies.service.callers import Caller, KeyOptions
from dailies.service.db.tables import ledger
from dailies.service.gateway.forwarding import UpstreamGenerator, UpstreamKey
from dailies.service.settings import Settings
from dailies.spec.models import CreateTaskRequest
from dailies.spec.prices import Charge, cost
from tests.service.conftest import FakeClock
from tests.service.gateway.test_upstream import tiny_mp4

VOLCENGINE = "http://upstream.test/api/v3"
BYTEPLUS = "https://ark.ap-southeast.bytepluses.com/api/v3"
URL = "/dailies/v1/charges"
MEMBER, OTHER, LIMITED = "member-key", "other-project-key", "limited-key"
V10 = {"model": "doubao-seedance-1-0-pro-250528", "resolution": "480p", "duration": 2,
       "content": [{"type": "text", "text": "a shot"}]}
V20_WITH_VIDEO = {"model": "doubao-seedance-2-0-260128", "resolution": "720p", "duration": 5,
                  "content": [{"type": "text", "text": "continue [视频1]"},
                              {"type": "video_url", "video_url": {"url": "https://example.com/ref.mp4"},
                               "role": "reference_video"}]}


class Upstream:
    """Ark as the gateway sees it: every task succeeds with `tokens` of usage; its video downloads,
    or answers 403 (an expired link) when `expired`."""

    def __init__(self, tokens: int, expired: bool = False) -> None:
        self.tokens = tokens
        self.expired = expired
        self.video = tiny_mp4()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            return httpx.Response(200, json={"id": "cgt-up-1"})
        if request.method == "DELETE":
            return httpx.Response(200, json={})
        if request.url.host == "cdn.test":
            return httpx.Response(403, content=b"expired") if self.expired else httpx.Response(200, content=self.video)
        record = {"id": "cgt-up-1", "status": "succeeded", "created_at": 1, "updated_at": 2, "ratio": "16:9",
                  "generate_audio": False, "content": {"video_url": "http://cdn.test/video.mp4"},
                  "usage": {"completion_tokens": self.tokens, "total_tokens": self.tokens}}
        if request.url.path.endswith("/tasks"):
            return httpx.Response(200, json={"total": 1, "items": [record]})
        return httpx.Response(200, json=record)


@pytest.fixture
def gateway(tmp_path, backend):
    """make(region_url, upstream) -> (services, app) of a gateway, no background threads."""
    clock = FakeClock(float(int(time.time())))
    made = []

    def make(base: str, upstream: Upstream):
        keys = [UpstreamKey("main", "k")]
        generator = partial(UpstreamGenerator, base, keys, transport=httpx.MockTransport(upstream),
                            sleep=lambda s: time.sleep(0.001), poll_first=0.0, poll_max=0.0,
                            list_interval=0.0)
        settings = Settings(data_dir=tmp_path / str(len(made)), workers=0, clock=clock, log_requests=False,
                            api_keys={MEMBER: "studio", OTHER: "elsewhere", LIMITED: "studio"},
                            key_options={LIMITED: KeyOptions(read_rpm=2)},
                            upstream_url=base, upstream_keys=keys, **backend.settings())
        app = create_app(settings, gateway=lambda hooks: generator(hooks=hooks), start_background=False)
        made.append(app.state.services)
        return app.state.services, app

    yield make, clock
    for services in made:
        services.stop()


def run(services, clock, body: dict) -> str:
    task_id = services.tasks.create(Caller("studio", "member"), dict(body)).id
    services.workers.run_one(services.store.claim_next("w1", clock()), "w1")
    return task_id


def ledger_line(services, task_id: str) -> tuple[str, str, Decimal]:
    with services.engine.connect() as conn:
        row = conn.execute(select(ledger.c.state, ledger.c.currency, ledger.c.amount)
                           .where(ledger.c.task_id == task_id)).one()
    return row.state, row.currency, Decimal(row.amount) / budgets.MICROS


async def charges_of(app, task_ids: list[str], key: str = MEMBER) -> httpx.Response:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as http:
        return await http.post(URL, json={"task_ids": task_ids}, headers={"Authorization": f"Bearer {key}"})


def the_charge(response: httpx.Response, task_id: str) -> Charge:
    assert response.status_code == 200, response.text
    [item] = [Charge.model_validate(i) for i in response.json()["items"] if i["task_id"] == task_id]
    return item


@pytest.mark.anyio
async def test_a_volcengine_id_through_a_byteplus_gateway_is_charged_in_usd_at_byteplus_price(gateway):
    make, clock = gateway
    services, app = make(BYTEPLUS, Upstream(tokens=19747))
    task_id = run(services, clock, V10)
    charge = the_charge(await charges_of(app, [task_id]), task_id)
    assert (charge.state, charge.currency, charge.amount, charge.tokens) == ("settled", "USD", Decimal("0.049368"),
                                                                           19747)  # 19,747 tokens at $2.5/M
    assert (charge.state, charge.currency, charge.amount) == ledger_line(services, task_id)
    assert charge.model == V10["model"]  # the id the member used, as the ledger and /spend say


@pytest.mark.anyio
async def test_2_0_with_a_reference_video_is_charged_at_the_video_input_price(gateway):
    make, clock = gateway
    services, app = make(VOLCENGINE, Upstream(tokens=200_000))
    task_id = run(services, clock, V20_WITH_VIDEO)
    charge = the_charge(await charges_of(app, [task_id]), task_id)
    assert (charge.state, charge.currency, charge.amount) == ("settled", "CNY", Decimal("5.6"))  # ¥28/M, not ¥46/M
    assert (charge.state, charge.currency, charge.amount) == ledger_line(services, task_id)


@pytest.mark.anyio
async def test_a_task_the_upstream_made_but_whose_video_could_not_be_taken_is_charged_its_estimate(gateway):
    make, clock = gateway
    services, app = make(VOLCENGINE, Upstream(tokens=19747, expired=True))
    task_id = run(services, clock, V10)
    assert services.store.get_by_id(task_id).status == "failed"
    estimate = cost(CreateTaskRequest.model_validate(V10))
    charge = the_charge(await charges_of(app, [task_id]), task_id)
    assert (charge.state, charge.currency, charge.amount) == (
        "settled", "CNY", Decimal(budgets.to_micros(estimate.amount)) / budgets.MICROS)
    assert charge.charged > 0 and charge.final
    assert (charge.state, charge.currency, charge.amount) == ledger_line(services, task_id)


@pytest.mark.anyio
async def test_a_queued_task_is_held_and_other_projects_tasks_are_left_out_as_unknown_ones(gateway):
    make, clock = gateway
    services, app = make(VOLCENGINE, Upstream(tokens=19747))
    queued = services.tasks.create(Caller("studio", "member"), dict(V10)).id
    theirs = services.tasks.create(Caller("elsewhere", ""), dict(V10)).id
    answer = await charges_of(app, [queued, theirs, "cgt-20260101000000-nosuch", queued])
    held = the_charge(answer, queued)
    assert held.state == "reserved" and not held.final and held.charged == held.amount > 0
    assert [i["task_id"] for i in answer.json()["items"]] == [queued]
    # The other project sees its own task, and never this one.
    assert [i["task_id"] for i in (await charges_of(app, [queued, theirs], key=OTHER)).json()["items"]] == [theirs]
    assert (await charges_of(app, [])).json() == {"items": []}


@pytest.mark.anyio
async def test_a_call_is_one_read_against_the_keys_limit_and_a_bad_body_is_a_400(gateway):
    make, clock = gateway
    services, app = make(VOLCENGINE, Upstream(tokens=19747))
    task_id = services.tasks.create(Caller("studio", "member"), dict(V10)).id
    page = [task_id] + [f"cgt-20260101000000-{n:05d}" for n in range(499)]
    codes = [(await charges_of(app, page, key=LIMITED)).status_code for _ in range(3)]
    assert codes == [200, 200, 429]  # read_rpm=2: a page of 500 ids is one read
    for body in ({"task_ids": "cgt-1"}, {"task_ids": [1]}, {"task_ids": [""]}, {}, [],
                 {"task_ids": [f"cgt-{n}" for n in range(501)]}):
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as http:
            answer = await http.post(URL, content=json.dumps(body), headers={
                "Authorization": f"Bearer {MEMBER}", "Content-Type": "application/json"})
        assert (answer.status_code, answer.json()["error"]["param"]) == (400, "task_ids"), body
