"""`client.charges(ids)`: what a Dailies service's ledger holds for a page of tasks, typed, by task id;
more than a page is asked in several requests; a service without a ledger is `UnsupportedEndpointError`."""

from __future__ import annotations

import json
from decimal import Decimal

import httpx
import pytest

from dailies.client import NotFoundError, UnsupportedEndpointError
from dailies.spec.prices import Charge

from .client_fakes import API_KEY, ScriptedServer, error_body, reply

CHARGES_URL = "http://127.0.0.1:8000/dailies/v1/charges"
SETTLED = {"task_id": "cgt-1", "model": "doubao-seedance-1-0-pro-250528", "state": "settled", "currency": "USD",
           "amount": "0.049368", "tokens": 19747, "a_newer_field": "kept"}
HELD = {"task_id": "cgt-2", "model": "doubao-seedance-2-0-260128", "state": "reserved", "currency": "CNY",
        "amount": "5.6", "tokens": 200000}
UNPRICED = {"task_id": "cgt-3", "model": "mystery", "state": "settled", "currency": None, "amount": "0", "tokens": 5}


def asked_ids(request: httpx.Request) -> list[str]:
    return json.loads(request.content)["task_ids"]


def test_charges_are_typed_by_task_id_and_asked_in_one_post(make_client):
    server = ScriptedServer(reply(200, {"items": [SETTLED, HELD, UNPRICED]}))
    got = make_client(server).charges(["cgt-1", "cgt-2", "cgt-3", "cgt-gone", "cgt-1"])
    assert set(got) == {"cgt-1", "cgt-2", "cgt-3"}  # an id the service does not have is left out
    settled, held, unpriced = got["cgt-1"], got["cgt-2"], got["cgt-3"]
    assert isinstance(settled, Charge)
    assert (settled.state, settled.currency, settled.amount, settled.final) == ("settled", "USD", Decimal("0.049368"),
                                                                              True)
    assert (held.final, held.charged) == (False, Decimal("5.6"))
    assert unpriced.currency is None
    [request] = server.requests
    assert (request.method, str(request.url)) == ("POST", CHARGES_URL)
    assert request.headers["Authorization"] == f"Bearer {API_KEY}"
    assert asked_ids(request) == ["cgt-1", "cgt-2", "cgt-3", "cgt-gone"]  # each once


def test_more_than_a_page_of_ids_is_several_requests_and_none_is_none(make_client):
    server = ScriptedServer(reply(200, {"items": [SETTLED]}), reply(200, {"items": [HELD]}))
    ids = [f"cgt-{n}" for n in range(1, 751)]
    got = make_client(server).charges(ids)
    assert set(got) == {"cgt-1", "cgt-2"}
    assert [len(asked_ids(r)) for r in server.requests] == [500, 250]
    assert make_client(ScriptedServer(reply(200, {"items": []}))).charges([]) == {}
    with pytest.raises(ValueError):
        make_client(server).charges("cgt-1")  # one string is not a list of ids


def test_a_service_without_a_ledger_is_unsupported(make_client):
    # The real Ark, or an older Dailies: a 404 for a path it does not have (JSON or not).
    for answer in (reply(404, error_body("NotFound", "NotFound")),
                   lambda request: httpx.Response(404, text="<html>404 page not found</html>")):
        server = ScriptedServer(answer)
        with pytest.raises(UnsupportedEndpointError) as raised:
            make_client(server).charges(["cgt-1"])
        assert isinstance(raised.value, NotFoundError) and server.calls == 1


@pytest.mark.anyio
async def test_the_async_twin(make_async_client):
    server = ScriptedServer(reply(200, {"items": [SETTLED]}), reply(404, error_body("NotFound", "NotFound")))
    async with make_async_client(server) as client:
        got = await client.charges(["cgt-1"])
        assert got["cgt-1"].amount == Decimal("0.049368")
        with pytest.raises(UnsupportedEndpointError):
            await client.charges(["cgt-1"])
    assert str(server.requests[0].url) == CHARGES_URL


def test_a_service_without_members_is_unsupported_too(make_client):
    """`members()` (for @name): the names of a Dailies service; the real Ark answers 404 for the path."""
    server = ScriptedServer(reply(200, {"project": "studio", "members": ["Ana", "Bo"]}),
                            reply(404, error_body("NotFound", "NotFound")))
    client = make_client(server)
    assert client.members().members == ["Ana", "Bo"]
    with pytest.raises(UnsupportedEndpointError):
        client.members()
    assert str(server.requests[0].url).endswith("/dailies/v1/members")
