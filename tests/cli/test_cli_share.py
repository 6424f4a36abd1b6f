"""`dailies share create|list|revoke` on the dashboard's journal of a data directory (no service: the
copies are kept already, and --project names the scope)."""

from __future__ import annotations

import argparse
import json

import pytest

from dailies.cli_share import duration
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
    from ..live_service import start_live_service

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
