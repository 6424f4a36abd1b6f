"""A real HTTP receiver on 127.0.0.1 for callback tests.

It records every request (path, headers, body, arrival time) and answers each one with what the
script of its path says. A script sees the request and its attempt number as the receiver counts
it: the how-manieth request with that `webhook-id` on that path. Slow answers wait on an event that
teardown sets, so no test waits for a sleeping handler.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from dailies.webhooks import WebhookVerificationError, verify


@dataclass
class Delivery:
    path: str
    headers: dict[str, str]  # names lower-cased
    body: bytes
    at: float
    attempt: int  # the receiver's count of requests with this webhook-id on this path

    @property
    def json(self) -> dict:
        return json.loads(self.body)

    @property
    def status(self) -> str:
        return self.json["status"]

    @property
    def webhook_id(self) -> str:
        return self.headers.get("webhook-id", "")


@dataclass
class Reply:
    status: int = 200
    headers: dict[str, str] = field(default_factory=dict)
    wait: float = 0.0  # seconds to hold the answer (cut short at teardown)


Script = Callable[[Delivery], Reply]


def ok(_: Delivery) -> Reply:
    return Reply(200)


def fail_first(n: int, statuses: frozenset[str] = frozenset({"succeeded", "failed"}), code: int = 500) -> Script:
    """Answer `code` to the first `n` attempts of each event whose status is in `statuses`."""
    return lambda d: Reply(code) if d.status in statuses and d.attempt <= n else Reply(200)


def always(code: int) -> Script:
    return lambda d: Reply(code)


def slow_first(seconds: float, statuses: frozenset[str] = frozenset({"succeeded"})) -> Script:
    """Hold the first attempt of each event with a status in `statuses` for `seconds`."""
    return lambda d: Reply(200, wait=seconds) if d.status in statuses and d.attempt == 1 else Reply(200)


def hang(seconds: float = 30.0) -> Script:
    return lambda d: Reply(200, wait=seconds)


def redirect(location: str, code: int = 302) -> Script:
    return lambda d: Reply(code, {"Location": location})


def verifying(secret: str) -> Script:
    """200 when the Standard Webhooks signature checks out with `secret`, 401 otherwise."""
    def script(d: Delivery) -> Reply:
        try:
            verify(secret, d.headers, d.body)
        except WebhookVerificationError:
            return Reply(401)
        return Reply(200)
    return script


class Receiver:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.records: list[Delivery] = []
        self.scripts: dict[str, Script] = {}
        self.released = threading.Event()
        receiver = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                receiver._handle(self)

            def log_message(self, format, *args) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        self.thread = threading.Thread(target=self.server.serve_forever, kwargs={"poll_interval": 0.05},
                                       name="callback-receiver", daemon=True)
        self.thread.start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def script(self, path: str, script: Script) -> str:
        """Answer requests to `path` with `script`; returns the full URL."""
        self.scripts[path] = script
        return self.url(path)

    def deliveries(self, path: str | None = None) -> list[Delivery]:
        with self.lock:
            return [d for d in self.records if path is None or d.path == path]

    def close(self) -> None:
        self.released.set()
        self.server.shutdown()
        self.server.server_close()

    def _handle(self, request: BaseHTTPRequestHandler) -> None:
        body = request.rfile.read(int(request.headers.get("Content-Length") or 0))
        headers = {k.lower(): v for k, v in request.headers.items()}
        with self.lock:
            seen = sum(1 for d in self.records
                       if d.path == request.path and d.webhook_id == headers.get("webhook-id", ""))
            delivery = Delivery(request.path, headers, body, time.time(), seen + 1)
            self.records.append(delivery)
        reply = self.scripts.get(request.path, ok)(delivery)
        if reply.wait:
            self.released.wait(reply.wait)
        try:
            request.send_response(reply.status)
            for name, value in reply.headers.items():
                request.send_header(name, value)
            request.send_header("Content-Length", "0")
            request.end_headers()
        except OSError:  # the caller gave up (timed out) while we held the answer
            pass
