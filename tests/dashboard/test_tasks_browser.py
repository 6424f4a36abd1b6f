"""The Tasks and Review pages in headless Chromium against `dailies up`: a result plays in the task
detail (the <video> reaches HAVE_CURRENT_DATA and lasts the requested seconds), the table refreshes
itself while a task runs and stops once nothing is queued or running, and a kept copy plays after
its task is deleted. Fixtures come from tests/browser (the product on free ports, Debian's Chromium).
"""

from __future__ import annotations

import time

import pytest

from ..browser.conftest import browser, chromium_path, page, product, screenshot  # noqa: F401 - fixtures

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SMALL = {"model": "doubao-seedance-2-0-260128", "resolution": "480p", "duration": 4}


def settle(tab) -> None:
    """Wait for st.navigation's page titles, then for the script runs to finish."""
    tab.wait_for_function("""() => { const n = document.querySelector('[data-testid=stSidebarNav]');
        return n && n.innerText.includes('Review') && n.innerText.includes('Settings'); }""")
    quiet = 0
    for _ in range(160):
        busy = tab.locator('[data-testid="stStatusWidget"]').count() or tab.locator('[data-stale="true"]').count()
        quiet = 0 if busy else quiet + 1
        if quiet >= 6:
            return
        time.sleep(0.25)


def open_page(tab, where, path: str) -> None:
    # A fresh server runs a deep link in Streamlit's legacy pages/-folder mode until one session has
    # run app.py's st.navigation, so the root is opened first.
    tab.goto(where.ui_url + "/")
    settle(tab)
    tab.goto(where.ui_url + path)
    settle(tab)


def video_state(tab) -> dict:
    tab.wait_for_selector("video")
    state = {}
    for _ in range(80):
        state = tab.evaluate("""() => { const v = document.querySelector('video');
            return {readyState: v.readyState, duration: v.duration, src: v.currentSrc}; }""")
        if state["readyState"] >= 2:
            break
        time.sleep(0.25)
    return state


def test_result_plays_in_the_task_detail(page, product):  # noqa: F811
    with product.client() as client:
        task_id = client.tasks.create({**SMALL, "return_last_frame": True,
                                       "content": [{"type": "text", "text": "a kite in the browser"}]}).id
        record = client.wait(task_id, timeout=120, poll_interval=0.2)
    open_page(page, product, f"/tasks?task={task_id}")
    state = video_state(page)
    assert state["readyState"] >= 2, state
    assert abs(state["duration"] - 4) < 0.25, state
    assert state["src"] == record.content.video_url
    played = page.evaluate("""async () => { const v = document.querySelector('video'); v.muted = true;
        await v.play(); await new Promise(r => setTimeout(r, 1200)); v.pause(); return v.currentTime; }""")
    assert played > 0.5
    assert page.get_by_text("Last frame", exact=True).count() == 1
    screenshot(page, "tasks-detail")


def test_table_refreshes_while_a_task_runs_then_stops(page, product):  # noqa: F811
    open_page(page, product, "/tasks")
    with product.client() as client:
        task_id = client.tasks.create({**SMALL, "resolution": "720p", "duration": 10,
                                       "content": [{"type": "text", "text": "watch me finish"}]}).id
        time.sleep(1.1)  # listed from the second after its creation
        page.get_by_role("button", name="⟳ Refresh").click()
        summary = page.locator('[data-testid="stMarkdownContainer"]').filter(has_text="task(s) match").first
        page.wait_for_function("""() => [...document.querySelectorAll('[data-testid=stMarkdownContainer]')]
            .some(e => e.innerText.includes('refreshing every'))""", timeout=20_000)
        client.wait(task_id, timeout=120, poll_interval=0.2)
    # Nobody clicks: the fragment's own refresh sees the task succeed and the page goes idle.
    page.wait_for_function("""() => { const m = [...document.querySelectorAll('[data-testid=stMarkdownContainer]')]
        .find(e => e.innerText.includes('task(s) match')); return m && !m.innerText.includes('refreshing'); }""",
                           timeout=30_000)
    assert "refreshing" not in summary.inner_text()


def test_kept_copy_plays_after_the_task_is_deleted(page, product):  # noqa: F811
    with product.client() as client:
        task_id = client.tasks.create({**SMALL, "content": [{"type": "text", "text": "keep me"}]}).id
        client.wait(task_id, timeout=120, poll_interval=0.2)
    open_page(page, product, f"/tasks?task={task_id}")
    page.get_by_role("button", name="💾 Keep (download to the archive)").click()
    page.get_by_text("Kept", exact=False).first.wait_for()
    settle(page)
    page.get_by_role("button", name="🗑️ Delete task…").click()
    page.get_by_role("button", name="Yes, delete it").click()
    page.get_by_text(f"Deleted {task_id} from the service.").wait_for()
    settle(page)
    state = video_state(page)
    assert state["readyState"] >= 2 and "/media/" in state["src"], state
    assert abs(state["duration"] - 4) < 0.25
    open_page(page, product, f"/review?task={task_id}")
    state = video_state(page)
    assert state["readyState"] >= 2 and "/media/" in state["src"], state
    screenshot(page, "review-kept-after-delete")
