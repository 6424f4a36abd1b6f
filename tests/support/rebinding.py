"""DNS rebinding in tests: a loopback server that records what reaches it, and a name that resolves
to a public address for its first lookups and to that server after them (what a TTL-0 name of an
attacker's DNS server does)."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PUBLIC = "93.184.216.34"


@dataclass
class Inside:
    """The loopback service behind the second answer: the paths of the requests that reached it."""

    port: int
    reached: list[str] = field(default_factory=list)
    lookups: list[str] = field(default_factory=list)


@contextmanager
def rebinding_name(monkeypatch, name: str, public_lookups: int) -> Iterator[Inside]:
    """`name` resolves to a public address for its first `public_lookups` lookups, then to a
    loopback server that answers any GET or POST with 200."""
    class Handler(BaseHTTPRequestHandler):
        def _answer(self) -> None:
            inside.reached.append(self.path)
            self.rfile.read(int(self.headers.get("content-length") or 0))
            self.send_response(200)
            self.send_header("content-length", "15")
            self.end_headers()
            self.wfile.write(b"internal secret")

        do_GET = do_POST = _answer

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    inside = Inside(server.server_address[1])
    threading.Thread(target=server.serve_forever, daemon=True).start()
    real = socket.getaddrinfo

    def resolve(host, *args, **kwargs):
        if host != name:
            return real(host, *args, **kwargs)
        inside.lookups.append(host)
        address = PUBLIC if len(inside.lookups) <= public_lookups else "127.0.0.1"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, inside.port))]

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    try:
        yield inside
    finally:
        server.shutdown()
        server.server_close()
