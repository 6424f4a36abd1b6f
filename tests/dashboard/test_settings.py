"""The Settings page: where the connection comes from, the key never shown whole, the connection
test against the live service (success, a refused key, an unreachable address), a typed base URL
checked by the client's own rule before it is saved, and no page crashing on a bad base URL in the
dashboard's environment."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from components.common import connection
from dailies.api_keys import mask
from dailies.client._base import base_url_problem
from tests.support.live_service import free_port

ROOT = Path(__file__).resolve().parents[2]
VIEWS = ROOT / "dashboard" / "views"
PAGE = VIEWS / "settings.py"


def page_text(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [e.value for e in at.success] + [e.value for e in at.error]
    return "\n".join(str(p) for p in parts)


def open_settings() -> AppTest:
    return AppTest.from_file(str(PAGE), default_timeout=30).run()


def save(at: AppTest, base_url: str | None = None, key: str | None = None) -> AppTest:
    if base_url is not None:
        at.text_input[0].input(base_url)
    if key is not None:
        at.text_input[1].input(key)
    at.button[0].click()  # Save (the form's submit button)
    return at.run()


def test_env_connection_is_shown_with_a_masked_key_and_tests_ok(dashboard_env):
    at = open_settings()
    text = page_text(at)
    key = dashboard_env.api_key
    assert dashboard_env.base_url in text and "a service on this machine" in text
    assert key not in text and f"`{mask(key)}`" in text
    assert at.text_input[1].value == ""  # the key field never holds the key
    at.button(key="settings.test").click().run()
    assert any(s.value.startswith("Connected:") for s in at.success), page_text(at)


def test_a_refused_key_is_said_plainly_and_not_saved(dashboard_env):
    at = save(open_settings(), key="dk-not-a-real-key-at-all")
    assert not at.success
    assert any("refused this API key (401): nothing was saved" in e.value for e in at.error), page_text(at)
    assert "`dk-no…-all`" not in page_text(at) and f"`{mask(dashboard_env.api_key)}`" in page_text(at)
    assert connection.API_KEY_KEY not in at.session_state and len(connection.remembered_store()) == 0


def test_a_key_the_service_knows_is_saved_as_checked(dashboard_env):
    at = save(open_settings(), key=dashboard_env.api_key)
    assert any(s.value.startswith("Saved, and remembered in this browser") for s in at.success), page_text(at)


def test_a_key_for_an_address_that_does_not_answer_is_saved_unchecked(dashboard_env):
    nowhere = f"http://127.0.0.1:{free_port()}/api/v3"
    at = save(open_settings(), base_url=nowhere, key="dk-a-key-for-that-address")
    assert any("the key is not checked yet" in w.value for w in at.warning), page_text(at)
    assert at.session_state[connection.BASE_URL_KEY] == nowhere


def test_an_unreachable_address_is_said_plainly(dashboard_env):
    nowhere = f"http://127.0.0.1:{free_port()}/api/v3"
    at = save(open_settings(), base_url=nowhere, key="dk-a-key-for-that-address")  # the own key stays home
    at.button(key="settings.test").click().run()
    assert any(f"Could not reach {nowhere}" in e.value for e in at.error), page_text(at)


@pytest.mark.parametrize("typed", [
    "ark.example.com/api/v3",
    "ftp://ark.example.com/api/v3",
    "http://127.0.0.1:8000/api/v3?region=cn",
    "http://127.0.0.1:8000/api/v3#top",
    "http://127.0.0.1:8000/api/v3?",
])
def test_a_base_url_the_client_refuses_is_not_saved(dashboard_env, typed):
    at = save(open_settings(), base_url=typed, key="dk-a-key-that-must-not-be-kept")
    assert not at.exception
    message = base_url_problem(typed)
    assert message is not None  # the client's own rule refuses it, and the page says so in its words
    assert any(e.value == f"Base URL: {message}. Nothing was saved." for e in at.error), page_text(at)
    assert connection.BASE_URL_KEY not in at.session_state
    assert connection.API_KEY_KEY not in at.session_state  # nothing of the refused save is kept, not even the key
    assert len(connection.remembered_store()) == 0
    assert f"Connected to **{dashboard_env.base_url}**" in page_text(at)


def test_a_good_base_url_is_saved_as_the_client_writes_it(dashboard_env):
    at = save(open_settings(), base_url=f"  {dashboard_env.base_url}/  ")
    assert at.session_state[connection.BASE_URL_KEY] == dashboard_env.base_url
    at.button(key="settings.test").click().run()
    assert any(s.value.startswith("Connected:") for s in at.success), page_text(at)


# ---------- a bad base URL in the dashboard's environment ----------

BAD_ENV_URL = "http://127.0.0.1:8000/api/v3?tenant=a"


@pytest.mark.parametrize("page", ["compose.py", "tasks.py", "review.py", "settings.py"])
def test_a_bad_ark_base_url_crashes_no_page(dashboard_env, monkeypatch, page):
    monkeypatch.setenv("ARK_BASE_URL", BAD_ENV_URL)
    at = AppTest.from_file(str(VIEWS / page), default_timeout=30).run()
    assert not at.exception, [e.message for e in at.exception]
    errors = [e.value for e in at.error]
    problem = base_url_problem(BAD_ENV_URL)
    assert any("ARK_BASE_URL" in e and problem in e and "**Settings**" in e for e in errors), errors


def test_the_whole_app_opens_on_a_bad_ark_base_url_and_settings_mends_it(dashboard_env, monkeypatch):
    monkeypatch.setenv("ARK_BASE_URL", BAD_ENV_URL)
    app = AppTest.from_file(str(ROOT / "dashboard" / "app.py"), default_timeout=30).run()
    assert not app.exception
    assert any("ARK_BASE_URL" in e.value for e in app.error)
    app.switch_page("views/settings.py").run()
    assert not app.exception
    assert app.text_input[0].value == BAD_ENV_URL  # there to be corrected
    save(app, base_url=dashboard_env.base_url)
    assert not app.error, [e.value for e in app.error]
    app.switch_page("views/tasks.py").run()
    assert not app.exception and not app.error, [e.value for e in app.error]


def test_a_corrected_base_url_is_saved_on_the_first_press_and_the_field_shows_the_address_in_use(dashboard_env):
    typo = f"{dashboard_env.base_url}/typo"
    at = save(open_settings(), base_url=typo)
    assert at.text_input[0].value == typo  # the field shows the address now in use, not the one before
    assert f"Connected to **{typo}**" in page_text(at)
    at = save(at, base_url=dashboard_env.base_url, key=dashboard_env.api_key)  # one press mends it
    assert at.text_input[1].value == ""  # the key field never keeps the key
    assert at.session_state[connection.BASE_URL_KEY] == dashboard_env.base_url
    assert f"Connected to **{dashboard_env.base_url}**" in page_text(at)
    assert at.text_input[0].value == dashboard_env.base_url
    at.run()  # a later run keeps showing it
    assert at.text_input[0].value == dashboard_env.base_url
    at.button(key="settings.forget").click().run()  # back to the dashboard's own connection: the field follows
    assert at.text_input[0].value == dashboard_env.base_url
