"""Dashboard tests run the real pages with Streamlit's AppTest against a live local service."""

from __future__ import annotations

import pytest

from tests.support.live_service import start_live_service


@pytest.fixture(scope="session")
def live_service(tmp_path_factory):
    service = start_live_service(tmp_path_factory.mktemp("service"), workers=1)
    yield service
    service.stop()


@pytest.fixture
def dashboard_env(monkeypatch, tmp_path, live_service):
    """Point the dashboard at the live service, with a fresh journal per test."""
    monkeypatch.setenv("ARK_BASE_URL", live_service.base_url)
    monkeypatch.setenv("ARK_API_KEY", live_service.api_key)
    monkeypatch.setenv("DAILIES_DATA_DIR", str(tmp_path / "dashboard-data"))
    return live_service
