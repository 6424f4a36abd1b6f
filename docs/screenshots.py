"""Retake the README's page screenshots from a running dashboard, in Debian's headless Chromium.

    dailies up &                                  # or any running dashboard with a few tasks
    .venv/bin/python docs/screenshots.py --ui http://127.0.0.1:8501 [--task cgt-...]

Writes docs/screenshots/page-{compose,tasks,review,settings}.png. The viewport is tall because
Streamlit scrolls inside its own container, so a full-page screenshot shows only one viewport.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from playwright.sync_api import sync_playwright

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.browser.ui import settle  # noqa: E402 - after the path is set

OUT = ROOT / "docs" / "screenshots"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu"]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ui", default="http://127.0.0.1:8501")
    parser.add_argument("--task", help="a succeeded task to open in Tasks (default: the table's first row)")
    parser.add_argument("--chromium", default="/usr/bin/chromium")
    args = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=args.chromium, args=ARGS)
        page = browser.new_page(viewport={"width": 1440, "height": 2000})
        page.set_default_timeout(30_000)
        shots = {"compose": "/", "tasks": f"/tasks?task={args.task}" if args.task else "/tasks",
                 "review": "/review", "settings": "/settings"}
        for name, path in shots.items():
            page.goto(args.ui + path)
            settle(page)
            if name == "compose":
                prompt = page.get_by_role("textbox", name="Prompt")
                prompt.fill("A lighthouse beam sweeps across a stormy sea at night, slow push-in.")
                prompt.press("Control+Enter")  # a text area sends its value on Ctrl+Enter or blur
                settle(page)
            if name == "tasks" and page.locator("video").count():
                time.sleep(1)  # the first frame of the player, rather than a black box
            target = OUT / f"page-{name}.png"
            page.screenshot(path=str(target))
            print(target.relative_to(ROOT))
        browser.close()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
