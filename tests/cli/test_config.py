"""One list of settings (dailies/config.py): read at call time from the environment, then `.env`, then
defaults; checked at the start of every process (exit 2 naming the variable); `dailies config` prints
them with their sources, secrets masked; README's Configuration table and the code name the same ones."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from dailies import config
from dailies.cli import main
from dailies.cli.processes import settle_environment

ROOT = Path(__file__).resolve().parents[2]
SECRET = "sk-secret-0123456789abcdef"


@pytest.fixture(autouse=True)
def clean(monkeypatch, tmp_path):
    """No variable of the list set, and a working directory without a .env."""
    for name in config.names():
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


def test_every_variable_has_a_type_a_default_and_a_meaning():
    names = config.names()
    assert len(names) == len(set(names)) and len(names) >= 20
    for name, info in ((i.alias, i) for i in config.Environment.model_fields.values()):
        assert name and name == name.upper() and info.description, name
        assert info.annotation is not None
    assert config.current().dailies_data_dir == Path(".dailies")
    assert config.current().dailies_theme == "dark" and config.current().dailies_log_format == "text"


def test_settings_are_read_at_call_time(monkeypatch):
    assert config.current().dailies_dashboard_team is False
    monkeypatch.setenv("DAILIES_DASHBOARD_TEAM", "yes")
    assert config.current().dailies_dashboard_team is True
    monkeypatch.setenv("DAILIES_LOG_FORMAT", " JSON ")  # as --log-format takes it
    assert config.current().dailies_log_format == "json"
    monkeypatch.setenv("DAILIES_LOG_FORMAT", "")  # empty is unset
    assert config.current().dailies_log_format == "text"


def test_dotenv_fills_what_the_environment_does_not_set(monkeypatch, tmp_path):
    (tmp_path / ".env").write_text(f"DAILIES_THEME=light\nDAILIES_PUBLIC_URL=https://from-file\n"
                                   f"DAILIES_UPSTREAM_SECRET={SECRET}\n")
    monkeypatch.setenv("DAILIES_PUBLIC_URL", "https://from-env")
    settings = config.current()
    assert settings.dailies_theme == "light" and settings.dailies_public_url == "https://from-env"
    sources = {row.name: row.source for row in config.describe()}
    assert sources["DAILIES_THEME"] == ".env" and sources["DAILIES_PUBLIC_URL"] == "environment"
    assert sources["DAILIES_LOG_FORMAT"] == "default"


def test_a_bad_value_names_its_variable(monkeypatch):
    monkeypatch.setenv("DAILIES_THEME", "pink")
    with pytest.raises(config.ConfigError, match=r"^DAILIES_THEME: .*'light' or 'dark'"):
        config.current()
    assert config.check_at_start("serve").startswith("dailies serve cannot start: DAILIES_THEME: ")


def test_a_bad_secret_is_named_but_not_shown(monkeypatch, tmp_path):
    monkeypatch.setenv("DAILIES_DASHBOARD_TEAM", "perhaps")
    (tmp_path / ".env").write_text("")
    with pytest.raises(config.ConfigError) as raised:
        config.current()
    assert "DAILIES_DASHBOARD_TEAM" in str(raised.value) and "\n" not in str(raised.value)


@pytest.mark.parametrize("command", [["serve", "--port", "1"], ["worker", "--slots", "1"], ["dashboard"],
                                     ["up", "--api-port", "1"]])
def test_processes_exit_2_at_start_on_a_bad_value(monkeypatch, capsys, command):
    monkeypatch.setenv("DAILIES_DASHBOARD_TEAM", "perhaps")
    assert main(command) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"dailies {command[0]} cannot start: DAILIES_DASHBOARD_TEAM: "), err


def test_a_process_takes_dotenv_values_for_its_options(monkeypatch, tmp_path):
    import argparse
    import os

    (tmp_path / ".env").write_text("DAILIES_PUBLIC_URL=https://dailies.example\nDAILIES_LOG_FORMAT=json\n"
                                   "AWS_SECRET_ACCESS_KEY=boto3s-own\n")
    monkeypatch.delenv("AWS_SECRET_ACCESS_KEY", raising=False)
    args = argparse.Namespace(command="serve", public_url=None, log_format=None, storage="s3://given")
    try:
        assert settle_environment(args)
        assert args.public_url == "https://dailies.example" and args.log_format == "json"
        assert args.storage == "s3://given"  # the command line wins
        assert os.environ["AWS_SECRET_ACCESS_KEY"] == "boto3s-own"  # for what reads the environment itself
    finally:
        for name in ("DAILIES_PUBLIC_URL", "DAILIES_LOG_FORMAT", "AWS_SECRET_ACCESS_KEY"):
            os.environ.pop(name, None)


def test_dailies_config_prints_values_and_sources_with_secrets_masked(monkeypatch, capsys, tmp_path):
    monkeypatch.setenv("DAILIES_API_KEYS", f"alpha:{SECRET},{SECRET}2")
    monkeypatch.setenv("DAILIES_DATABASE_URL", "postgresql://dailies:hunter2-password@db:5432/dailies")
    (tmp_path / ".env").write_text(f"ARK_API_KEY={SECRET}\nDAILIES_THEME=light\n")
    assert main(["config"]) == 0
    out = capsys.readouterr().out
    assert SECRET not in out and "hunter2" not in out
    lines = {line.split()[0]: line.split()[1:] for line in out.splitlines()}
    assert set(lines) == set(config.names())
    assert lines["DAILIES_API_KEYS"] == ["alpha:sk-se…cdef,sk-se…def2", "environment"]
    assert lines["DAILIES_DATABASE_URL"] == ["postgresql://dailies:***@db:5432/dailies", "environment"]
    assert lines["ARK_API_KEY"] == ["sk-se…cdef", ".env"] and lines["DAILIES_THEME"] == ["light", ".env"]
    assert lines["DAILIES_LOG_FORMAT"] == ["text", "default"]

    assert main(["config", "--json"]) == 0
    rows = {row["name"]: row for row in json.loads(capsys.readouterr().out)}
    assert rows["ARK_API_KEY"] == {"name": "ARK_API_KEY", "value": "sk-se…cdef", "source": ".env", "secret": True,
                                   "description": rows["ARK_API_KEY"]["description"]}
    assert rows["DAILIES_SIGNIN_GROUPS_CLAIM"]["value"] == "groups" and not rows["DAILIES_THEME"]["secret"]


def test_dailies_config_exits_2_naming_a_bad_value(monkeypatch, capsys):
    monkeypatch.setenv("DAILIES_LOG_FORMAT", "xml")
    assert main(["config"]) == 2
    assert capsys.readouterr().err.startswith("dailies config: DAILIES_LOG_FORMAT: ")


def _readme_configuration() -> str:
    text = (ROOT / "README.md").read_text()
    start = text.index("\n## Configuration\n")
    return text[start:text.index("\n## ", start + 1)]


VARIABLE = re.compile(r"`((?:DAILIES|ARK|AWS|FORWARDED)_[A-Z_]+)`")


def test_the_readme_table_lists_exactly_the_settings():
    table = set(VARIABLE.findall(_readme_configuration()))
    table.discard("AWS_")  # "the standard `AWS_*` settings"
    assert table == set(config.names()), (f"missing from README: {set(config.names()) - table}; "
                                          f"not settings: {table - set(config.names())}")


def test_the_code_reads_no_variable_the_list_lacks():
    """Every DAILIES_* name the code spells is a setting of dailies/config.py."""
    spelled = set()
    for folder in ("dailies", "components", "dashboard"):
        for path in (ROOT / folder).rglob("*.py"):
            spelled |= set(re.findall(r"[\"'](DAILIES_[A-Z_]+)[\"']", path.read_text()))
    assert spelled and spelled <= set(config.names()), spelled - set(config.names())
