"""Starting a live session from a page (components/common/live_start.py): too many versions are refused
before anything is sent, a service without live sessions and one that refuses are each said."""

from __future__ import annotations

import httpx

from components.common import live_start
from dailies.client import Client
from dailies.spec.live import MAX_VERSIONS


def client_answering(status: int, asked: list[httpx.Request]) -> Client:
    def answer(request: httpx.Request) -> httpx.Response:
        asked.append(request)
        return httpx.Response(status, json={"error": {"code": "InvalidParameter", "message": "versions: refused"}})

    return Client(base_url="http://dailies.test/api/v3", api_key="k", transport=httpx.MockTransport(answer),
                  max_retries=0)


def test_too_many_versions_are_refused_before_anything_is_sent():
    asked: list[httpx.Request] = []
    versions = [(f"cgt-{i}", f"v{i}") for i in range(MAX_VERSIONS + 1)]
    said = live_start.start(client_answering(200, asked), versions, "Reel", "Ana")
    assert said == f"A live session shows at most {MAX_VERSIONS} versions: this has {MAX_VERSIONS + 1}."
    assert asked == []


def test_a_service_without_live_sessions_and_a_refusal_are_said():
    asked: list[httpx.Request] = []
    assert live_start.start(client_answering(404, asked), [("cgt-1", "v1")], "Reel", "Ana") == (
        "This service has no live sessions (it is not a Dailies service).")
    said = live_start.start(client_answering(400, asked), [("cgt-1", "v1")], "Reel", "Ana")
    assert said == "The session was not started: versions: refused"
    assert [r.url.path for r in asked] == ["/dailies/v1/live"] * 2
