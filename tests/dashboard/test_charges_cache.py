"""components.common.charges: a page's ledger lines in one request, settled and released ones never asked
again, held ones asked again; the real Ark's hosts never asked; a service without the endpoint asked
once. No Streamlit run: a stand-in client counts the requests."""

from __future__ import annotations

import threading
from decimal import Decimal

import httpx
import pytest

from components.common import charges
from dailies.client import UnsupportedEndpointError
from dailies.spec.prices import Charge


class FakeClient:
    def __init__(self, lines: dict[str, Charge], base_url: str = "http://127.0.0.1:8000/api/v3",
                 unsupported: bool = False) -> None:
        self.base_url = base_url
        self.lines = lines
        self.unsupported = unsupported
        self.asked: list[list[str]] = []
        self.lock = threading.Lock()

    def charges(self, task_ids):
        with self.lock:
            self.asked.append(list(task_ids))
        if self.unsupported:
            response = httpx.Response(404, request=httpx.Request("POST", "http://127.0.0.1:8000/dailies/v1/charges"))
            raise UnsupportedEndpointError("404 page not found", response=response, body=None)
        return {i: self.lines[i] for i in task_ids if i in self.lines}


def line(task_id: str, state: str) -> Charge:
    return Charge(task_id=task_id, state=state, currency="CNY", amount=Decimal("0.3"), tokens=1)


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    monkeypatch.setattr(charges, "_kept", type(charges._kept)())
    monkeypatch.setattr(charges, "_unsupported", set())
    monkeypatch.setattr(charges, "_reading", {})


def test_a_page_is_one_request_and_only_held_lines_are_asked_again(monkeypatch):
    client = FakeClient({"a": line("a", "settled"), "b": line("b", "released"), "c": line("c", "reserved")})
    got = charges.charges(client, "conn", ["a", "b", "c", "gone", "a"])
    assert set(got) == {"a", "b", "c"} and client.asked == [["a", "b", "c", "gone"]]
    # Within HELD_MAX_AGE_S nothing is asked again (the table and the charts of one run share a read).
    assert charges.charges(client, "conn", ["a", "b", "c", "gone"]) == got and len(client.asked) == 1
    monkeypatch.setattr(charges, "HELD_MAX_AGE_S", 0.0)
    client.lines["c"] = line("c", "settled")
    assert charges.charges(client, "conn", ["a", "b", "c", "gone"])["c"].state == "settled"
    assert client.asked[1:] == [["c"]]  # settled, released and "no line" are never asked again
    assert charges.charges(client, "conn", ["a", "b", "c", "gone"]) and client.asked[2:] == []
    # Another connection (another key) has its own lines.
    charges.charges(client, "other", ["a"])
    assert client.asked[2:] == [["a"]]


def test_the_real_arks_hosts_are_never_asked_and_a_service_without_the_endpoint_once():
    ark = FakeClient({}, base_url="https://ark.cn-beijing.volces.com/api/v3")
    assert charges.charges(ark, "ark", ["a"]) is None and ark.asked == []
    older = FakeClient({}, unsupported=True)
    assert charges.charges(older, "older", ["a", "b"]) is None
    assert charges.charges(older, "older", ["c"]) is None
    assert older.asked == [["a", "b"]]
