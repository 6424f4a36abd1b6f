"""Beside one person's `dailies up` (make up) the CLI needs no key: it takes the key that `up` gives its
own dashboard, from the data directory, and only for that `up`'s service (issue 37)."""

from __future__ import annotations

import os

import pytest

from dailies.launcher import RunningDashboard, forget_running_dashboard, record_running_dashboard
from dailies.service.access import keys as key_store
from tests.support.live_service import free_port, start_live_service

from .running import run


@pytest.fixture
def beside_up(tmp_path, monkeypatch):
    key = key_store.create_key(tmp_path, "local").key
    live = start_live_service(tmp_path / "service", workers=0, api_keys={key: "local"})
    monkeypatch.delenv("ARK_API_KEY", raising=False)
    monkeypatch.delenv("ARK_BASE_URL", raising=False)
    monkeypatch.setenv("DAILIES_DATA_DIR", str(tmp_path))
    record_running_dashboard(tmp_path, RunningDashboard("http://127.0.0.1:8501", False, False, os.getpid(),
                                                        api_url=live.base_url))
    yield live, tmp_path
    forget_running_dashboard(tmp_path)
    live.stop()


def test_the_key_of_the_running_up_is_used_for_its_service(beside_up):
    live, _ = beside_up
    code, out, err = run("list", "--base-url", live.base_url, "--json")
    assert code == 0, err


def test_no_key_goes_to_another_address(beside_up):
    code, _, err = run("list", "--base-url", f"http://127.0.0.1:{free_port()}/api/v3")
    assert code == 2 and "no API key" in err


def test_once_up_has_stopped_no_key_is_taken(beside_up):
    live, data_dir = beside_up
    forget_running_dashboard(data_dir)
    code, _, err = run("list", "--base-url", live.base_url)
    assert code == 2 and "no API key" in err
