"""The Settings page: where the connection comes from, the key never shown whole, the connection
test against the live service (success, a refused key, an unreachable address), and a typed base
URL checked before it is saved."""

from __future__ import annotations

from pathlib import Path

from streamlit.testing.v1 import AppTest

from ..live_service import free_port

PAGE = Path(__file__).resolve().parents[2] / "dashboard" / "views" / "settings.py"


def page_text(at: AppTest) -> str:
    parts = [m.value for m in at.markdown] + [e.value for e in at.success] + [e.value for e in at.error]
    return "\n".join(str(p) for p in parts)


def open_settings() -> AppTest:
    return AppTest.from_file(str(PAGE), default_timeout=30).run()


def test_env_connection_is_shown_with_a_masked_key_and_tests_ok(dashboard_env):
    at = open_settings()
    text = page_text(at)
    key = dashboard_env.api_key
    assert dashboard_env.base_url in text and "local Dailies service" in text
    assert key not in text and f"{key[:4]}…{key[-4:]}" in text
    assert at.text_input[1].value == ""  # the key field never holds the key
    at.button(key="settings.test").click().run()
    assert any(s.value.startswith("Connected:") for s in at.success), page_text(at)


def test_a_refused_key_is_said_plainly(dashboard_env):
    at = open_settings()
    at.text_input[1].input("dk-not-a-real-key-at-all")
    at.button[0].click().run()  # Save (the form's submit button)
    assert any("Saved" in s.value for s in at.success)
    at.button(key="settings.test").click().run()
    assert any("refused the API key (401)" in e.value for e in at.error), page_text(at)


def test_an_unreachable_address_is_said_plainly(dashboard_env):
    at = open_settings()
    nowhere = f"http://127.0.0.1:{free_port()}/api/v3"
    at.text_input[0].input(nowhere)
    at.button[0].click().run()
    at.button(key="settings.test").click().run()
    assert any(f"Could not reach {nowhere}" in e.value for e in at.error), page_text(at)


def test_a_base_url_that_is_not_an_address_is_not_saved(dashboard_env):
    at = open_settings()
    at.text_input[0].input("ark.example.com/api/v3")
    at.button[0].click().run()
    assert any("Base URL: 'ark.example.com/api/v3' is not an http:// or https:// address" in e.value
               for e in at.error)
    assert "settings.base_url" not in at.session_state
    assert dashboard_env.base_url in page_text(at)
