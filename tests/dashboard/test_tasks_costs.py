"""The cost the Tasks page shows for a task of a Dailies service is what the service's ledger charges
(AppTest against a live BytePlus gateway in front of a scripted upstream): a Volcengine id billed in
USD at BytePlus' price (was ¥ at Volcengine's), 2.0 with a reference video at the video-input price
(was the dearer no-video price), a task the upstream made but whose video could not be taken at its
estimate (was ¥0.00), a reservation shown as held. Settled lines are read once, not on every run."""

from __future__ import annotations

import json
import threading
from decimal import Decimal
from pathlib import Path

import httpx
import pytest
from sqlalchemy import select
from streamlit.testing.v1 import AppTest

from components.common import charges
from components.tasks import spend_charts
from components.tasks import table as task_table
from components.tasks.state_keys import VIEW_KEY
from dailies.client import Client
from dailies.service.billing import budgets
from dailies.service.db.tables import ledger
from dailies.service.gateway.forwarding import UpstreamGenerator, UpstreamKey
from tests.service.gateway.test_upstream import tiny_mp4
from tests.support.live_service import start_live_service, wait_until_listed

PAGE = Path(__file__).resolve().parents[2] / "dashboard" / "views" / "tasks.py"
BYTEPLUS = "https://ark.ap-southeast.bytepluses.com/api/v3"
CHARTS_TAB = "📊 Charts"
V10 = {"model": "doubao-seedance-1-0-pro-250528", "resolution": "480p", "duration": 2,
       "content": [{"type": "text", "text": "a shot billed in dollars"}]}
V20_WITH_VIDEO = {"model": "doubao-seedance-2-0-260128", "resolution": "720p", "duration": 5,
                  "content": [{"type": "text", "text": "continue [视频1]"},
                              {"type": "video_url", "video_url": {"url": "https://example.com/ref.mp4"},
                               "role": "reference_video"}]}
EXPIRED = {**V10, "content": [{"type": "text", "text": "its link has expired"}]}
HELD = {**V10, "content": [{"type": "text", "text": "the upstream is still at it"}]}


class Upstream:
    """BytePlus as the gateway sees it, one upstream task per create: 2.0 with a video input makes
    200,000 tokens, the rest 19,747; a prompt about an expired link gets a video URL answering 403; one
    the upstream is still at stays running."""

    def __init__(self) -> None:
        self.created: dict[str, dict] = {}
        self.video = tiny_mp4()
        self.lock = threading.Lock()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            with self.lock:
                upstream_id = f"cgt-up-{len(self.created) + 1}"
                self.created[upstream_id] = json.loads(request.content)
            return httpx.Response(200, json={"id": upstream_id})
        if request.method == "DELETE":
            return httpx.Response(200, json={})
        if request.url.host == "cdn.test":
            if request.url.path.startswith("/expired/"):
                return httpx.Response(403, content=b"expired")
            return httpx.Response(200, content=self.video)
        if request.url.path.endswith("/tasks"):
            asked = request.url.params.get_list("filter.task_ids")
            items = [self.record(i) for i in asked if i in self.created]
            return httpx.Response(200, json={"total": len(items), "items": items})
        upstream_id = request.url.path.rsplit("/", 1)[1]
        if upstream_id not in self.created:
            return httpx.Response(404, json={"error": {"code": "NotFound", "message": "no such task"}})
        return httpx.Response(200, json=self.record(upstream_id))

    def record(self, upstream_id: str) -> dict:
        body = self.created[upstream_id]
        text = " ".join(item.get("text", "") for item in body["content"])
        video_in = any(item["type"] == "video_url" for item in body["content"])
        tokens = 200_000 if video_in else 19_747
        record = {"id": upstream_id, "model": body["model"], "status": "succeeded", "created_at": 1,
                  "updated_at": 2, "resolution": body.get("resolution"), "ratio": "16:9",
                  "duration": body.get("duration"), "generate_audio": False,
                  "content": {"video_url": f"http://cdn.test/{'expired' if 'expired' in text else 'ok'}/v.mp4"},
                  "usage": {"completion_tokens": tokens, "total_tokens": tokens}}
        if "still at it" in text:
            record = {**record, "status": "running", "content": None, "usage": None}
        return record


def start_byteplus_gateway(folder):
    """A live BytePlus gateway in front of the scripted upstream (also tests/dashboard/test_review_costs.py's)."""
    keys = [UpstreamKey("main", "k")]
    def gateway(hooks):
        return UpstreamGenerator(BYTEPLUS, keys, hooks=hooks, transport=httpx.MockTransport(Upstream()),
                                 poll_first=0.01, poll_max=0.05, list_interval=0.01)

    return start_live_service(folder, workers=2, gateway=gateway, upstream_url=BYTEPLUS, upstream_keys=keys)


@pytest.fixture(scope="module")
def gateway(tmp_path_factory):
    live = start_byteplus_gateway(tmp_path_factory.mktemp("byteplus-gateway"))
    yield live
    live.stop()


@pytest.fixture(scope="module")
def made(gateway) -> dict[str, str]:
    """name -> task id: three ended, one still running upstream."""
    with Client(base_url=gateway.base_url, api_key=gateway.api_key) as client:
        ids = {name: client.tasks.create(body).id
               for name, body in (("v10", V10), ("video", V20_WITH_VIDEO), ("expired", EXPIRED), ("held", HELD))}
        for name in ("v10", "video", "expired"):
            client.wait(ids[name], timeout=60, poll_interval=0.05)
    wait_until_listed(gateway.base_url, gateway.api_key, set(ids.values()))
    return ids


def ledger_lines(gateway) -> dict[str, tuple[str, str, Decimal]]:
    services = gateway.app.state.services
    with services.engine.connect() as conn:
        return {r.task_id: (r.state, r.currency, Decimal(r.amount) / budgets.MICROS)
                for r in conn.execute(select(ledger))}


def open_tasks(ids: list[str]) -> AppTest:
    at = AppTest.from_file(str(PAGE), default_timeout=30)
    at.run()
    at.text_area(key="tasks.task_ids").input("\n".join(ids))
    return at.run()


def costs_shown(at: AppTest) -> dict[str, str]:
    [frame] = [d.value for d in at.dataframe if d.key == task_table.TABLE_KEY]
    return dict(zip(frame["id"], frame["cost"], strict=True))


def no_errors(at: AppTest) -> None:
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def test_each_rows_cost_is_what_the_gateways_ledger_charges(dashboard_env, gateway, made, monkeypatch):
    monkeypatch.setenv("ARK_BASE_URL", gateway.base_url)
    monkeypatch.setenv("ARK_API_KEY", gateway.api_key)
    asked: list[list[str]] = []
    real = Client.charges
    monkeypatch.setattr(Client, "charges", lambda self, ids: asked.append(list(ids)) or real(self, ids))
    monkeypatch.setattr(charges, "WAIT_S", 60.0)  # this test is about what the rows show once read
    at = open_tasks(list(made.values()))
    no_errors(at)
    shown = costs_shown(at)
    lines = ledger_lines(gateway)
    # A Volcengine id through a BytePlus gateway: $2.5/M, as the ledger bills it (the record keeps the id).
    assert lines[made["v10"]] == ("settled", "USD", Decimal("0.049368"))
    # 2.0 with a reference video: BytePlus' video-input price, $4.3/M (not $7.0/M: $1.40).
    assert lines[made["video"]] == ("settled", "USD", Decimal("0.86"))
    # Failed after the upstream made (and billed) it: settled at its estimate, not 0.
    assert lines[made["expired"]][:2] == ("settled", "USD") and lines[made["expired"]][2] > 0
    # Still running upstream: its estimate is held, and says so.
    assert lines[made["held"]][0] == "reserved"
    assert {name: shown[task_id] for name, task_id in made.items()} == {
        "v10": "$0.0494", "video": "$0.86", "expired": f"${lines[made['expired']][2]:.4f}",
        "held": f"≈ ${lines[made['held']][2]:.4f} held"}

    # Settled lines never change: the next runs ask only for the held one, in one request for the page.
    asked.clear()
    charges.HELD_MAX_AGE_S, held_age = 0.0, charges.HELD_MAX_AGE_S
    try:
        at.run()
        at.run()
    finally:
        charges.HELD_MAX_AGE_S = held_age
    no_errors(at)
    assert costs_shown(at) == shown
    assert asked and all(ids == [made["held"]] for ids in asked)


def test_the_spend_per_model_chart_sums_the_ledgers_lines(dashboard_env, gateway, made, monkeypatch):
    monkeypatch.setenv("ARK_BASE_URL", gateway.base_url)
    monkeypatch.setenv("ARK_API_KEY", gateway.api_key)
    monkeypatch.setattr(charges, "WAIT_S", 60.0)
    seen: list = []
    real = spend_charts.spend_by_model
    monkeypatch.setattr(spend_charts, "spend_by_model",
                        lambda *args, **kwargs: seen.append(real(*args, **kwargs)) or seen[-1])
    at = open_tasks(list(made.values()))
    at.session_state[VIEW_KEY] = CHARTS_TAB
    at.run()
    no_errors(at)
    [(frame, unpriced)] = seen
    lines = ledger_lines(gateway)
    rows = {(r.key, r.currency): (round(Decimal(str(r.amount)), 6), r.tasks) for r in frame.itertuples()}
    # In dollars, as billed: no yuan bar that the ledger does not have; the failed task it charged counts.
    assert rows == {
        (V10["model"], "USD"): (lines[made["v10"]][2] + lines[made["expired"]][2], 2),
        (V20_WITH_VIDEO["model"], "USD"): (Decimal("0.86"), 1),
    }
    assert unpriced == 0
