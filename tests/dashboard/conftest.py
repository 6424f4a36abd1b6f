"""Dashboard tests run the real pages with Streamlit's AppTest against a live local service."""

from __future__ import annotations

import pytest

from components.common import keep as _keep
from tests.support.live_service import API_KEY, start_live_service

_PRODUCT_DEFAULT = _keep.keeps_by_default  # taken before any test replaces it

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


@pytest.fixture(autouse=True)
def keep_on_request(monkeypatch):
    """Pages as a dashboard that keeps only what is asked for (a team's, or one on another service).
    One person's local Dailies keeps every success by default: on the session's one service every
    Tasks or Review test would download every result listed into its fresh journal, which is what
    `keeping_by_default` tests (and tests/browser, on a real `dailies up`)."""
    from components.common import keep

    monkeypatch.setattr(keep, "keeps_by_default", lambda: False)


@pytest.fixture
def keeping_by_default(monkeypatch, keep_on_request):
    """The product's own default (one person's local Dailies keeps what succeeds)."""
    from components.common import keep

    monkeypatch.setattr(keep, "keeps_by_default", _PRODUCT_DEFAULT)
