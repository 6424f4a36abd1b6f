"""`dailies dashboard` runs Streamlit as its child: stopping it (SIGTERM from a process manager, Ctrl-C) stops
the child too, never leaving a dashboard serving with nobody to stop it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from tests.support.servers import free_port
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow


def _children(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def _alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"  # a zombie has ended; only its parent's wait is missing


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
        child = wait_for(lambda: _children(proc.pid), "the Streamlit child", 30)[0]
        proc.send_signal(signal.SIGTERM)
        proc.wait(60)
        wait_for(lambda: not _alive(child), "Streamlit to stop with its parent", 30)
        assert not _healthy(health)
    finally:
        for pid in (proc.pid, child):
            if pid is not None and _alive(pid):
                os.kill(pid, signal.SIGKILL)
        log.close()
