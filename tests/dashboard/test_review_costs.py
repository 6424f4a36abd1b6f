"""The cost the Review page shows for a version on a Dailies service is what the service's ledger
charges, as on the Tasks page (AppTest against a live BytePlus gateway in front of a scripted
upstream, tests/dashboard/test_tasks_costs.py's): a Volcengine id billed in USD at BytePlus' price
(priced again here it was ¥ at Volcengine's), 2.0 with a reference video at the video-input price
(priced again, the dearer no-video price). On the card's caption, in the comparison table and in the
deep-linked view; the page's lines read in one request, settled ones never asked again."""

from __future__ import annotations

from collections import OrderedDict
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from components.common import charges, costs
from components.review import panel as review_panel
from components.review.card import short_id
from dailies.client import Client
from tests.support.live_service import wait_until_listed

from .test_tasks_costs import V10, V20_WITH_VIDEO, start_byteplus_gateway

PAGE = Path(__file__).resolve().parents[2] / "dashboard" / "views" / "review.py"
CHARGED = {"v10": "$0.0494", "video": "$0.86"}


@pytest.fixture(scope="module")
def gateway(tmp_path_factory):
    live = start_byteplus_gateway(tmp_path_factory.mktemp("byteplus-review"))
    yield live
    live.stop()


@pytest.fixture(scope="module")
def made(gateway) -> dict[str, str]:
    """name -> task id: two succeeded versions made with the API (none in the dashboard's journal)."""
    with Client(base_url=gateway.base_url, api_key=gateway.api_key) as client:
        ids = {name: client.tasks.create(body).id for name, body in (("v10", V10), ("video", V20_WITH_VIDEO))}
        for task_id in ids.values():
            client.wait(task_id, timeout=60, poll_interval=0.05)
        # The ledger's figures are not what pricing the records again here gives.
        for name, task_id in ids.items():
            assert costs.cost_text(costs.record_cost(client.tasks.get(task_id))) != CHARGED[name]
    wait_until_listed(gateway.base_url, gateway.api_key, set(ids.values()))
    return ids


@pytest.fixture
def asked(monkeypatch, tmp_path, gateway) -> list[list[str]]:
    """The dashboard on the gateway, with nothing read from the ledger yet; the ids of each read."""
    monkeypatch.setenv("ARK_BASE_URL", gateway.base_url)
    monkeypatch.setenv("ARK_API_KEY", gateway.api_key)
    monkeypatch.setenv("DAILIES_DATA_DIR", str(tmp_path / "dashboard-data"))
    monkeypatch.setattr(charges, "_kept", OrderedDict())
    monkeypatch.setattr(charges, "WAIT_S", 60.0)  # this test is about what the page shows once read
    reads: list[list[str]] = []
    real = Client.charges
    monkeypatch.setattr(Client, "charges", lambda self, ids: reads.append(sorted(ids)) or real(self, ids))
    return reads


def no_errors(at: AppTest) -> None:
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def card_caption(at: AppTest, task_id: str) -> str:
    """The card's line under its prompt: author, model, size, length, cost, when, and its id last."""
    [caption] = [c.value for c in at.caption if c.value.endswith(" · " + short_id(task_id))]
    return caption


def test_cards_and_comparison_show_what_the_ledger_charges(made, asked):
    at = AppTest.from_file(str(PAGE), default_timeout=60).run()
    no_errors(at)
    for name, task_id in made.items():
        assert f" · {CHARGED[name]} · " in card_caption(at, task_id)
    # The page's lines in one read, for every version it shows.
    assert asked == [sorted(made.values())]

    at.multiselect(key=review_panel.COMPARE_KEY).set_value(list(made.values())).run()
    no_errors(at)
    table = at.dataframe[0].value
    assert {column: table.loc["cost", short_id(task_id)] for column, task_id in made.items()} == CHARGED
    assert table.loc["cost", "differs"] == "≠"
    for name, task_id in made.items():
        assert f" · {CHARGED[name]} · " in card_caption(at, task_id)
    # Settled lines are kept: neither the comparison nor the runs after it ask again.
    at.run()
    no_errors(at)
    assert asked == [sorted(made.values())]


def test_a_deep_linked_version_shows_what_the_ledger_charges(made, asked):
    at = AppTest.from_file(str(PAGE), default_timeout=60)
    at.query_params["task"] = made["video"]
    at.run()
    no_errors(at)
    assert any(f" · {CHARGED['video']} · created " in c.value for c in at.caption), [c.value for c in at.caption]
    assert asked == [[made["video"]]]
