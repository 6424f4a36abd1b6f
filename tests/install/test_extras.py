"""The extras of pyproject.toml, the CLI's table of them (dailies/cli/extras.py) and the oldest
versions' pins (constraints/lowest.txt) agree with each other."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from packaging.version import Version

from dailies.cli import build_parser
from dailies.cli import extras as cli_extras

ROOT = Path(__file__).resolve().parents[2]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
RUNTIME_EXTRAS = ("service", "dashboard", "team")


def _bounds(requirements: list[str]) -> dict[str, str]:
    found = {}
    for requirement in requirements:
        match = re.fullmatch(r"([A-Za-z0-9_.-]+)(?:\[[^]]*\])?>=([^,;\s]+)", requirement)
        if match:
            found[match[1].lower()] = match[2]
    return found


def test_a_requirement_in_two_extras_has_one_bound_and_lowest_pins_it():
    bounds: dict[str, str] = _bounds(PROJECT["dependencies"])
    for extra in RUNTIME_EXTRAS:
        for name, bound in _bounds(PROJECT["optional-dependencies"][extra]).items():
            assert bounds.setdefault(name, bound) == bound, (extra, name)
    pins = {name.lower(): Version(version) for name, version in (
        line.split("==") for line in (ROOT / "constraints" / "lowest.txt").read_text().splitlines()
        if line and not line.startswith("#"))}
    assert {name: pins.get(name) for name in bounds} == {name: Version(bound) for name, bound in bounds.items()}


def test_all_is_every_runtime_extra_and_the_core_is_the_clients():
    assert PROJECT["optional-dependencies"]["all"] == [f"dailies[{','.join(RUNTIME_EXTRAS)}]"]
    assert sorted(_bounds(PROJECT["dependencies"])) == ["anyio", "httpx", "pydantic"]


def test_every_command_that_needs_an_extra_names_one_there_is():
    commands = set(build_parser()._subparsers._group_actions[0].choices)
    assert set(cli_extras.COMMANDS) <= commands
    for needs in cli_extras.COMMANDS.values():
        assert set(needs) <= set(PROJECT["optional-dependencies"]) and set(needs) <= set(cli_extras.MODULES)
    # The client commands need the core alone.
    assert not {"create", "list", "get", "request", "cancel", "wait", "download"} & set(cli_extras.COMMANDS)


def test_a_command_without_its_extra_says_what_to_install(monkeypatch, capsys):
    from dailies.cli import main

    monkeypatch.setattr(cli_extras, "_installed", lambda module: module != "fastapi")
    assert main(["serve"]) == 2
    err = capsys.readouterr().err
    assert err == "dailies serve: needs the service extra, not installed (no module fastapi): " \
                  "pip install 'dailies[service]'\n"
    assert main(["up"]) == 2
    assert "pip install 'dailies[service]'" in capsys.readouterr().err  # the dashboard's are there


def test_a_missing_module_while_a_command_runs_names_its_extra(monkeypatch, capsys):
    from dailies.cli import main, tasks

    def needs_psycopg(_args):
        raise ModuleNotFoundError("No module named 'psycopg'", name="psycopg")

    monkeypatch.setattr(tasks, "cmd_list", needs_psycopg, raising=False)
    parser = build_parser()
    args = parser.parse_args(["list"])
    args.func = needs_psycopg
    monkeypatch.setattr("dailies.cli.build_parser", lambda: type("P", (), {"parse_args": lambda self, a: args})())
    assert main(["list"]) == 2
    assert capsys.readouterr().err.endswith("pip install 'dailies[team]'\n")
