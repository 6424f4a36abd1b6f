"""Receivers that answer slowly on purpose: one deadline bounds a whole attempt, a trickled answer
holds no deliverer, and an attempt that outlives its claim still counts toward the event's attempts
(spec 6.4: at most 1 + 3)."""

from __future__ import annotations

import socket
import threading

import pytest
from sqlalchemy import update

from dailies.service.callbacks import delivery as callbacks_module
from dailies.service.db.tables import callback_events
from tests.service.callbacks.receiver import Reply, always
from tests.service.conftest import text_body
from tests.support.waiting import wait_for

pytestmark = pytest.mark.anyio

HEADERS_THEN_BODY = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"


class Trickler:
    """A receiver on loopback that answers every request a byte at a time, for ever (until it is
    closed, or the caller hangs up). `prelude` goes at once, then `drip` every `every` seconds."""

    def __init__(self, prelude: bytes, drip: bytes, every: float = 0.1) -> None:
        self.prelude, self.drip, self.every = prelude, drip, every
        self.sock = socket.create_server(("127.0.0.1", 0))
        self.port = self.sock.getsockname()[1]
        self.stopped = threading.Event()
        self.lock = threading.Lock()
        self.connections = 0
        self.hung_up = 0  # connections the caller closed while the answer was still trickling
        threading.Thread(target=self._serve, daemon=True).start()

    def url(self, path: str = "/cb") -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def close(self) -> None:
        self.stopped.set()
        self.sock.close()

    def _serve(self) -> None:
        while not self.stopped.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with self.lock:
                self.connections += 1
            threading.Thread(target=self._answer, args=(conn,), daemon=True).start()

    def _answer(self, conn: socket.socket) -> None:
        with conn:
            try:
                conn.recv(65536)
                conn.sendall(self.prelude)
                while not self.stopped.wait(self.every):
                    conn.sendall(self.drip)
            except OSError:
                with self.lock:
                    self.hung_up += 1


@pytest.fixture
def trickling_body():
    t = Trickler(HEADERS_THEN_BODY, b"1\r\nx\r\n")
    yield t
    t.close()


@pytest.fixture
def trickling_headers():
    t = Trickler(b"HTTP/1.1 200 OK\r\nX-Slow: ", b"x")
    yield t
    t.close()


async def test_a_trickled_body_holds_no_deliverer(env, trickling_body):
    # As many events to the trickler as there are deliverers: were its bodies read, every deliverer
    # would be stuck on one and nobody else's callback would go.
    stuck = [await env.create_task(trickling_body.url(), prompt=f"slow {i}")
             for i in range(env.services.callbacks.deliverers)]
    other = await env.create_task(env.receiver.url("/other"))
    await env.settled(other, events=1)
    for task_id in stuck:  # the status decides: 200 is delivered, the body is not waited for
        log = await env.settled(task_id, events=1)
        assert [(e["attempt"], e["status_code"], e["error"]) for e in log] == [(1, 200, None)]
    # Each deliverer hung up on its trickle instead of reading it.
    wait_for(lambda: trickling_body.hung_up == len(stuck), "the deliverers to hang up on the trickles",
             timeout=30.0, interval=0.05)
    assert trickling_body.connections == len(stuck)


async def test_trickled_headers_end_at_the_deadline_and_are_posted_once(open_env, trickling_headers, monkeypatch):
    # Each header byte comes well within the 1 s timeout of a single read: only a deadline over the
    # whole attempt ends it. A claim timeout shorter than that deadline is raised above it (else
    # another deliverer would take the event over while the first is still sending it).
    monkeypatch.setattr(callbacks_module, "CLAIM_TIMEOUT_SECONDS", 0.5)
    async with open_env(callback_timeout=1.0) as env:
        task_id = await env.create_task(trickling_headers.url())  # `queued`: one attempt
        log = await env.settled(task_id, events=1)
    assert [(e["attempt"], e["status_code"], e["error"]) for e in log] == [(1, None, "timed out after 1 s")]
    assert log[0]["latency_ms"] >= 900  # it ran to its deadline
    assert trickling_headers.connections == 1


async def test_an_attempt_that_outlived_its_claim_still_counts(open_env):
    async with open_env(start_callbacks=False) as env:
        queue = env.services.callbacks
        task_id, seq = await _succeeded_event_pending(env, env.receiver.script("/down", always(500)))
        first, second = _claimed_twice(env, seq)
        with queue.http_client() as http:
            queue.deliver(http, first)  # ends after its claim went to `second`
            queue.deliver(http, second)
        log = queue.log_for(task_id)
        event = env.events(task_id)[-1]
    assert [(e["attempt"], e["status_code"], e.get("pending", False)) for e in log if e["status"] == "succeeded"] == \
        [(1, 500, False), (2, 500, False), (3, None, True)]
    assert (event.state, event.attempts, event.claimed_by) == ("pending", 2, None)


async def test_an_overtaken_attempt_that_succeeds_ends_the_event(open_env):
    async with open_env(start_callbacks=False) as env:
        queue = env.services.callbacks
        url = env.receiver.script("/first-ok", lambda d: Reply(200 if d.attempt == 1 else 500))
        task_id, seq = await _succeeded_event_pending(env, url)
        first, second = _claimed_twice(env, seq)
        with queue.http_client() as http:
            queue.deliver(http, first)  # 200, while `second` holds the claim
            queue.deliver(http, second)  # 500: the event is delivered already, nothing is retried
        event = env.events(task_id)[-1]
        log = queue.log_for(task_id)
    assert (event.state, event.attempts, event.claimed_by) == ("delivered", 2, None)
    assert [(e["attempt"], e["status_code"]) for e in log if e["status"] == "succeeded"] == [(1, 200), (2, 500)]
    assert not any(e.get("pending") for e in log)


async def _succeeded_event_pending(env, url: str) -> tuple[str, int]:
    """A rendered task whose `queued` and `running` callbacks are done: its `succeeded` event (four
    attempts) is the one due. Returns (task id, event seq)."""
    task_id = await env.create_task(url)
    env.run_next()
    events = env.events(task_id)
    assert [e.status for e in events] == ["queued", "running", "succeeded"]
    with env.services.engine.begin() as conn:
        conn.execute(update(callback_events).where(callback_events.c.seq.in_([e.seq for e in events[:2]]))
                     .values(state="delivered", attempts=1))
    return task_id, events[-1].seq


def _claimed_twice(env, seq: int):
    """The event claimed by one deliverer, then, its claim having run out, by another."""
    queue = env.services.callbacks
    first = queue.claim("cb-first")
    assert first is not None and first.seq == seq
    with env.services.engine.begin() as conn:
        conn.execute(update(callback_events).where(callback_events.c.seq == seq)
                     .values(claimed_at=0.0))  # long enough ago for any claim timeout
    second = queue.claim("cb-second")
    assert second is not None and second.seq == seq
    return first, second



async def test_a_name_server_that_does_not_answer_ends_the_attempt_at_its_deadline(open_env, monkeypatch):
    """The callback's host name was looked up before the attempt's deadline began, without a limit: a
    name server that does not answer held the deliverer for the resolver's retries (here: for ever).
    The create's own check of the host got an answer; the name server then went silent."""
    released = threading.Event()
    real = socket.getaddrinfo
    asked = []

    def lookup(host, port, *args, **kwargs):
        if host != "silent-dns.example":
            return real(host, port, *args, **kwargs)
        asked.append(host)
        if len(asked) == 1:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port))]
        released.wait(120)
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    try:
        async with open_env(callback_timeout=1.0) as env:
            task_id = await env.create_task("http://silent-dns.example/cb")  # `queued`: one attempt
            log = await env.settled(task_id, events=1)
        assert [(e["attempt"], e["status_code"]) for e in log] == [(1, None)]
        assert "did not resolve within 1 s" in log[0]["error"], log
    finally:
        released.set()


async def test_a_create_whose_callback_host_does_not_resolve_in_time_is_asked_to_retry(env, monkeypatch):
    """The create checks where the callback URL points; its lookup held a request thread for the
    resolver's retries. Now it waits CALLBACK_LOOKUP_S, then answers 503 with Retry-After: nothing
    is known of the host, which is no mistake of the client's."""
    from dailies.service.tasks import actions as tasks_module

    released = threading.Event()
    real = socket.getaddrinfo

    def lookup(host, *args, **kwargs):
        if host == "silent-dns.example":
            released.wait(120)
            raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", lookup)
    monkeypatch.setattr(tasks_module, "CALLBACK_LOOKUP_S", 0.5)
    try:
        response = await env.create(text_body(callback_url="http://silent-dns.example/cb"))
        assert response.status_code == 503, response.text
        assert response.headers["Retry-After"]
        error = response.json()["error"]
        assert error["param"] == "callback_url" and "did not resolve within 0.5 s" in error["message"]
    finally:
        released.set()
