"""The dashboard's theme and upload size (dailies/launcher.py `streamlit_command`): the launcher's values
are defaults, passed as flags only when Streamlit's own settings (a config.toml it reads, STREAMLIT_*)
do not set them; `--theme` wins over all; DAILIES_THEME chooses between the two palettes."""

from __future__ import annotations

from pathlib import Path

import pytest

from dailies.cli import build_parser
from dailies.launcher import THEMES, streamlit_command


@pytest.fixture(autouse=True)
def home(monkeypatch, tmp_path) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("HOME", str(folder))
    return folder


def flags(command: list[str]) -> dict[str, str]:
    return {command[i]: command[i + 1] for i in range(5, len(command) - 1, 2)}


def theme_of(command: list[str]) -> dict[str, str]:
    return {k.removeprefix("--theme."): v for k, v in flags(command).items() if k.startswith("--theme.")}


def write_config(folder: Path, text: str) -> None:
    (folder / ".streamlit").mkdir(parents=True, exist_ok=True)
    (folder / ".streamlit" / "config.toml").write_text(text)


def test_by_default_dark_and_64_mb(tmp_path):
    command = streamlit_command(8501, cwd=tmp_path, env={})
    assert theme_of(command) == THEMES["dark"] == {"base": "dark", "primaryColor": "#f5a524"}
    assert flags(command)["--server.maxUploadSize"] == "64"


def test_dailies_theme_chooses_the_light_palette(tmp_path):
    assert theme_of(streamlit_command(8501, cwd=tmp_path, env={"DAILIES_THEME": "light"})) == THEMES["light"]
    assert THEMES["light"]["base"] == "light"


@pytest.mark.parametrize("where", ["cwd", "home"])
def test_a_config_toml_theme_wins_over_dailies_theme(tmp_path, home, where):
    write_config(tmp_path if where == "cwd" else home, '[theme]\nbase = "light"\n')
    command = streamlit_command(8501, cwd=tmp_path, env={"DAILIES_THEME": "dark"})
    assert theme_of(command) == {}
    assert flags(command)["--server.maxUploadSize"] == "64"


def test_a_config_toml_upload_size_wins(tmp_path):
    write_config(tmp_path, "[server]\nmaxUploadSize = 200\n")
    command = streamlit_command(8501, cwd=tmp_path, env={})
    assert "--server.maxUploadSize" not in command and theme_of(command) == THEMES["dark"]


def test_streamlit_variables_win(tmp_path):
    command = streamlit_command(8501, cwd=tmp_path, env={"STREAMLIT_THEME_BASE": "light",
                                                         "STREAMLIT_SERVER_MAX_UPLOAD_SIZE": "10"})
    assert theme_of(command) == {} and "--server.maxUploadSize" not in command


def test_the_theme_option_wins_over_all(tmp_path):
    write_config(tmp_path, '[theme]\nbase = "dark"\n')
    command = streamlit_command(8501, cwd=tmp_path, env={"STREAMLIT_THEME_BASE": "dark"}, theme="light")
    assert theme_of(command) == THEMES["light"]


def test_up_and_dashboard_take_theme():
    parser = build_parser()
    assert parser.parse_args(["up", "--theme", "light"]).theme == "light"
    assert parser.parse_args(["dashboard"]).theme is None
    with pytest.raises(SystemExit):
        parser.parse_args(["dashboard", "--theme", "pink"])
