"""`dailies keys create --name --rpm`, `dailies budget` and `dailies spend` on a data directory whose
service really takes the key, reserves, settles and refuses."""

from __future__ import annotations

import csv
import io
import re
from datetime import date

import httpx
import pytest

from dailies.client import Client
from dailies.service.access.keys import load_key_options, load_keys
from dailies.service.api.app import create_app
from dailies.service.settings import Settings
from tests.support.live_service import start_live_service

from .running import run

BODY = {"model": "doubao-seedance-1-0-pro-250528", "resolution": "480p", "duration": 2,
        "content": [{"type": "text", "text": "a budgeted shot"}]}


def test_keys_budget_and_spend_from_the_command_line(tmp_path):
    data = str(tmp_path)
    code, out, _ = run("keys", "create", "--data-dir", data, "--project", "studio", "--name", "alice",
                       "--rpm", "100")
    assert code == 0
    key = re.search(r"key\s+(\S+)", out).group(1)
    code, out, _ = run("keys", "--data-dir", data)
    assert "(alice)" in out and key not in out
    # The keys and options `dailies keys create` wrote, as `dailies serve` reads them from the keys file.
    live = start_live_service(tmp_path, workers=1, api_keys=load_keys(tmp_path),
                              key_options=load_key_options(tmp_path))
    try:
        assert run("budget", "set", "--project", "studio", "--key", "alice", "--amount", "1", "--currency", "CNY",
                   "--data-dir", data)[0] == 0
        with Client(base_url=live.base_url, api_key=key) as client:
            me = httpx.get(live.base_url.replace("/api/v3", "/dailies/v1/me"),
                           headers={"Authorization": f"Bearer {key}"}).json()
            assert me["member"] == "alice" and me["limits"]["rpm"] == 100
            first = client.tasks.create(BODY).id
            client.wait(first, timeout=120)
            # ¥1 at ¥15 per million tokens: about 66,000 tokens; the first clip took some of it.
            for _ in range(20):
                try:
                    client.tasks.create(BODY)
                except Exception as exc:  # the budget's refusal, as the client raises it
                    refusal = exc
                    break
            else:
                raise AssertionError("the budget never refused a create")
        assert getattr(refusal, "status_code", None) == 403 and refusal.code == "AccountOverdueError.BudgetExceeded"
    finally:
        live.stop()
    code, out, _ = run("budget", "list", "--project", "studio", "--data-dir", data)
    assert code == 0 and "member alice" in out and "budget        ¥1.00" in out
    code, out, _ = run("spend", "--project", "studio", "--since", date.today().isoformat(), "--csv", "--data-dir", data)
    rows = list(csv.DictReader(io.StringIO(out)))
    settled = [r for r in rows if r["state"] == "settled"]
    assert settled and settled[0]["member"] == "alice" and settled[0]["currency"] == "CNY"
    assert float(settled[0]["amount"]) > 0
    # Not a gateway: no upstream key spent anything; and a project or --upstream must be named.
    assert run("spend", "--upstream", "--data-dir", data)[1].startswith("Nothing spent through upstream keys")
    with pytest.raises(SystemExit, match="--project P"):
        run("spend", "--data-dir", data)
    with pytest.raises(SystemExit, match="--rpm must be 1 or more"):
        run("keys", "create", "--data-dir", data, "--rpm", "0")


def test_money_commands_never_make_a_database_of_their_own(tmp_path, monkeypatch):
    """From the wrong directory (or a mistyped --data-dir) budget, spend and upstream find no service
    database: they say so (exit 2) instead of making an empty one and reporting a budget no service
    reads."""
    monkeypatch.delenv("DAILIES_DATABASE_URL", raising=False)
    missing = tmp_path / "not-the-service"
    for argv in (("budget", "set", "--project", "studio", "--amount", "0", "--currency", "CNY"),
                 ("budget", "list", "--project", "studio"), ("spend", "--project", "studio"),
                 ("upstream", "list"), ("upstream", "add", "--name", "main", "--key", "k")):
        code, out, err = run(*argv, "--data-dir", str(missing))
        assert code == 2 and out == "", argv
        assert f"no service database at {missing / 'dailies.sqlite3'}" in err and "--database-url" in err
    code, _, err = run("spend", "--project", "studio", "--database-url", f"sqlite:///{missing}/x.sqlite3")
    assert code == 2 and f"{missing}/x.sqlite3" in err
    assert not missing.exists()


def test_a_budget_for_a_project_or_member_without_a_key_needs_force(tmp_path, monkeypatch):
    """A typo in --project or --key would cap nothing: refused, naming the projects or members there are."""
    from dailies.service.db.engine import make_engine

    monkeypatch.delenv("DAILIES_DATABASE_URL", raising=False)
    monkeypatch.setenv("DAILIES_API_KEYS", "lab:sk-lab-0123456789;name=bob")
    data = str(tmp_path)
    make_engine(tmp_path / "dailies.sqlite3").dispose()  # the service's database, as its first start makes it
    assert run("keys", "create", "--data-dir", data, "--project", "studio", "--name", "alice")[0] == 0
    budget = ("budget", "set", "--amount", "1", "--currency", "CNY", "--data-dir", data)
    code, out, err = run(*budget, "--project", "typo-project")
    assert code == 2 and out == ""
    assert "no key belongs to project typo-project" in err and "lab, studio" in err and "--force" in err
    code, _, err = run(*budget, "--project", "studio", "--key", "nobody")
    assert code == 2 and "member name nobody" in err and "alice" in err
    assert run("budget", "list", "--project", "studio", "--data-dir", data)[1].startswith("No budget")
    assert run(*budget, "--project", "studio", "--key", "alice")[0] == 0
    assert run(*budget, "--project", "lab", "--key", "bob")[0] == 0  # a key of DAILIES_API_KEYS
    assert run(*budget, "--project", "later", "--force")[0] == 0
    _, out, _ = run("budget", "list", "--project", "later", "--data-dir", data)
    assert "whole project" in out
    code, out, _ = run("budget", "remove", "--project", "studio", "--key", "alice", "--data-dir", data)
    assert (code, out) == (0, "removed the budget of member alice of project studio\n")


def test_a_budget_in_another_currency_replaces_the_first_only_with_force(tmp_path, monkeypatch):
    """A budget holds one currency: setting one in the other would drop the first (and what it kept count
    of) without a word, as following a member's refusal literally once did. It takes --force."""
    from dailies.service.db.engine import make_engine

    monkeypatch.delenv("DAILIES_DATABASE_URL", raising=False)
    data = str(tmp_path)
    make_engine(tmp_path / "dailies.sqlite3").dispose()
    assert run("keys", "create", "--data-dir", data, "--project", "studio", "--name", "alice")[0] == 0
    budget = ("budget", "set", "--project", "studio", "--data-dir", data)
    assert run(*budget, "--amount", "100", "--currency", "CNY")[0] == 0
    assert run(*budget, "--amount", "120", "--currency", "CNY")[0] == 0  # same currency: a new amount
    code, out, err = run(*budget, "--amount", "20", "--currency", "USD")
    assert code == 2 and out == ""
    assert "project studio has a budget of ¥120.00 a month, in CNY" in err and "--force" in err
    assert "¥120.00" in run("budget", "list", "--project", "studio", "--data-dir", data)[1]
    assert run(*budget, "--amount", "20", "--currency", "USD", "--force")[0] == 0
    assert "$20.00" in run("budget", "list", "--project", "studio", "--data-dir", data)[1]


def test_keys_budgets_and_upstream_keys_are_set_before_the_first_start(tmp_path, monkeypatch, backend):
    """Finding A: README's order is keys, budget, then serve, but `budget set` on the directory `keys
    create` had just written said "no service database". The service's first start then reads them."""
    import time

    from dailies.service.billing import budgets

    for name in ("DAILIES_DATABASE_URL", "DAILIES_API_KEYS"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("DAILIES_UPSTREAM_SECRET", run("upstream", "new-secret")[1].splitlines()[0])
    data_dir = tmp_path / "service"
    where = ("--database-url", backend.database_url) if backend.team else ("--data-dir", str(data_dir))
    code, out, _ = run("keys", "create", "--project", "studio", "--name", "alice", *where)
    assert code == 0
    key = re.search(r"key\s+(\S+)", out).group(1)
    assert not (data_dir / "dailies.sqlite3").exists()  # what the service's first start finds
    for argv in (("budget", "set", "--project", "studio", "--amount", "5", "--currency", "CNY"),
                 ("budget", "set", "--project", "studio", "--key", "alice", "--amount", "2", "--currency", "CNY"),
                 ("upstream", "add", "--name", "main", "--key", "ark-upstream-before-the-start-01")):
        code, _, err = run(*argv, *where)
        assert (code, err) == (0, ""), argv
    assert "member alice" in run("budget", "list", "--project", "studio", *where)[1]

    settings = Settings(data_dir=data_dir, workers=0, log_requests=False, upstream_url="https://upstream.invalid/api/v3",
                        **backend.settings())
    services = create_app(settings, start_background=False).state.services
    try:
        assert services.api_keys.get(key) == "studio"
        assert [k.name for k in services.generator.keys] == ["main"]
        with services.engine.connect() as conn:
            status = budgets.budget_status(conn, "studio", time.time())
        assert sorted((s.member, budgets.money(s.amount, s.currency)) for s in status) == [
            ("", "¥5.00"), ("alice", "¥2.00")]
    finally:
        services.stop()


def test_a_money_command_prepares_only_a_directory_that_keys_create_wrote(tmp_path, monkeypatch):
    """The earlier protection holds: a directory without the service's keys (a typo, another project's
    folder) gets no database; the one `keys create` wrote does, once."""
    monkeypatch.delenv("DAILIES_DATABASE_URL", raising=False)
    stray = tmp_path / "elsewhere"
    stray.mkdir()
    (stray / "notes.txt").write_text("not a data directory")
    code, _, err = run("budget", "list", "--project", "studio", "--data-dir", str(stray))
    assert code == 2 and "no service database" in err and "keys create" in err
    assert sorted(p.name for p in stray.iterdir()) == ["notes.txt"]
