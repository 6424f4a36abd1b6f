"""`dailies dashboard` runs Streamlit as its child: stopping it (SIGTERM from a process manager, Ctrl-C) stops
the child too, never leaving a dashboard serving with nobody to stop it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys

import httpx
import pytest

from tests.support.processes import alive, children_of
from tests.support.servers import free_port
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow


def _healthy(url: str) -> bool:
    try:
        return httpx.get(url, timeout=1).status_code == 200
    except httpx.HTTPError:
        return False


def test_a_sigterm_to_dailies_dashboard_stops_its_streamlit(tmp_path):
    """SIGTERM, as a process manager stops it (Ctrl-C takes the same path; one dashboard start is enough)."""
    port = free_port()
    env = {**os.environ, "HOME": str(tmp_path), "ARK_BASE_URL": "http://127.0.0.1:9/api/v3"}
    log = open(tmp_path / "dashboard.log", "w")  # noqa: SIM115 - closed below
    proc = subprocess.Popen([sys.executable, "-m", "dailies", "dashboard", "--ui-port", str(port),
                             "--data-dir", str(tmp_path)], cwd=tmp_path, env=env, stdout=log, stderr=subprocess.STDOUT)
    child = None
    try:
        health = f"http://127.0.0.1:{port}/_stcore/health"
        wait_for(lambda: _healthy(health) or proc.poll() is not None, "the dashboard to answer", 120)
        assert proc.poll() is None, (tmp_path / "dashboard.log").read_text()
        child = wait_for(lambda: children_of(proc.pid), "the Streamlit child", 30)[0]
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
        wait_for(lambda: not alive(child), "Streamlit to stop with its parent", 30)
        assert not _healthy(health)
    finally:
        for pid in (proc.pid, child):
            if pid is not None and alive(pid):
                os.kill(pid, signal.SIGKILL)
        log.close()


LAUNCHER = """
import sys
from dailies.launcher import start_child
child = start_child([sys.executable, "-c", "import time; time.sleep(120)"], {})
print(child.pid, flush=True)
child.wait()
"""


def test_a_launcher_killed_outright_takes_its_child_with_it():
    """SIGKILL (an OOM kill) leaves no handler to run: the kernel tells the child (a stand-in for
    Streamlit or `dailies serve`, both started by start_child), which stops instead of serving on."""
    launcher = subprocess.Popen([sys.executable, "-c", LAUNCHER], stdout=subprocess.PIPE, text=True)
    child = None
    try:
        child = int(launcher.stdout.readline())
        assert alive(child)
        launcher.kill()
        launcher.wait(30)
        wait_for(lambda: not alive(child), "the child to stop with its killed launcher", 30)
    finally:
        launcher.stdout.close()
        if child is not None and alive(child):
            os.kill(child, signal.SIGKILL)
