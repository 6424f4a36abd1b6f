"""A node asked to stop (SIGTERM) while followers wait on its live sessions answers them at once with
the state as it is, instead of holding its shutdown until each long poll's wait (up to 25 s) runs out."""

from __future__ import annotations

import threading

import httpx
import pytest

from dailies.spec import live as L
from tests.support.metrics import scrape
from tests.support.processes import Serve
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow
KEY = "key-ana-0001"
TEXT = {"model": "doubao-seedance-2-0-260128", "content": [{"type": "text", "text": "a lantern"}]}


def test_a_stopping_node_answers_its_waiting_followers_and_exits(tmp_path):
    serve = Serve(tmp_path, workers=0, api_keys=f"studio:{KEY}")
    try:
        auth = {"Authorization": f"Bearer {KEY}"}
        task = httpx.post(f"{serve.base_url}/contents/generations/tasks", json=TEXT, headers=auth).json()["id"]
        live = f"{serve.root}/dailies/v1/live"
        started = httpx.post(live, json={"versions": [{"task_id": task}]}, headers=auth).json()
        follow = {"token": started["follow_token"], "after": started["seq"], "wait": L.LONG_POLL_MAX_S}
        before = httpx.get(f"{live}/{started['id']}", params={"token": started["follow_token"]}).json()
        answers: list[httpx.Response] = []
        waiting = threading.Thread(target=lambda: answers.append(
            httpx.get(f"{live}/{started['id']}", params=follow, timeout=60)))
        waiting.start()
        wait_for(lambda: scrape(f"{serve.root}/metrics")[("dailies_live_followers_waiting", ())] == 1,
                 "the follower to wait on the node")
        serve.proc.terminate()
        waiting.join(60)
        assert serve.proc.wait(60) == 0, serve.output()
        [answer] = answers
        assert answer.status_code == 200, answer.text
        assert answer.json()["seq"] == started["seq"]  # nothing new: answered because the node stops
        waited_ms = answer.json()["server_time"] - before["server_time"]
        assert waited_ms < L.LONG_POLL_MAX_S * 1000, waited_ms  # not at the end of its wait
    finally:
        serve.stop()
