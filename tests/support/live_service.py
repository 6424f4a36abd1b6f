"""A real service on a free loopback port, in a thread of the test process: the dashboard and CLI
tests talk to it over HTTP exactly as they would to `dailies serve`."""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from pathlib import Path

import httpx
import uvicorn

from dailies.service.api.app import create_app
from dailies.service.settings import Settings
from tests.support.servers import free_port

API_KEY = "test-key-local"


@dataclass
class LiveService:
    base_url: str  # ends in /api/v3
    api_key: str
    data_dir: Path
    app: object
    server: uvicorn.Server
    thread: threading.Thread

    @property
    def root(self) -> str:
        return self.base_url.removesuffix("/api/v3")

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(15)


def start_live_service(data_dir: Path, workers: int = 1, api_keys: dict[str, str] | None = None,
                       upstream_calls_back: bool = False, generator=None, gateway=None, port: int | None = None,
                       **settings) -> LiveService:
    """`api_keys` maps keys to projects (default: API_KEY in project "tests"); the first key is the
    one `LiveService.api_key` names. `upstream_calls_back`: a gateway whose upstream is given its own
    address for callbacks (as `--public-url` does). `generator`: another renderer than the preview's;
    `gateway`: makes a gateway's forwarding generator from the hooks the service gives it. `port`: the
    port of a service stopped before, to start it again where its clients know it."""
    api_keys = api_keys or {API_KEY: "tests"}
    port = port or free_port()
    if upstream_calls_back:
        settings["upstream_callback_url"] = f"http://127.0.0.1:{port}"
    # Receivers, and a gateway's own address for its upstream's callbacks, are on loopback.
    settings.setdefault("allow_loopback_callbacks", True)
    app = create_app(Settings(data_dir=data_dir, api_keys=api_keys, workers=workers,
                              public_url=f"http://127.0.0.1:{port}", log_requests=False, poll_interval=0.05,
                              **settings), generator=generator, gateway=gateway)
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, name="live-service", daemon=True)
    thread.start()
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        try:
            if httpx.get(f"http://127.0.0.1:{port}/healthz", timeout=1).status_code == 200:
                break
        except httpx.HTTPError:
            time.sleep(0.05)
    else:
        raise RuntimeError("the live service did not start")
    return LiveService(f"http://127.0.0.1:{port}/api/v3", next(iter(api_keys)), data_dir, app, server, thread)


def wait_until_listed(base_url: str, api_key: str, task_ids: set[str], timeout: float = 30.0) -> None:
    """Until the list endpoint shows every one of `task_ids`. The list window is [T - 7 days, T) to the
    second (spec section 3.2), so a task made in the current second is not listed yet."""
    deadline = time.monotonic() + timeout
    headers = {"Authorization": f"Bearer {api_key}"}
    while True:
        page = httpx.get(f"{base_url}/contents/generations/tasks", headers=headers,
                         params={"page_size": 500}, timeout=10).json()
        missing = task_ids - {item["id"] for item in page["items"]}
        if not missing:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"not listed within {timeout:.0f} s: {sorted(missing)}")
        time.sleep(0.05)
