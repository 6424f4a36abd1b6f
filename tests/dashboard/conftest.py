"""Dashboard tests run the real pages with Streamlit's AppTest against a live local service."""

from __future__ import annotations

import pytest

from tests.support.live_service import API_KEY, start_live_service

# Another key the service knows (Settings checks a key with the service before saving it).
SECOND_KEY = "team-key-0001-alpha-7f3a9c"


@pytest.fixture(scope="session")
def live_service(tmp_path_factory):
    service = start_live_service(tmp_path_factory.mktemp("service"), workers=1,
                                 api_keys={API_KEY: "tests", SECOND_KEY: "tests"})
    yield service
    service.stop()


@pytest.fixture
def dashboard_env(monkeypatch, tmp_path, live_service):
    """Point the dashboard at the live service, with a fresh journal per test."""
    monkeypatch.setenv("ARK_BASE_URL", live_service.base_url)
    monkeypatch.setenv("ARK_API_KEY", live_service.api_key)
    monkeypatch.setenv("DAILIES_DATA_DIR", str(tmp_path / "dashboard-data"))
    return live_service


@pytest.fixture
def keep_on_request(monkeypatch):
    """A dashboard that keeps only what is asked for (a team's, or one on another service): one
    person's local Dailies keeps every success by default, so its pages show kept copies, not links."""
    from components.common import keep

    monkeypatch.setattr(keep, "keeps_by_default", lambda: False)
