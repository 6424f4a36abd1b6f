"""How the browser tests drive the Streamlit pages: wait for a run to finish, open a page, pick
from a select box, read the task table's rows and a <video> element's state, save a screenshot."""

from __future__ import annotations

import re
import time
from pathlib import Path

from playwright.sync_api import TimeoutError as PlaywrightTimeout
from playwright.sync_api import expect

from .script_runs import QUIET, is_tracked

# How long no run must be going or asked for, from the action on: a component's value reaches the
# page (a postMessage) and asks for its run a moment after the click. A run ended by st.rerun counts
# as asked until the next starts (script_runs), however long that takes.
QUIET_MS = 300
SCREENSHOTS = Path(__file__).resolve().parents[2] / "tests" / "artifacts" / "screenshots"


def settle(tab) -> None:
    """Wait for st.navigation's page titles, then until no script run has been busy for 1.5 s
    (the status widget and stale elements are Streamlit's own signs of a run in progress)."""
    tab.wait_for_function("""() => { const n = document.querySelector('[data-testid=stSidebarNav]');
        return n && n.innerText.includes('Review') && n.innerText.includes('Settings'); }""")
    until_quiet(tab)


def until_quiet(tab) -> None:
    """Until no script run is going or asked for (script_runs.QUIET), in a page whose context tracks
    Streamlit's runs (conftest's browser does); elsewhere until no run has been busy for 1.5 s."""
    if is_tracked(tab):
        since = tab.evaluate("() => Date.now()")
        tab.wait_for_function(QUIET, arg=[QUIET_MS, since], polling=50, timeout=60_000)
        return
    quiet = 0
    for _ in range(240):
        busy = tab.locator('[data-testid="stStatusWidget"]').count() or tab.locator('[data-stale="true"]').count()
        quiet = 0 if busy else quiet + 1
        if quiet >= 6:
            return
        time.sleep(0.25)


def open_page(tab, product, path: str) -> None:
    tab.goto(product.ui_url + path)
    settle(tab)


def pick(tab, label: str, option: str) -> None:
    """Choose `option` in the select box labelled `label`. The box is scrolled into view first: a
    select box's list closes when the page scrolls, and a click on a box below the fold scrolls it."""
    choose(tab, tab.get_by_role("combobox", name=label), option)
    settle(tab)


def choose(tab, box, option: str) -> None:
    """Open the select box `box` (a locator) and click `option`, the box scrolled into view first."""
    box.scroll_into_view_if_needed()
    tab.wait_for_function("() => new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(true))))")
    choice = tab.get_by_role("option", name=option, exact=True)
    box.click()
    if not _shown_within(choice, 5_000):  # the list closed by a scroll still under way: open it again
        box.click()
    choice.click()


def json_body(tab) -> str:
    """The JSON body Compose shows, its expander opened first (closed by default: issue 37)."""
    block = tab.locator('[data-dailies="json-body"]').first
    if not block.is_visible():
        tab.get_by_text("JSON body (what is sent)", exact=True).click()
        block.wait_for(state="visible")
    return block.inner_text()


def _shown_within(locator, timeout_ms: int) -> bool:
    try:
        locator.wait_for(timeout=timeout_ms)
        return True
    except PlaywrightTimeout:
        return False


def grid_rows(tab) -> list[str]:
    """The rows of the task table, read from the data grid's accessible table (the grid draws on a
    canvas; Glide keeps the visible cells in a hidden table for screen readers)."""
    return tab.evaluate("""() => [...document.querySelectorAll('[data-testid=stDataFrame] [role=row]')]
        .map(r => [...r.querySelectorAll('[role=gridcell]')].map(c => c.innerText).join(' | '))
        .filter(t => t)""")


# A query that also looks inside the dashboard's own components (Review's players), which draw in
# shadow roots (Streamlit's Custom Components v2 isolate their styles there).
DEEP_QUERY = """const deep = (sel) => [...document.querySelectorAll(sel),
    ...[...document.querySelectorAll('[data-testid=stBidiComponentIsolated]')]
        .flatMap(h => h.shadowRoot ? [...h.shadowRoot.querySelectorAll(sel)] : [])];"""


def video_state(tab, selector: str = "video") -> dict:
    """readyState, duration and source of the first matching <video> (in the page or in a component's
    shadow root), once it has data (or after 20 s)."""
    tab.wait_for_selector(selector)  # Playwright's CSS selectors look into open shadow roots
    state = {}
    for _ in range(80):
        state = tab.evaluate(f"""(sel) => {{ {DEEP_QUERY} const v = deep(sel)[0];
            return {{readyState: v.readyState, duration: v.duration, src: v.currentSrc}}; }}""", selector)
        if state["readyState"] >= 2:
            break
        time.sleep(0.25)
    return state


def screenshot(tab, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    tab.screenshot(path=str(path), full_page=True)
    return path


def set_status(tab, status: str, within=None) -> None:
    """Choose a review status in the (first) Status box of `within` (a card), or of the page."""
    choose(tab, (within or tab).get_by_role("combobox", name="Status").first, status)
    settle(tab)


def status_shown(tab, status: str, author: str | None = None, within=None) -> None:
    """Wait until the (first) Status box of `within` or of the page shows `status`, and the status history
    control beside it names who set it ("by Bo"; any author when None)."""
    scope = within or tab
    expect(scope.get_by_role("combobox", name="Status").first).to_have_value(status, timeout=30_000)
    who = re.escape(author) if author is not None else r"\S"
    scope.get_by_role("button", name=re.compile(rf"\bby {who}")).first.wait_for()


# Inside the components' shadow roots only (`q(sel)`): the Review players and the comparison.
COMPONENT_QUERY = """const q = (sel) => [...document.querySelectorAll('[data-testid=stBidiComponentIsolated]')]
    .flatMap(h => h.shadowRoot ? [...h.shadowRoot.querySelectorAll(sel)] : []);"""


def playing_gaps(tab, selector: str = ".sc video") -> list[float]:
    """Ten readings (one per painted frame, each in one task) of how far the second video of a
    synchronized comparison is from the first, while the first plays."""
    return tab.evaluate(f"""async (sel) => {{ {COMPONENT_QUERY} const gaps = [];
        for (let i = 0; i < 10; i++) {{
            await new Promise(r => requestAnimationFrame(r));
            const [a, b] = q(sel);
            if (!a.paused) gaps.push(Math.abs(a.currentTime - b.currentTime));
        }}
        return gaps; }}""", selector)


def drag_on(tab, element, start: tuple[float, float], end: tuple[float, float], steps: int = 4) -> None:
    """Press at `start` and release at `end`, each a fraction (x, y) of `element`'s box, moving in
    `steps` (a stroke on a drawing layer, a divider dragged)."""
    box = element.bounding_box()
    tab.mouse.move(box["x"] + box["width"] * start[0], box["y"] + box["height"] * start[1])
    tab.mouse.down()
    tab.mouse.move(box["x"] + box["width"] * end[0], box["y"] + box["height"] * end[1], steps=steps)
    tab.mouse.up()
