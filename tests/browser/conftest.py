"""End-to-end fixtures: the whole product started by `dailies up` on free ports, and Debian's
Chromium driven by Playwright. Without a browser the tests are skipped on a developer machine and
fail where the CI variable is set, so CI can never pass without running them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pytest

from dailies.launcher import wait_until_up
from tests.support.live_service import free_port

from .script_runs import RUN_TRACKER

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
                 "--disable-background-networking", "--disable-component-update", "--disable-sync",
                 "--autoplay-policy=no-user-gesture-required"]


@dataclass
class Product:
    ui_url: str
    api_url: str  # ends in /api/v3
    api_key: str
    data_dir: Path

    def client(self):
        from dailies.client import Client

        return Client(base_url=self.api_url, api_key=self.api_key)


def _browser_path() -> str | None:
    return CHROMIUM if Path(CHROMIUM).exists() else shutil.which("chromium")


@pytest.fixture(scope="session")
def chromium_path() -> str:
    path = _browser_path()
    if path is None:
        message = "Debian's chromium is not installed (bash .ci/run installs it with apt-get)"
        if os.environ.get("CI"):
            pytest.fail(message + "; CI must run the browser tests")
        pytest.skip(message)
    return path


@contextmanager
def running_process(command: list[str], log_path: Path, health_url: str, cwd: Path | None = None,
                    timeout_s: float = 120) -> Iterator[subprocess.Popen]:
    """A server child process, until the block ends: started with its output in `log_path`, waited for
    until `health_url` answers 200 (failing with its log if it dies or does not), then terminated."""
    log = open(log_path, "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen(command, cwd=cwd, stdout=log, stderr=subprocess.STDOUT)
    try:
        try:
            wait_until_up(health_url, proc, " ".join(command[2:4]), timeout_s)
        except RuntimeError as exc:
            raise RuntimeError(f"{exc}\n{log_path.read_text()}") from None
        yield proc
    finally:
        proc.terminate()
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


@contextmanager
def running_product(data_dir: Path, *flags: str) -> Iterator[Product]:
    """`dailies up` on free ports with `flags`, until the block ends. Product.api_key is the first
    key of the data directory (the one `dailies up` hands a single-user dashboard)."""
    api_port, ui_port = free_port(), free_port()
    with running_process([sys.executable, "-m", "dailies.cli", "up", "--data-dir", str(data_dir), "--api-port",
                          str(api_port), "--ui-port", str(ui_port), "--slots", "2", *flags],
                         data_dir / "up.log", f"http://127.0.0.1:{ui_port}/_stcore/health"):
        key = json.loads((data_dir / "keys.json").read_text())["keys"][0]["key"]
        yield Product(f"http://127.0.0.1:{ui_port}", f"http://127.0.0.1:{api_port}/api/v3", key, data_dir)


@pytest.fixture(scope="package")
def product(tmp_path_factory, chromium_path):
    with running_product(tmp_path_factory.mktemp("product")) as started:
        yield started


# Package scope: Playwright's sync API keeps an event loop running on the main thread while it is
# open, which would break every asyncio test that runs after the browser tests.
class TrackingBrowser:
    """The launched browser, whose every new context reports Streamlit's script runs to the page
    (script_runs.RUN_TRACKER), so ui.until_quiet waits for the runs themselves."""

    def __init__(self, browser) -> None:
        self._browser = browser

    def new_context(self, **options):
        context = self._browser.new_context(**options)
        context.add_init_script(RUN_TRACKER)
        return context

    def __getattr__(self, name: str):
        return getattr(self._browser, name)


@pytest.fixture(scope="package")
def browser(chromium_path):
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        launched = pw.chromium.launch(executable_path=chromium_path, args=CHROMIUM_ARGS)
        yield TrackingBrowser(launched)
        launched.close()


@pytest.fixture
def page(browser):
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    opened = context.new_page()
    opened.set_default_timeout(30_000)
    yield opened
    context.close()

