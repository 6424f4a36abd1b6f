"""A gateway with a public address gives its upstream a callback URL of its own: the upstream's callback
wakes the render that follows the task, which reads it at once instead of at its next poll.

The gateway here polls once an hour (`upstream_poll`), so a task that ends within the test's wait
ended because the callback woke its follower (on PostgreSQL through a NOTIFY the process hears back,
on SQLite directly). Shared by the module: one upstream, one gateway per backend."""

from __future__ import annotations

import json
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from sqlalchemy import select

from dailies.client import Client
from dailies.service.db.tables import tasks
from dailies.service.gateway.forwarding import UpstreamKey
from tests.service.callbacks.receiver import Receiver
from tests.support.live_service import start_live_service
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow

UPSTREAM_KEY = "upstream-team-key"
MEMBER_KEY = "member-key-0001"
SMALL = {"model": "doubao-seedance-1-0-pro-250528", "resolution": "480p", "duration": 2}
AN_HOUR = 3600.0


@pytest.fixture(scope="module")
def upstream(tmp_path_factory):
    served = start_live_service(tmp_path_factory.mktemp("upstream"), workers=1, api_keys={UPSTREAM_KEY: "team"})
    yield served
    served.stop()


@pytest.fixture(scope="module")
def gateway(tmp_path_factory, upstream, module_backend):
    served = start_live_service(tmp_path_factory.mktemp("gateway"), workers=2, api_keys={MEMBER_KEY: "studio"},
                               upstream_url=upstream.base_url, upstream_keys=[UpstreamKey("main", UPSTREAM_KEY)],
                               upstream_poll=(AN_HOUR, AN_HOUR), upstream_calls_back=True,
                               **module_backend.settings())
    yield served
    served.stop()


def upstream_callback_url(upstream, upstream_id: str) -> str | None:
    with upstream.app.state.services.engine.connect() as conn:
        return conn.execute(select(tasks.c.callback_url).where(tasks.c.id == upstream_id)).scalar()


def upstream_id_of(gateway, task_id: str) -> str:
    row = gateway.app.state.services.store.get_by_id(task_id)
    return json.loads(row.generator_state)["upstream_id"]


def callbacks_counted(gateway, outcome: str) -> float:
    metrics = httpx.get(f"{gateway.root}/metrics").text
    line = f'dailies_upstream_calls_total{{call="callback",outcome="{outcome}"}}'
    return next((float(row.split()[-1]) for row in metrics.splitlines() if row.startswith(line)), 0.0)


def test_the_upstreams_callback_ends_the_wait_of_a_gateway_that_polls_once_an_hour(gateway, upstream):
    receiver = Receiver()
    try:
        with Client(base_url=gateway.base_url, api_key=MEMBER_KEY) as client:
            task_id = client.tasks.create({**SMALL, "content": [{"type": "text", "text": "a heron at dawn"}],
                                           "callback_url": receiver.url("/member")}).id
            # Well under the hour the gateway waits between polls: only a callback can end it in time.
            record = wait_for(lambda: (r := client.tasks.get(task_id)).status in ("succeeded", "failed") and r,
                              "the task to end", 300)
        assert record.status == "succeeded", record
        upstream_id = upstream_id_of(gateway, task_id)
        # The upstream was given the gateway's own signed receiver, never the member's URL.
        given = upstream_callback_url(upstream, upstream_id)
        assert given.startswith(f"{gateway.root}/dailies/v1/upstream/callback/{task_id}?signature=")
        assert receiver.url("/member") not in given
        assert callbacks_counted(gateway, "followed") >= 1
        wait_for(lambda: [d.status for d in receiver.deliveries("/member")][-1:] == ["succeeded"],
                 "the member's succeeded callback", 60)
    finally:
        receiver.close()


def test_a_callback_url_is_good_for_its_own_task_only(gateway):
    with Client(base_url=gateway.base_url, api_key=MEMBER_KEY) as client:
        task_id = client.tasks.create({**SMALL, "content": [{"type": "text", "text": "a lamp"}]}).id
        wait_for(lambda: client.tasks.get(task_id).status == "succeeded", "the task to succeed", 300)
    upstream_id = upstream_id_of(gateway, task_id)
    services = gateway.app.state.services
    good = services.generator.hooks.callback_url_for(task_id)
    signature = parse_qs(urlsplit(good).query)["signature"][0]

    # Another task's path with this task's signature, a made-up signature, none: refused, named.
    for url in (f"{gateway.root}/dailies/v1/upstream/callback/cgt-other?signature={signature}",
                f"{gateway.root}/dailies/v1/upstream/callback/{task_id}?signature={'0' * 64}",
                f"{gateway.root}/dailies/v1/upstream/callback/{task_id}"):
        answer = httpx.post(url, json={"id": upstream_id, "status": "succeeded"})
        assert answer.status_code == 401, url
        assert answer.json()["error"]["code"] == "AuthenticationError"
        assert answer.json()["error"]["param"] == "signature"
    # A body without the upstream task's id is a 400 naming the field.
    answer = httpx.post(good, content=b"not json", headers={"Content-Type": "application/json"})
    assert answer.status_code == 400 and answer.json()["error"]["param"] == "id"
    # A well-signed callback naming another upstream task wakes nothing, and is answered 200 (the
    # upstream need not retry it); a callback for a task that has ended wakes nothing either.
    before = callbacks_counted(gateway, "not_followed")
    assert httpx.post(good, json={"id": "cgt-not-this-one"}).status_code == 200
    assert httpx.post(good, json={"id": upstream_id, "status": "succeeded"}).status_code == 200
    assert callbacks_counted(gateway, "not_followed") == before + 2


def test_without_a_public_address_the_upstream_gets_no_callback_url(tmp_path, upstream):
    """The default public address is loopback, which a provider cannot reach: no callback is asked for."""
    plain = start_live_service(tmp_path, workers=1, api_keys={MEMBER_KEY: "studio"},
                               upstream_url=upstream.base_url, upstream_keys=[UpstreamKey("main", UPSTREAM_KEY)])
    try:
        with Client(base_url=plain.base_url, api_key=MEMBER_KEY) as client:
            task_id = client.tasks.create({**SMALL, "content": [{"type": "text", "text": "a bell"}]}).id
            wait_for(lambda: client.tasks.get(task_id).status == "succeeded", "the task to succeed", 300)
        assert upstream_callback_url(upstream, upstream_id_of(plain, task_id)) is None
    finally:
        plain.stop()
