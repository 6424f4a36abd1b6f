"""`dailies share create|list|revoke` on the dashboard's journal of a data directory (no service: the
copies are kept already, and --project names the scope)."""

from __future__ import annotations

import argparse
import json
import os

import pytest

from dailies.cli.share import duration
from dailies.journal import Journal, Scope, ShareRefused
from dailies.spec.results import VIDEO_NAME

from .running import run

BASE = "http://127.0.0.1:8000/api/v3"


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    for name in ("ARK_API_KEY", "ARK_BASE_URL", "DAILIES_DATABASE_URL", "DAILIES_STORAGE", "DAILIES_DASHBOARD_URL"):
        monkeypatch.delenv(name, raising=False)
    journal = Journal(tmp_path / "dashboard" / "journal.sqlite3", database_url="", storage="")
    view = journal.scoped(Scope.of_project(BASE, "studio"))
    for task in ("cgt-1", "cgt-2"):
        path = view.keep_path(task, VIDEO_NAME)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"video " + task.encode())
        view.mark_kept(task, VIDEO_NAME, path)
    journal.close()
    return tmp_path


def journal_of(data_dir) -> Journal:
    return Journal(data_dir / "dashboard" / "journal.sqlite3", database_url="", storage="")


def test_create_list_and_revoke(data_dir):
    code, out, err = run("share", "create", "--task", "cgt-1", "--task", "cgt-2", "--project", "studio",
                         "--base-url", BASE, "--as", "Ana", "--expires", "30d", "--passphrase", "sesame",
                         "--allow-comments", "--hide-prompt", "--data-dir", str(data_dir),
                         "--dashboard-url", "https://dailies.example/", "--json")
    assert code == 0, err
    made = json.loads(out)
    assert made["created_by"] == "Ana" and made["tasks"] == ["cgt-1", "cgt-2"]
    assert made["link"] == f"https://dailies.example/guest?share={made['token']}"
    assert len(made["token"]) >= 43
    journal = journal_of(data_dir)
    try:
        share = journal.open_share(made["token"])
        assert share.id == made["id"] and share.allow_comments and share.hide_prompt and share.has_passphrase
        assert not share.allow_status
        assert share.expires_at - share.created_at == 30 * 86_400
        assert share.scope == Scope.of_project(BASE, "studio").name
    finally:
        journal.close()

    code, out, _ = run("share", "list", "--project", "studio", "--base-url", BASE, "--data-dir", str(data_dir))
    assert code == 0 and made["id"] in out and "by Ana" in out and "active" in out
    assert made["token"] not in out
    code, out, _ = run("share", "list", "--project", "other", "--base-url", BASE, "--data-dir", str(data_dir))
    assert code == 0 and made["id"] not in out

    code, out, _ = run("share", "revoke", made["id"], "--data-dir", str(data_dir), "--json")
    assert code == 0 and json.loads(out) == {"id": made["id"], "revoked": True}
    code, _, err = run("share", "revoke", made["id"], "--data-dir", str(data_dir))
    assert code == 1 and "no share" in err
    journal = journal_of(data_dir)
    try:
        with pytest.raises(ShareRefused):
            journal.open_share(made["token"])
    finally:
        journal.close()
    code, out, _ = run("share", "list", "--data-dir", str(data_dir), "--json")
    assert [(s["id"], s["state"], s["created_by"]) for s in json.loads(out)] == [(made["id"], "revoked", "Ana")]


def test_without_a_link_base_the_token_is_printed_once(data_dir):
    code, out, err = run("share", "create", "--task", "cgt-1", "--project", "studio", "--base-url", BASE,
                         "--as", "Ana", "--data-dir", str(data_dir))
    assert code == 0, err
    assert "token (shown once)" in out and "/guest?share=" in out


def test_a_share_needs_a_project_or_a_key(data_dir):
    with pytest.raises(SystemExit):
        run("share", "create", "--task", "cgt-1", "--base-url", BASE, "--data-dir", str(data_dir))


@pytest.mark.parametrize(("text", "seconds"), [("7d", 7 * 86_400), ("24h", 86_400), ("30m", 1800), ("2w", 14 * 86_400),
                                               ("90s", 90), ("1", 86_400), ("366d", 366 * 86_400)])
def test_durations(text, seconds):
    assert duration(text) == seconds


@pytest.mark.parametrize("text", ["", "0d", "-1d", "7 days", "d", "99999w", "367d", "53w"])
def test_bad_durations(text):
    with pytest.raises(argparse.ArgumentTypeError):
        duration(text)


def test_a_key_cannot_share_into_another_project_than_its_own(data_dir, tmp_path):
    """On a Dailies service the key's project is known (/dailies/v1/me): naming another with --project is
    refused, so a member cannot make a guest link to another project's versions (which the key cannot
    even read) nor keep copies downloaded with the key in another project's journal."""
    from tests.support.live_service import start_live_service

    keys = {"dk-alpha-0000000000000000000000": "alpha", "dk-beta-00000000000000000000000": "beta"}
    service = start_live_service(tmp_path / "service", workers=0, api_keys=keys)
    try:
        journal = journal_of(data_dir)
        beta = journal.scoped(Scope.of_project(service.base_url, "beta"))
        path = beta.keep_path("cgt-b", VIDEO_NAME)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"beta's video")
        beta.mark_kept("cgt-b", VIDEO_NAME, path)
        journal.close()
        common = ("--task", "cgt-b", "--project", "beta", "--base-url", service.base_url,
                  "--data-dir", str(data_dir), "--json")

        with pytest.raises(SystemExit, match="belongs to project 'alpha', not 'beta'"):
            run("share", "create", "--api-key", "dk-alpha-0000000000000000000000", *common)
        journal = journal_of(data_dir)
        try:
            assert journal.scoped(Scope.of_project(service.base_url, "beta")).shares() == []
        finally:
            journal.close()

        code, out, err = run("share", "create", "--api-key", "dk-beta-00000000000000000000000", *common)
        assert code == 0, err
        assert json.loads(out)["tasks"] == ["cgt-b"]
    finally:
        service.stop()


# ---------- Finding C: the dashboard a link opens on, said when the share is made ----------


def _share_next_to(data_dir, *extra: str) -> tuple[int, str, str]:
    return run("share", "create", "--task", "cgt-1", "--project", "studio", "--base-url", BASE, "--as", "Ana",
               "--data-dir", str(data_dir), *extra)


def test_next_to_one_persons_dailies_up_the_link_is_whole_and_said_to_open_for_no_guest(data_dir):
    """`dailies share create` beside a local `dailies up` printed `<dashboard>/guest?share=...`, and the
    link then opened on "not set up for guests". Now the whole link, and why no guest can open it, and
    what to do, at once."""
    from dailies.launcher import RunningDashboard, record_running_dashboard

    record_running_dashboard(data_dir, RunningDashboard("http://127.0.0.1:8501", team=False, sign_in=False,
                                                        pid=os.getpid()))
    code, out, err = _share_next_to(data_dir, "--json")
    assert code == 0, err
    made = json.loads(out)
    assert made["link"] == f"http://127.0.0.1:8501/guest?share={made['token']}"
    assert made["guests_can_open"] is False
    assert "no guest can open this link yet" in err and "dailies up --team" in err and "sign-in" in err
    code, out, err = _share_next_to(data_dir)
    assert code == 0 and "http://127.0.0.1:8501/guest?share=" in out and "no guest can open" in err
    # The share itself is made: it opens once the dashboard restarts in team mode (same journal).
    journal = journal_of(data_dir)
    try:
        assert journal.open_share(made["token"]).task_ids == ("cgt-1",)
    finally:
        journal.close()


@pytest.mark.parametrize(("team", "sign_in"), [(True, False), (False, True)])
def test_next_to_a_team_or_sign_in_dailies_up_the_link_opens(data_dir, team, sign_in):
    from dailies.launcher import RunningDashboard, record_running_dashboard

    record_running_dashboard(data_dir, RunningDashboard("http://127.0.0.1:8502", team, sign_in, os.getpid()))
    code, out, err = _share_next_to(data_dir, "--json")
    made = json.loads(out)
    assert code == 0 and made["link"].startswith("http://127.0.0.1:8502/guest?share=") and made["guests_can_open"]
    assert "no guest can open" not in err
    assert "reaches this machine only" in err and "--dashboard-url" in err
    # An address the guests reach, given: the whole link on it, nothing more to say.
    code, out, err = _share_next_to(data_dir, "--json", "--dashboard-url", "http://127.0.0.1:8502/")
    assert code == 0 and json.loads(out)["guests_can_open"] and "no guest" not in err


def test_a_dailies_up_that_is_gone_or_another_dashboard_is_not_taken_for_the_links(data_dir):
    import subprocess
    import sys

    from dailies.launcher import RunningDashboard, record_running_dashboard

    ended = subprocess.Popen([sys.executable, "-c", "pass"])
    ended.wait()
    record_running_dashboard(data_dir, RunningDashboard("http://127.0.0.1:8501", False, False, ended.pid))
    code, out, err = _share_next_to(data_dir, "--json")
    made = json.loads(out)
    assert code == 0 and made["link"] is None and made["guests_can_open"] is None
    assert "team dashboard" in err and "--dashboard-url" in err and "no guest can open" not in err
    code, out, err = _share_next_to(data_dir, "--json", "--dashboard-url", "https://review.example")
    made = json.loads(out)
    assert made["link"].startswith("https://review.example/guest?share=") and err == ""


def test_dailies_up_records_its_dashboard_while_it_runs(tmp_path, monkeypatch):
    """What `dailies share create` reads: written once the dashboard answers, removed when `up` stops."""
    from dailies import launcher

    seen = []

    class Child:
        returncode = None

        def poll(self):
            seen.append(launcher.running_dashboard(tmp_path))
            return 0  # the child "stopped": `up` stops too

        def terminate(self):
            pass

        def wait(self, timeout=None):
            return 0

    monkeypatch.setattr(launcher, "check_port_free", lambda *a: None)
    monkeypatch.setattr(launcher, "wait_until_up", lambda *a, **k: None)
    monkeypatch.setattr(launcher.subprocess, "Popen", lambda *a, **k: Child())
    monkeypatch.setattr(launcher, "sign_in_configured", lambda cwd: False)
    assert launcher.run_up(tmp_path, 18000, 18501, team=True) == 1
    assert seen[0] == launcher.RunningDashboard("http://127.0.0.1:18501", True, False, os.getpid(),
                                             "http://127.0.0.1:18000/api/v3")
    assert launcher.running_dashboard(tmp_path) is None


def test_sign_in_is_found_where_streamlit_reads_the_dashboards_secrets(tmp_path, monkeypatch):
    from dailies.launcher import sign_in_configured

    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    cwd = tmp_path / "data"
    (cwd / ".streamlit").mkdir(parents=True)
    assert not sign_in_configured(cwd)
    (cwd / ".streamlit" / "secrets.toml").write_text('[other]\nx = 1\n')
    assert not sign_in_configured(cwd)
    (cwd / ".streamlit" / "secrets.toml").write_text('[auth]\nclient_id = "dailies"\n')
    assert sign_in_configured(cwd)
    (cwd / ".streamlit" / "secrets.toml").write_text("[auth\n")  # Streamlit would not read it either
    assert not sign_in_configured(cwd)
    (tmp_path / "home" / ".streamlit").mkdir(parents=True)
    (tmp_path / "home" / ".streamlit" / "secrets.toml").write_text('[auth]\nclient_id = "dailies"\n')
    assert sign_in_configured(cwd)
