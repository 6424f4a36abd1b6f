"""Page switches as a person makes them: a click in the sidebar of an open dashboard (the same Streamlit
session, no reload), timed to the new page's header drawn and to its run being over.

`dailies up` on a fresh data directory with `--tasks` finished tasks, headless Chromium at 1440x1000 (Debian's
/usr/bin/chromium), Tasks, Review, Settings and Compose in turn, `--rounds` times after one untimed round
(the first visit of each page imports its modules). Prints each page's median and worst.

    .venv/bin/python bench/page_switch.py [--rounds 5] [--tasks 4]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from playwright.sync_api import sync_playwright  # noqa: E402

from tests.browser.conftest import CHROMIUM, CHROMIUM_ARGS, running_product  # noqa: E402
from tests.browser.ui import open_page  # noqa: E402

PAGES = ["Tasks", "Review", "Settings", "Compose"]
HEADER_DRAWN = """(title) => [...document.querySelectorAll('h1, h2')].some(h => h.innerText.trim().startsWith(title))
    && !document.querySelector('[data-stale=true] h1, [data-stale=true] h2')"""
RUN_OVER = """() => !document.querySelector('[data-testid=stStatusWidget]')
    && !document.querySelector('[data-stale=true]')"""


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--tasks", type=int, default=4)
    args = parser.parse_args()
    with running_product(Path(tempfile.mkdtemp(prefix="dailies-switch-"))) as product, sync_playwright() as pw:
        with product.client() as client:
            ids = [client.tasks.create({"model": "doubao-seedance-2-0-260128", "resolution": "480p", "duration": 4,
                                        "content": [{"type": "text", "text": f"a paper boat, take {n}"}]}).id
                   for n in range(args.tasks)]
            for task_id in ids:
                client.wait(task_id, timeout=300, poll_interval=0.3)
        browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        tab = browser.new_context(viewport={"width": 1440, "height": 1000}).new_page()
        open_page(tab, product, "/")
        nav = tab.locator("[data-testid=stSidebarNav]")
        drawn: dict[str, list[float]] = {page: [] for page in PAGES}
        over: dict[str, list[float]] = {page: [] for page in PAGES}
        for round_number in range(args.rounds + 1):
            for page in PAGES:
                start = time.perf_counter()
                nav.get_by_text(page, exact=True).click()
                tab.wait_for_function(HEADER_DRAWN, arg=page, polling=10)
                header = time.perf_counter()
                tab.wait_for_function(RUN_OVER, polling=10)
                if round_number:
                    drawn[page].append(header - start)
                    over[page].append(time.perf_counter() - start)
        browser.close()
    print(f"page switches by the sidebar, {args.rounds} rounds, {args.tasks} tasks (ms: median, worst)")
    for page in PAGES:
        print(f"  {page:9s} header drawn {statistics.median(drawn[page]) * 1000:5.0f} {max(drawn[page]) * 1000:5.0f}"
              f"   run over {statistics.median(over[page]) * 1000:5.0f} {max(over[page]) * 1000:5.0f}")


if __name__ == "__main__":
    main()
