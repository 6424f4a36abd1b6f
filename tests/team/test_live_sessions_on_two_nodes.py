"""A live session on a team deployment: two API nodes on one PostgreSQL. The presenter's player posts to
one node, a follower's player waits on the other and is answered with the state; a hand-over made on
one node moves control on both. Nothing of it lives in a process."""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest

from dailies.service.callers import KeyOptions
from tests.support.live_service import start_live_service

from ..conftest import open_backend

ANA, BO = "key-ana-0001", "key-bo-0001"
TEXT = {"model": "doubao-seedance-2-0-260128", "content": [{"type": "text", "text": "a lantern"}]}


@pytest.fixture
def nodes(request, tmp_path):
    with open_backend(request, "pg+s3") as team:
        settings = {"api_keys": {ANA: "studio", BO: "studio"}, "database_url": team.database_url,
                    "storage": team.storage, "key_options": {ANA: KeyOptions(name="Ana"), BO: KeyOptions(name="Bo")}}
        started = [start_live_service(tmp_path / name, workers=0, **settings) for name in ("a", "b")]
        try:
            yield [service.base_url.removesuffix("/api/v3") for service in started]
        finally:
            for service in started:
                service.stop()


def call(root: str, method: str, path: str, key: str | None = None, headers: dict | None = None,
         **kwargs) -> httpx.Response:
    headers = {**(headers or {}), **({"Authorization": f"Bearer {key}"} if key else {})}
    return httpx.request(method, f"{root}/dailies/v1/live{path}", headers=headers, timeout=60, **kwargs)


def post(root: str, session_id: str, token: str, version: str, frame: int) -> httpx.Response:
    state = {"version": version, "playing": False, "time": (frame + 0.5) / 24, "at": time.time() * 1000,
             "rate": 1, "frame": frame, "shapes": [], "pointer": None}
    return call(root, "POST", f"/{session_id}/state", content=json.dumps({"token": token, "state": state}),
                headers={"Content-Type": "text/plain"})


def test_a_presenter_on_one_node_is_followed_on_the_other(nodes):
    a, b = nodes
    task = httpx.post(f"{a}/api/v3/contents/generations/tasks", json=TEXT, timeout=30,
                      headers={"Authorization": f"Bearer {ANA}"}).json()["id"]
    started = call(a, "POST", "", ANA, json={"versions": [{"task_id": task}]}).json()
    answers: list[httpx.Response] = []
    waiting = threading.Thread(target=lambda: answers.append(call(
        b, "GET", f"/{started['id']}", params={"token": started["follow_token"], "after": 0})))
    waiting.start()
    assert post(a, started["id"], started["control_token"], task, 42).json() == {"seq": 1}
    waiting.join(60)
    [answer] = answers
    assert answer.json()["seq"] == 1 and answer.json()["state"]["frame"] == 42
    # Handed over on node b; Bo's control token, asked for on node a, posts on b; Ana's is refused on both.
    assert call(b, "POST", f"/{started['id']}/handover", ANA, json={"to": "Bo"}).status_code == 200
    control = call(a, "POST", f"/{started['id']}/control", BO).json()["control_token"]
    assert post(b, started["id"], control, task, 7).status_code == 200
    assert {post(root, started["id"], started["control_token"], task, 1).status_code for root in nodes} == {403}
    assert call(a, "GET", f"/{started['id']}", BO).json()["state"]["frame"] == 7
