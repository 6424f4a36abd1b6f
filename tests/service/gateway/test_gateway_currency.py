"""A gateway in front of BytePlus ModelArk bills in USD: a member who names a model by its Volcengine
id has it run there as the BytePlus model, so its estimate, its reservation, its cost and every
budget it counts against are in USD at BytePlus's price (they were in CNY at Volcengine's)."""

from __future__ import annotations

import json
import time
from decimal import Decimal
from functools import partial

import httpx
from sqlalchemy import select

from dailies.service.api.app import create_app
from dailies.service.billing import budgets
from dailies.service.callers import Caller
from dailies.service.db.tables import ledger
from dailies.service.gateway.forwarding import UpstreamGenerator, UpstreamKey
from dailies.service.settings import Settings
from dailies.spec.models import CreateTaskRequest
from dailies.spec.prices import cost
from tests.service.conftest import FakeClock
from tests.service.gateway.test_gateway_holds import ScriptedUpstream

BYTEPLUS = "https://ark.ap-southeast.bytepluses.com/api/v3"
BODY = {"model": "doubao-seedance-1-0-pro-250528", "resolution": "480p", "duration": 2,
        "content": [{"type": "text", "text": "a shot billed in dollars"}]}


class Succeeding(ScriptedUpstream):
    def __init__(self) -> None:
        super().__init__("succeeded")
        self.models: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            self.models.append(json.loads(request.content)["model"])
        elif request.method == "GET" and not request.url.path.endswith("/video.mp4"):
            record = {"id": "cgt-up-1", "status": "succeeded", "resolution": "480p", "ratio": "16:9", "duration": 2,
                      "content": {"video_url": "https://cdn.example/video.mp4"}, "generate_audio": False,
                      "usage": {"completion_tokens": 19747, "total_tokens": 19747}}
            return httpx.Response(200, json=record)
        return super().__call__(request)


def test_a_volcengine_id_through_a_byteplus_gateway_is_reserved_settled_and_budgeted_in_usd(tmp_path, backend):
    clock = FakeClock(float(int(time.time())))
    upstream = Succeeding()
    generator = partial(UpstreamGenerator, BYTEPLUS, [UpstreamKey("main", "k")],
                        transport=httpx.MockTransport(upstream), sleep=lambda s: time.sleep(0.001),
                        poll_first=0.0, poll_max=0.0, list_interval=0.0)
    settings = Settings(data_dir=tmp_path, api_keys={"member": "studio"}, workers=0, clock=clock, log_requests=False,
                        upstream_url=BYTEPLUS, upstream_keys=[UpstreamKey("main", "k")], **backend.settings())
    services = create_app(settings, gateway=lambda hooks: generator(hooks=hooks),
                          start_background=False).state.services
    try:
        budgets.set_budget(services.engine, "studio", "", Decimal(1), "USD", "month", clock())
        task_id = services.tasks.create(Caller("studio", "member"), dict(BODY)).id
        estimate = cost(CreateTaskRequest.model_validate(BODY), model="seedance-1-0-pro-250528")
        assert estimate.currency == "USD"
        with services.engine.connect() as conn:
            reserved = conn.execute(select(ledger.c.currency, ledger.c.amount)
                                    .where(ledger.c.task_id == task_id)).one()
        assert tuple(reserved) == ("USD", budgets.to_micros(estimate.amount))
        services.workers.run_one(services.store.claim_next("w1", clock()), "w1")
        assert upstream.models == ["seedance-1-0-pro-250528"]  # what BytePlus runs and bills
        with services.engine.connect() as conn:
            settled = conn.execute(select(ledger.c.state, ledger.c.currency, ledger.c.tokens)
                                   .where(ledger.c.task_id == task_id)).one()
        assert tuple(settled) == ("settled", "USD", 19747)
    finally:
        services.stop()
