"""Fixtures for generator tests: a real HTTP server on 127.0.0.1 and a one-call render helper."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from dailies.generator import InputResolver, PreviewGenerator, RenderJob, RenderResult
from dailies.spec.models import CreateTaskRequest

from .media_fixtures import Decoded, decode


@dataclass
class Route:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)
    delay: float = 0.0
    # Without a Content-Length the body is delimited by closing the connection (HTTP/1.0),
    # which is how a server that lies about, or omits, the size behaves.
    send_length: bool = True


@dataclass
class LocalServer:
    base: str
    routes: dict[str, Route]
    hits: list[str]

    def url(self, path: str) -> str:
        return f"{self.base}{path}"


@pytest.fixture
def http_server() -> Iterator[LocalServer]:
    routes: dict[str, Route] = {}
    hits: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the name http.server dispatches to
            hits.append(self.path)
            route = routes.get(self.path, Route(status=404, body=b"not found"))
            if route.delay:
                time.sleep(route.delay)
            try:
                self.send_response(route.status)
                for name, value in route.headers.items():
                    self.send_header(name, value)
                if route.send_length:
                    self.send_header("Content-Length", str(len(route.body)))
                self.end_headers()
                self.wfile.write(route.body)
            except (BrokenPipeError, ConnectionResetError):
                pass  # the client gave up on purpose (size limit, timeout)

        def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - signature of the base class
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    # A short poll interval makes shutdown() quick at teardown.
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True)
    thread.start()
    try:
        yield LocalServer(f"http://127.0.0.1:{server.server_address[1]}", routes, hits)
    finally:
        server.shutdown()
        server.server_close()


@dataclass
class Rendered:
    result: RenderResult
    video: Decoded
    output_dir: Path


RenderFn = Callable[..., Rendered]


@pytest.fixture
def render(tmp_path: Path) -> RenderFn:
    """render(model, content, seed=1, draft=False, keep=(), resolver=None, **fields) renders the
    request into a fresh folder and decodes the result."""
    counter = iter(range(1_000_000))

    def run(
        model: str,
        content: list[dict[str, Any]],
        *,
        seed: int = 1,
        draft: bool = False,
        keep: tuple[int, ...] = (),
        resolver: InputResolver | None = None,
        **fields: Any,
    ) -> Rendered:
        request = CreateTaskRequest(model=model, content=content, **fields)
        output_dir = tmp_path / f"render-{next(counter)}"
        job = RenderJob(task_id="cgt-20260101000000-test0", request=request, output_dir=output_dir,
                        seed=seed, draft=draft)
        result = PreviewGenerator().render(
            job, resolver or InputResolver(tmp_path / "data"), progress=lambda _: None, is_cancelled=lambda: False
        )
        return Rendered(result, decode(result.video_path, keep=keep), output_dir)

    return run
