"""Team mode: a shared dashboard has no key of its own; the key a person saves is remembered for their
browser (a cookie token, simulated here: AppTest has no browser) and for no other; forgetting it
ends it. Single-user mode keeps the key `dailies up` hands the dashboard."""

from __future__ import annotations

from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from components.common import browser_cookie, connection
from dailies import cli, launcher
from dailies.api_keys import mask
from tests.dashboard.conftest import SECOND_KEY as KEY

VIEWS = Path(__file__).resolve().parents[2] / "dashboard" / "views"


@pytest.fixture
def team(dashboard_env, monkeypatch):
    monkeypatch.setenv("DAILIES_DASHBOARD_TEAM", "1")  # ARK_API_KEY stays set: it must be ignored
    return dashboard_env


@pytest.fixture
def browser(monkeypatch):
    """The cookies of the simulated browser a new session opens with: {name: value}."""
    jar: dict[str, str] = {}
    monkeypatch.setattr(browser_cookie, "read", lambda name: jar.get(name))
    return jar


def open_page(page: str) -> AppTest:
    return AppTest.from_file(str(VIEWS / page), default_timeout=30).run()


def key_shown(at: AppTest) -> str:
    line = next(m.value for m in at.markdown if m.value.startswith("Connected to"))
    return line.rsplit("API key: `", 1)[1].rstrip("`.")


def save_key(at: AppTest, key: str) -> AppTest:
    at.text_input[1].input(key)
    at.button[0].click()
    return at.run()


def test_a_team_dashboard_has_no_key_of_its_own(team, browser):
    settings = open_page("settings.py")
    assert key_shown(settings) == "(none)"
    assert any("shared by a team" in i.value for i in settings.info)
    assert settings.button(key="settings.test").disabled
    tasks = open_page("tasks.py")
    assert not tasks.exception
    assert any("No API key yet. This dashboard is shared" in w.value for w in tasks.warning)


def test_a_saved_key_survives_a_new_session_of_that_browser_only(team, browser):
    at = save_key(open_page("settings.py"), KEY)
    assert not at.exception
    assert key_shown(at) == mask(KEY)
    token = at.session_state[connection.TOKEN_KEY]
    store = connection.remembered_store()
    assert store.lookup(token).api_key == KEY

    browser[store.cookie_name] = token  # the script set the cookie; a reload or a new tab sends it
    again = open_page("settings.py")
    assert key_shown(again) == mask(KEY)
    tasks = open_page("tasks.py")
    assert not tasks.exception and not tasks.warning

    browser.clear()  # another browser: no cookie
    assert key_shown(open_page("settings.py")) == "(none)"
    browser[store.cookie_name] = "a-token-this-dashboard-never-gave-out-0000000"
    assert key_shown(open_page("settings.py")) == "(none)"


def test_forget_ends_the_key_here_and_for_every_tab(team, browser):
    at = save_key(open_page("settings.py"), KEY)
    token = at.session_state[connection.TOKEN_KEY]
    store = connection.remembered_store()
    browser[store.cookie_name] = token
    at = open_page("settings.py")
    at.button(key="settings.forget").click().run()
    assert not at.exception
    assert any("Forgotten" in s.value for s in at.success)
    assert key_shown(at) == "(none)" and store.lookup(token) is None and len(store) == 0
    assert key_shown(open_page("settings.py")) == "(none)"  # another tab still sending the old cookie


def test_a_new_key_starts_the_pages_afresh(team, browser):
    at = AppTest.from_file(str(VIEWS / "settings.py"), default_timeout=30)
    at.session_state["tasks.status"] = "failed"  # a filter chosen under the previous key
    at.session_state["review.notes.cgt-20260101120000-abcde"] = "notes typed under the previous key"
    save_key(at.run(), KEY)
    assert "tasks.status" not in at.session_state
    assert "review.notes.cgt-20260101120000-abcde" not in at.session_state
    assert at.session_state[connection.API_KEY_KEY] == KEY


def test_single_user_mode_keeps_the_dashboards_key_and_forget_returns_to_it(dashboard_env, browser):
    at = open_page("settings.py")
    assert key_shown(at) == mask(dashboard_env.api_key)
    save_key(at, KEY)
    assert key_shown(at) == mask(KEY)
    at.button(key="settings.forget").click().run()
    assert key_shown(at) == mask(dashboard_env.api_key)


# ---------- starting a team dashboard ----------


def test_the_dashboards_environment_in_each_mode(tmp_path):
    inherited = {"ARK_API_KEY": "someone-elses-key-000", "PATH": "/bin"}
    team = launcher.dashboard_env(inherited, "http://127.0.0.1:8000/api/v3", "local-key-000000000", tmp_path, True)
    assert "ARK_API_KEY" not in team and team["DAILIES_DASHBOARD_TEAM"] == "1"
    assert team["ARK_BASE_URL"] == "http://127.0.0.1:8000/api/v3" and team["DAILIES_DATA_DIR"] == str(tmp_path)
    solo = launcher.dashboard_env({"DAILIES_DASHBOARD_TEAM": "1"}, None, "local-key-000000000", None, False)
    assert solo["ARK_API_KEY"] == "local-key-000000000" and "DAILIES_DASHBOARD_TEAM" not in solo


@pytest.mark.parametrize(("argv", "environ", "team"), [
    (["dashboard", "--team"], {}, True),
    (["dashboard"], {"DAILIES_DASHBOARD_TEAM": "1"}, True),
    (["dashboard"], {}, False),
])
def test_dailies_dashboard_team(monkeypatch, tmp_path, argv, environ, team):
    started = {}
    monkeypatch.setattr(launcher, "run_child", lambda cmd, env: started.update(cmd=cmd, env=env) or 0)
    monkeypatch.delenv("DAILIES_DASHBOARD_TEAM", raising=False)
    monkeypatch.setenv("ARK_API_KEY", "the-servers-own-key-0000")
    for name, value in environ.items():
        monkeypatch.setenv(name, value)
    assert cli.main([*argv, "--data-dir", str(tmp_path), "--ui-port", "8765"]) == 0
    assert started["cmd"][started["cmd"].index("--server.port") + 1] == "8765"
    assert started["env"]["DAILIES_DATA_DIR"] == str(tmp_path.resolve())
    assert ("ARK_API_KEY" in started["env"]) is not team
    assert launcher.team_mode_in(started["env"]) is team
