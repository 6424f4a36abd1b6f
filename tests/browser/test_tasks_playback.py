"""The Tasks and Review pages in headless Chromium against `dailies up`: a result plays in the task
detail (the <video> reaches HAVE_CURRENT_DATA and lasts the requested seconds), the table refreshes
itself while a task runs and stops once nothing is queued or running, its row then shows a frame of
the kept result, the table's toolbar leaves the Refresh button uncovered, and a click on the row opens
the detail in view, above the table; a kept copy plays after its task is deleted. Fixtures come from
conftest.py (the product on free ports, Debian's Chromium).
"""

from __future__ import annotations

import io

import pytest
from PIL import Image, ImageStat
from playwright.sync_api import expect

from tests.support.waiting import wait_for, wait_until

from .test_team_sharing import wait_for_row
from .ui import COMPONENT_QUERY, grid_rows, open_page, screenshot, settle, until_quiet, video_state

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SMALL = {"model": "doubao-seedance-2-0-260128", "resolution": "480p", "duration": 4}
# The task table as the grid draws it: a header and rows of 35 px, the row markers' column, then the frame's.
ROW_PX, MARKERS_PX, FRAME_PX = 35, 34, 70


def overlap(a: dict, b: dict) -> bool:
    return (a["x"] < b["x"] + b["width"] and b["x"] < a["x"] + a["width"]
            and a["y"] < b["y"] + b["height"] and b["y"] < a["y"] + a["height"])


def still_box(locator) -> dict:
    """The element's box once it has stopped moving (the table's toolbar slides in)."""
    boxes = [locator.bounding_box()]
    wait_until(lambda: boxes.append(locator.bounding_box()) or boxes[-1] == boxes[-2], "the element to stop moving",
               timeout=10, interval=0.05)
    return boxes[-1]


def frame_drawn(page, grid: dict, row: int) -> bool:
    """The frame cell of `row` holds a picture: not one flat colour, as an empty cell is."""
    clip = {"x": grid["x"] + MARKERS_PX + 8, "y": grid["y"] + ROW_PX * (row + 1) + 6, "width": FRAME_PX - 16,
            "height": ROW_PX - 12}
    with Image.open(io.BytesIO(page.screenshot(clip=clip))) as shot:
        return max(ImageStat.Stat(shot.convert("RGB")).stddev) > 8


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

    # Links hold the view: Tasks' filters, and a Review shot at a frame (its player on that frame).
    open_page(page, product, f"/tasks?status=succeeded&ids={task_id}")
    expect(page.get_by_role("combobox", name="Status")).to_have_value("✅ succeeded")
    wait_for_row(page, task_id)
    open_page(page, product, f"/review?task={task_id}&frame=30")
    page.wait_for_function(f"""() => {{ {COMPONENT_QUERY} const root = q('.tp')[0];
        return root && root.dataset.frame === '30'; }}""")
    assert "frame=30" in page.url and f"task={task_id}" in page.url


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

    # Issue 37. The row shows a frame of the result, which one person's Dailies keeps by default.
    [row] = wait_for(lambda: [i for i, r in enumerate(grid_rows(page)) if task_id in r
                              and r.startswith("data:image/jpeg;base64,")], "the row's frame", timeout=30)
    # Once the page's run after the task's end is over: the table it ran on may be drawn anew.
    until_quiet(page)
    grid = page.locator('[data-testid="stDataFrame"]').first
    box = grid.bounding_box()
    wait_until(lambda: frame_drawn(page, box, row), "the frame drawn in its cell", timeout=10, interval=0.1)
    # The table's toolbar shows while it is hovered, and covers nothing of the Refresh button.
    grid.hover()
    toolbar = page.locator('[data-testid="stElementToolbar"]').first
    toolbar.wait_for(state="visible")
    refresh, covering = page.get_by_role("button", name="⟳ Refresh").bounding_box(), still_box(toolbar)
    assert not overlap(refresh, covering), (refresh, covering)
    # A click on the row opens the detail above the table, in view without scrolling.
    page.mouse.click(box["x"] + MARKERS_PX / 2, box["y"] + ROW_PX * (row + 1) + ROW_PX / 2)
    heading = page.get_by_role("heading", name=task_id)
    heading.wait_for()
    first, table = heading.bounding_box(), grid.bounding_box()
    assert 0 <= first["y"] and first["y"] + first["height"] <= page.viewport_size["height"], first
    assert first["y"] < table["y"], (first, table)
    page.locator("video").first.wait_for()
    screenshot(page, "tasks-row-opened-above-the-table")


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
