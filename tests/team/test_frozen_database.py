"""A database that stops answering without hanging up (its host frozen, the network cut without a
reset): here every PostgreSQL process gets SIGSTOP, so its kernel still holds the connections open
and nothing on the client side ever fails by itself. An API node must go on answering: `/readyz`
with a 503 naming the database, a request whose key it must look up with a 503, and `/healthz`
(no database) as always.

The service runs in this process (threads named after what they do can be counted); the cluster is
this module's own, since it is frozen. Every freeze ends with SIGCONT, whatever the test does. Bounds
on how long an answer may take are generous (a busy 2-core machine): what they tell apart is an
answer from none at all.
"""

from __future__ import annotations

import contextlib
import os
import signal
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest

from dailies.service.access import shared_secrets
from dailies.service.access.shared_secrets import create_key
from tests.support.live_service import LiveService, start_live_service
from tests.support.servers import PostgresServer
from tests.support.waiting import wait_for

from ..conftest import started_postgres

pytestmark = pytest.mark.slow

KEY = "frozen-key-0001"
# Long enough for any answer of a node that keeps answering (readiness and a key lookup wait 6 s);
# a node that waits for the frozen database gives none at all.
ANSWER_WITHIN = 30.0


@pytest.fixture(scope="module")
def pg():
    with started_postgres() as server:
        yield server


@pytest.fixture
def node(pg: PostgresServer, tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[LiveService]:
    url = pg.create_database(f"frozen_{request.node.name[5:40]}")
    service = start_live_service(tmp_path, workers=0, api_keys={KEY: "team"}, database_url=url)
    # A connection in the pool: the one a frozen database leaves waiting (a new one would meet
    # connect_timeout, db.py).
    assert httpx.get(f"{service.root}/readyz", timeout=ANSWER_WITHIN).status_code == 200
    try:
        yield service
    finally:
        service.stop()


def postgres_pids(server: PostgresServer) -> list[int]:
    """The postmaster and its children (backends and background processes)."""
    postmaster = int((server.data / "postmaster.pid").read_text().split()[0])
    children = Path(f"/proc/{postmaster}/task/{postmaster}/children").read_text().split()
    return [postmaster, *map(int, children)]


@contextmanager
def frozen(server: PostgresServer) -> Iterator[None]:
    """PostgreSQL stopped (not killed) for as long as the block runs: connections stay open and
    get no answer. The postmaster being stopped too, no process is started meanwhile."""
    pids = postgres_pids(server)
    try:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):  # a backend that ended since it was listed
                os.kill(pid, signal.SIGSTOP)
        yield
    finally:
        for pid in pids:
            with contextlib.suppress(ProcessLookupError):  # listed as it ended: nothing to continue
                os.kill(pid, signal.SIGCONT)


def threads_named(name: str) -> int:
    return sum(1 for t in threading.enumerate() if t.name == name)


def asked_without_key(node: LiveService, key: str) -> httpx.Response:
    return httpx.get(f"{node.base_url}/contents/generations/tasks", headers={"Authorization": f"Bearer {key}"},
                     timeout=ANSWER_WITHIN)


def names_the_database(response: httpx.Response) -> bool:
    error = response.json()["error"]
    return (response.status_code == 503 and error["code"] == "ServiceUnavailable" and error["param"] == "database"
            and "database does not answer" in error["message"])


def test_readiness_says_the_database_does_not_answer_and_asks_it_once_at_a_time(node, pg):
    with frozen(pg):
        answers = [httpx.get(f"{node.root}/readyz", timeout=ANSWER_WITHIN) for _ in range(3)]
        # Each says why: no answer in time from a pooled connection, or a new connection's own
        # connect timeout (db.py), whichever the probe met.
        assert all(names_the_database(r) for r in answers), [r.text for r in answers]
        # Each /readyz waited for the probe still under way instead of starting one more.
        assert threads_named("dailies-probe-database") <= 1
        assert httpx.get(f"{node.root}/healthz", timeout=ANSWER_WITHIN).status_code == 200
    wait_for(lambda: httpx.get(f"{node.root}/readyz", timeout=ANSWER_WITHIN).status_code == 200,
             "readiness once the database answers again", timeout=120)
    wait_for(lambda: threads_named("dailies-probe-database") == 0, "the probe's thread to end", timeout=60)


def test_a_key_the_node_must_look_up_gets_a_503_and_the_node_answers_meanwhile(node, pg, monkeypatch):
    # Every key the node does not know is looked up (not only one a second): no wait for it here.
    monkeypatch.setattr(shared_secrets, "REFRESH_SECONDS", 0.0)
    services = node.app.state.services
    looking_up = threading.Event()
    caller = services.caller

    def noted(key):  # the request has reached the key lookup (on the event loop or off it)
        looking_up.set()
        return caller(key)

    services.caller = noted
    answers: list[httpx.Response] = []
    with frozen(pg):
        wrong = threading.Thread(target=lambda: answers.append(asked_without_key(node, "not-a-key")))
        wrong.start()
        assert looking_up.wait(ANSWER_WITHIN)
        # The lookup waits for the database; the node answers all the same.
        assert httpx.get(f"{node.root}/healthz", timeout=ANSWER_WITHIN).status_code == 200
        wrong.join(ANSWER_WITHIN + 5)
        assert answers, "a request with a key to look up got no answer while the database was frozen"
        assert names_the_database(answers[0]), answers[0].text
        assert answers[0].headers["Retry-After"]
        # Until the lookup is due again, other keys to look up are answered without asking.
        assert names_the_database(asked_without_key(node, "another-wrong-key"))
        assert threads_named("dailies-key-lookup") <= 1
    # Once it answers again: a wrong key is refused, a key made meanwhile in the table works.
    wait_for(lambda: asked_without_key(node, "not-a-key").status_code == 401, "a wrong key to be refused again",
             timeout=120)
    made = create_key(services.engine, "team")
    assert wait_for(lambda: asked_without_key(node, made.key).status_code == 200, "the new key to work", timeout=60)
