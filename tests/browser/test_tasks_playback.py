"""The Tasks and Review pages in headless Chromium against `dailies up`: a result plays in the task
detail (the <video> reaches HAVE_CURRENT_DATA and lasts the requested seconds), the table refreshes
itself while a task runs and stops once nothing is queued or running, and a kept copy plays after
its task is deleted. Fixtures come from conftest.py (the product on free ports, Debian's Chromium).
"""

from __future__ import annotations

import pytest

from tests.support.waiting import wait_until

from .ui import open_page, screenshot, settle, video_state

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SMALL = {"model": "doubao-seedance-2-0-260128", "resolution": "480p", "duration": 4}


def test_result_plays_in_the_task_detail(page, product):
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


def test_table_refreshes_while_a_task_runs_then_stops(page, product):
    open_page(page, product, "/tasks")
    with product.client() as client:
        task_id = client.tasks.create({**SMALL, "resolution": "720p", "duration": 10,
                                       "content": [{"type": "text", "text": "watch me finish"}]}).id
        # Listed from the second after its creation (the list window ends at the current second).
        wait_until(lambda: task_id in {t.id for t in client.tasks.list(page_size=50).items}, "the task is listed")
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


def test_kept_copy_plays_after_the_task_is_deleted(page, product):
    with product.client() as client:
        task_id = client.tasks.create({**SMALL, "content": [{"type": "text", "text": "keep me"}]}).id
        client.wait(task_id, timeout=120, poll_interval=0.2)
    open_page(page, product, f"/tasks?task={task_id}")
    # One person's local Dailies keeps what succeeds by default: nothing to press (issue 37).
    page.get_by_text("Kept in the archive", exact=False).first.wait_for()
    assert page.get_by_role("button", name="💾 Keep (download to the archive)").count() == 0
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
