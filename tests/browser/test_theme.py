"""The light theme, through a real start: `dailies dashboard` with DAILIES_THEME=light (checked and
passed on by dailies/cli/processes.py and dailies/launcher.py) serves white pages with the light
palette's amber. Screenshot: tests/artifacts/screenshots/theme-light.png."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from dailies.launcher import THEMES
from tests.support.servers import free_port

from .conftest import running_process
from .ui import settle

pytestmark = [pytest.mark.browser]

SCREENSHOTS = Path(__file__).resolve().parents[1] / "artifacts" / "screenshots"


def rgb(hex_color: str) -> str:
    r, g, b = (int(hex_color[i:i + 2], 16) for i in (1, 3, 5))
    return f"rgb({r}, {g}, {b})"


def test_dailies_theme_light_serves_the_light_palette(page, tmp_path, monkeypatch):
    port = free_port()
    monkeypatch.setenv("HOME", str(tmp_path))  # no ~/.streamlit/config.toml of this machine's
    monkeypatch.setenv("DAILIES_THEME", "light")
    monkeypatch.setenv("ARK_BASE_URL", "http://127.0.0.1:9/api/v3")
    command = [sys.executable, "-m", "dailies", "dashboard", "--ui-port", str(port), "--data-dir", str(tmp_path)]
    with running_process(command, tmp_path / "dashboard.log", f"http://127.0.0.1:{port}/_stcore/health",
                         cwd=tmp_path):
        page.goto(f"http://127.0.0.1:{port}/settings")
        settle(page)
        background = page.evaluate(
            "getComputedStyle(document.querySelector('[data-testid=stApp]')).backgroundColor")
        page.get_by_role("textbox", name="Your name").click()  # a focused input's border is the primary colour
        page.wait_for_timeout(300)  # the border's transition
        borders = page.evaluate("""() => { const seen = []; let e = document.activeElement;
            for (let i = 0; e && i < 4; i++, e = e.parentElement) seen.push(getComputedStyle(e).borderTopColor);
            return seen; }""")
        SCREENSHOTS.mkdir(parents=True, exist_ok=True)
        page.screenshot(path=str(SCREENSHOTS / "theme-light.png"), full_page=True)
    assert background == "rgb(255, 255, 255)"
    assert rgb(THEMES["light"]["primaryColor"]) in borders, borders
