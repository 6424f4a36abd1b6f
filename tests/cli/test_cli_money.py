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
from dailies.service.keys import load_key_options, load_keys

from ..live_service import start_live_service
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
    assert run("budget", "set", "--project", "studio", "--key", "alice", "--amount", "1", "--currency", "CNY",
               "--data-dir", data)[0] == 0
    # The keys and options `dailies keys create` wrote, as `dailies serve` reads them from the keys file.
    live = start_live_service(tmp_path, workers=1, api_keys=load_keys(tmp_path),
                              key_options=load_key_options(tmp_path))
    try:
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
