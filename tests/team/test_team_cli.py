"""The team deployment from the command line: `dailies keys --database-url`, and the help of
`dailies serve` and `dailies worker`, which tell the same story as README's "Team deployment"."""

from __future__ import annotations

import io
import re
from contextlib import redirect_stderr, redirect_stdout

import pytest

from dailies.cli import main

from ..conftest import open_backend


def run(*argv: str) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out), redirect_stderr(io.StringIO()):
        try:
            code = main(list(argv))
        except SystemExit as exc:  # --help
            code = exc.code
    return code, out.getvalue()


@pytest.mark.parametrize("command", ["serve", "worker"])
def test_help_of_serve_and_worker_describes_the_team_deployment(command):
    code, text = run(command, "--help")
    assert code == 0
    for words in ("--database-url", "DAILIES_DATABASE_URL", "--storage", "DAILIES_STORAGE", "AWS_ENDPOINT_URL",
                  "dailies serve --slots 0", "dailies worker", "dailies[service,team]", "presigned"):
        assert words in text, words


def test_keys_made_in_the_database_are_printed_once_and_listed_masked(request, monkeypatch):
    with open_backend(request, "pg+s3") as team:
        monkeypatch.delenv("DAILIES_API_KEYS", raising=False)
        code, out = run("keys", "create", "--project", "studio", "--database-url", team.database_url)
        assert code == 0
        key = re.search(r"^key\s+(\S+)$", out, re.M).group(1)
        secret = re.search(r"^webhook secret (whsec_\S+)$", out, re.M).group(1)
        code, listed = run("keys", "--database-url", team.database_url)
        assert code == 0 and "project studio" in listed and secret in listed
        assert key not in listed and f"{key[:5]}…{key[-4:]}" in listed
