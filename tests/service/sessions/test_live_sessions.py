"""Live review sessions over HTTP: a presenter's key starts one, its player posts state with the
control token, followers (no key, the follow token only) are answered as soon as something newer is
kept; a hand-over moves control; another project sees nothing."""

from __future__ import annotations

import json
import threading
import time

import httpx
import pytest

from dailies.service.callers import KeyOptions
from tests.support.live_service import start_live_service

ANA, BO, CY = "key-ana-0001", "key-bo-0001", "key-cy-0001"
TEXT = {"model": "doubao-seedance-1-0-pro-fast-251015", "content": [{"type": "text", "text": "a lantern"}]}


class Api:
    def __init__(self, service) -> None:
        self.root = service.base_url.removesuffix("/api/v3")
        self.base = service.base_url

    def call(self, method: str, path: str, key: str | None = None, headers: dict | None = None,
             **kwargs) -> httpx.Response:
        headers = {**(headers or {}), **({"Authorization": f"Bearer {key}"} if key else {})}
        return httpx.request(method, f"{self.root}/dailies/v1/live{path}", headers=headers, timeout=60, **kwargs)

    def task(self, key: str) -> str:
        answer = httpx.post(f"{self.base}/contents/generations/tasks", json=TEXT, timeout=30,
                            headers={"Authorization": f"Bearer {key}"})
        assert answer.status_code == 200, answer.text
        return answer.json()["id"]

    def post(self, session_id: str, token: str, **state) -> httpx.Response:
        body = {"token": token, "state": {"playing": False, "time": 1.0, "at": time.time() * 1000, "rate": 1,
                                          "frame": 24, "shapes": [], "pointer": None, **state}}
        return self.call("POST", f"/{session_id}/state", content=json.dumps(body),
                         headers={"Content-Type": "text/plain"})


@pytest.fixture(scope="module")
def api(tmp_path_factory):
    service = start_live_service(tmp_path_factory.mktemp("live"), workers=0,
                                 api_keys={ANA: "studio", BO: "studio", CY: "other"},
                                 key_options={ANA: KeyOptions(name="Ana"), BO: KeyOptions(name="Bo"),
                                              CY: KeyOptions(name="Cy")})
    try:
        yield Api(service)
    finally:
        service.stop()


@pytest.fixture
def session(api):
    versions = [api.task(ANA), api.task(BO)]
    started = api.call("POST", "", ANA, json={"title": "Dailies 29/11", "versions": [
        {"task_id": versions[0], "label": "v1"}, {"task_id": versions[1], "label": "v2"}]})
    assert started.status_code == 201, started.text
    return started.json(), versions


def test_a_follower_with_the_link_reads_the_session_and_another_project_does_not(api, session):
    started, versions = session
    assert started["presenter"] == "Ana" and started["seq"] == 0 and started["state"] is None
    followed = api.call("GET", f"/{started['id']}", params={"token": started["follow_token"]})
    assert followed.status_code == 200 and followed.headers["access-control-allow-origin"] == "*"
    assert [v["task_id"] for v in followed.json()["versions"]] == versions
    assert followed.json()["versions"][0]["status"] == "queued"
    assert api.call("GET", f"/{started['id']}", BO).status_code == 200  # a member of the project, by key
    assert api.call("GET", f"/{started['id']}", CY).status_code == 404  # another project's key
    assert api.call("GET", f"/{started['id']}", params={"token": "guessed"}).status_code == 404
    assert api.call("GET", f"/{started['id']}").status_code == 401
    assert started["id"] in [s["id"] for s in api.call("GET", "", BO).json()["items"]]
    assert started["id"] not in [s["id"] for s in api.call("GET", "", CY).json()["items"]]


def test_a_waiting_follower_is_answered_when_the_presenter_posts(api, session):
    started, versions = session
    answers: list[httpx.Response] = []
    waiting = threading.Thread(target=lambda: answers.append(api.call(
        "GET", f"/{started['id']}", params={"token": started["follow_token"], "after": 0})))
    waiting.start()
    posted = api.post(started["id"], started["control_token"], version=versions[1], playing=True, rate=1.5)
    assert posted.status_code == 200 and posted.json() == {"seq": 1}
    waiting.join(60)
    [answer] = answers
    assert answer.json()["seq"] == 1 and answer.json()["state"]["version"] == versions[1]
    assert answer.json()["state"]["rate"] == 1.5
    quiet = api.call("GET", f"/{started['id']}", params={"token": started["follow_token"], "after": 1, "wait": 0.3})
    assert quiet.json()["seq"] == 1  # nothing newer within the wait: answered as it is


@pytest.mark.parametrize(("state", "param"), [
    ({"version": "cgt-not-in-it"}, "state.version"),
    ({"rate": 3}, "state.rate"),
    ({"time": 1e12}, "state.time"),
    ({"pointer": {"x": 2, "y": 0.5}}, "state.pointer"),
    ({"shapes": [{"kind": "rect", "x1": 0, "y1": 0, "x2": 5, "y2": 1}]}, "state.shapes[0].x2"),
    ({"playing": "yes"}, "state.playing"),
])
def test_a_bad_state_is_a_400_naming_its_field(api, session, state, param):
    started, versions = session
    answer = api.post(started["id"], started["control_token"], **{"version": versions[0], **state})
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["param"] == param


def test_handing_over_moves_control_and_the_old_token_is_refused(api, session):
    started, versions = session
    assert api.call("POST", f"/{started['id']}/control", BO).status_code == 403  # Bo does not present
    assert api.post(started["id"], "not-the-token", version=versions[0]).status_code == 403
    handed = api.call("POST", f"/{started['id']}/handover", ANA, json={"to": "Bo"})
    assert handed.status_code == 200 and handed.json()["presenter"] == "Bo"
    assert api.post(started["id"], started["control_token"], version=versions[0]).status_code == 403
    control = api.call("POST", f"/{started['id']}/control", BO).json()["control_token"]
    assert api.post(started["id"], control, version=versions[0]).status_code == 200
    assert api.call("POST", f"/{started['id']}/control", ANA).status_code == 403
    # Bo reloads his page: a new token for him, the one his old page held is refused.
    again = api.call("POST", f"/{started['id']}/control", BO).json()["control_token"]
    assert api.post(started["id"], control, version=versions[0]).status_code == 403
    assert api.post(started["id"], again, version=versions[0]).status_code == 200


def test_an_ended_session_takes_no_state_and_is_not_listed(api, session):
    started, versions = session
    assert api.call("POST", f"/{started['id']}/end", BO).status_code == 200
    assert api.post(started["id"], started["control_token"], version=versions[0]).status_code == 409
    assert started["id"] not in [s["id"] for s in api.call("GET", "", ANA).json()["items"]]
    assert api.call("GET", f"/{started['id']}", params={"token": started["follow_token"]}).json()["ended"] is True


def test_a_session_of_another_projects_task_is_refused(api):
    theirs = api.task(CY)
    refused = api.call("POST", "", ANA, json={"versions": [{"task_id": theirs}]})
    assert refused.status_code == 404
    assert api.call("POST", "", ANA, json={"versions": []}).json()["error"]["param"] == "versions"


def test_a_state_over_its_limit_is_a_413_and_a_body_not_json_a_400(api, session):
    started, versions = session
    padded = json.dumps({"token": started["control_token"], "state": {"version": versions[0], "pad": "x" * 200_000}})
    assert api.call("POST", f"/{started['id']}/state", content=padded,
                    headers={"Content-Type": "text/plain"}).status_code == 413
    assert api.call("POST", f"/{started['id']}/state", content="{not json",
                    headers={"Content-Type": "text/plain"}).status_code == 400
