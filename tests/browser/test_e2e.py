"""The product end to end in headless Chromium, as a user drives it: compose a text-only task and a
first-and-last-frame task from uploaded images, submit both, watch them succeed in the Tasks table,
open one, play its video, read its countdown, approve it in Review; and an image the spec refuses
shows its message while nothing is sent.

The service runs the preview renderer, so a 4 s 480p task succeeds within seconds. Screenshots go to
tests/artifacts/screenshots/e2e-*.png.
"""

from __future__ import annotations

import re
import time

import pytest
from PIL import Image, ImageStat

from dailies.journal import Journal
from tests.support.waiting import wait_past_second

from .ui import grid_rows, json_body, open_page, pick, screenshot, set_status, settle, status_shown, video_state

pytestmark = [pytest.mark.browser, pytest.mark.slow]

DURATION = 4  # the shortest a generation 2.0 task may be, so the renders stay quick
FIRST_RGB = (210, 40, 40)
LAST_RGB = (40, 60, 210)
TASK_ID = re.compile(r"cgt-\d{14}-[0-9a-z]{5}")


def solid_png(path, size, rgb):
    Image.new("RGB", size, rgb).save(path)
    return path


def set_output(tab) -> None:
    """480p, and the shortest duration: the slider's Home key moves it to its minimum."""
    pick(tab, "Resolution", "480p")
    slider = tab.get_by_role("slider").first
    slider.focus()
    slider.press("Home")
    settle(tab)
    assert slider.input_value() == str(DURATION)


def submit_one(tab) -> str:
    """Click Submit and return the id of the task the page links to."""
    tab.get_by_role("button", name="Submit", exact=True).click()
    tab.get_by_text("Last submission: 1 of 1 task sent", exact=False).wait_for(timeout=60_000)
    settle(tab)
    found = TASK_ID.findall(tab.locator('[data-testid="stPageLink"]').last.inner_text())
    assert len(found) == 1, found
    return found[0]


def wait_for_rows(tab, task_ids, status: str, timeout_s: float = 120) -> list[str]:
    """Until every task's row says `status`; nobody clicks, the table refreshes itself."""
    deadline = time.monotonic() + timeout_s
    rows: list[str] = []
    while time.monotonic() < deadline:
        rows = grid_rows(tab)
        if all(any(tid in r and status in r for r in rows) for tid in task_ids):
            return rows
        time.sleep(0.5)
    raise AssertionError(f"rows never all {status}: {rows}")


def frame_colour(tab, at_s: float, tmp_path) -> tuple[int, ...]:
    """The mean colour of the middle of the picture the <video> shows at `at_s`, as the page draws
    it (an element screenshot: the result URL is on the service's origin, so a canvas could not read
    its pixels)."""
    tab.evaluate("""async (t) => { const v = document.querySelector('video'); v.pause();
        await new Promise(r => { v.addEventListener('seeked', r, {once: true}); v.currentTime = t; }); }""", at_s)
    path = tmp_path / f"frame-{at_s}.png"
    tab.locator("video").first.screenshot(path=str(path))
    with Image.open(path) as shot:
        w, h = shot.size
        middle = shot.convert("RGB").crop((w // 4, h // 4, 3 * w // 4, h // 2))  # above the controls
        return tuple(round(c) for c in ImageStat.Stat(middle).mean)


def near(rgb, want, tolerance=40) -> bool:
    return all(abs(a - b) <= tolerance for a, b in zip(rgb, want, strict=True))


def shown_frame(tab, at_s: float, want: tuple[int, int, int], tmp_path, timeout_s: float = 30) -> tuple[int, ...]:
    """The colour the <video> shows at `at_s`, once it is near `want` or `timeout_s` has passed: after a
    seek the player may still be fetching (a spinner over black) on a busy machine, and what counts is
    the frame it then paints. Returns the last colour seen, for the assertion to show."""
    deadline = time.monotonic() + timeout_s
    while True:
        shown = frame_colour(tab, at_s, tmp_path)
        if near(shown, want) or time.monotonic() > deadline:
            return shown
        time.sleep(0.25)


def test_compose_two_tasks_watch_them_succeed_play_one_and_approve_it(page, product, tmp_path):
    first = solid_png(tmp_path / "first.png", (1280, 720), FIRST_RGB)
    last = solid_png(tmp_path / "last.png", (1280, 720), LAST_RGB)

    # A deep link as the first request of a fresh server: the router's own Tasks page answers.
    open_page(page, product, "/tasks")
    # Waited for, not counted: on a fresh server the first run of a page can outlast `settle`.
    page.get_by_role("heading", name="Tasks", exact=True).wait_for()
    page.locator('[data-testid="stSidebarNav"]').get_by_text("Compose", exact=True).click()
    settle(page)
    page.get_by_text("Text only", exact=True).click()
    settle(page)
    page.get_by_role("textbox", name="Prompt").fill("A paper boat drifts down a rainy street at dusk.")
    set_output(page)
    screenshot(page, "e2e-01-text-ready")
    text_id = submit_one(page)

    page.get_by_text("First and last frame", exact=True).click()
    settle(page)
    uploads = page.locator('[data-testid="stFileUploaderDropzoneInput"]')
    uploads.nth(1).wait_for(state="attached")  # the inputs themselves are hidden behind the drop zones
    assert uploads.count() == 2
    uploads.nth(0).set_input_files(str(first))
    settle(page)
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').nth(1).set_input_files(str(last))
    settle(page)
    page.get_by_role("textbox", name="Prompt").fill("The red wall turns blue.")
    settle(page)
    body = json_body(page)
    assert '"role": "first_frame"' in body and '"role": "last_frame"' in body and '"resolution": "480p"' in body
    screenshot(page, "e2e-02-first-last-ready")
    frames_id = submit_one(page)
    assert frames_id != text_id

    with product.client() as client:
        for task_id in (text_id, frames_id):
            client.wait(task_id, timeout=180, poll_interval=0.3)

    # Both rows succeed in the table; the row is opened by clicking it, as a user would.
    open_page(page, product, "/tasks")
    rows = wait_for_rows(page, [text_id, frames_id], "succeeded")
    assert any(text_id in r and "paper boat" in r for r in rows), rows
    grid = page.locator('[data-testid="stDataFrame"]').bounding_box()
    row_index = next(i for i, r in enumerate(grid_rows(page)) if frames_id in r)
    row_height, header_height = 35, 35
    page.mouse.click(grid["x"] + 15, grid["y"] + header_height + row_height * row_index + row_height / 2)
    settle(page)
    assert f"task={frames_id}" in page.url

    state = video_state(page)
    assert state["readyState"] >= 2, state
    assert abs(state["duration"] - DURATION) < 0.25, state
    first_shown = shown_frame(page, 0, FIRST_RGB, tmp_path)
    last_shown = shown_frame(page, DURATION - 0.05, LAST_RGB, tmp_path)
    assert near(first_shown, FIRST_RGB) and near(last_shown, LAST_RGB), (first_shown, last_shown)
    page.get_by_text(re.compile(r"Result link expires in 23 h \d+ min")).first.wait_for()
    page.get_by_text(re.compile(r"Record deleted in 6 d")).first.wait_for()
    screenshot(page, "e2e-03-tasks-detail")

    # Review: the result alone, approved; the status is in the journal and still shown after a reload.
    open_page(page, product, f"/review?task={frames_id}")
    state = video_state(page)
    assert state["readyState"] >= 2 and abs(state["duration"] - DURATION) < 0.1
    journal = Journal(product.data_dir / "dashboard" / "journal.sqlite3")
    assert journal.status_of(frames_id) == "pending"
    set_status(page, "Approved")
    assert journal.status_of(frames_id) == "approved"
    open_page(page, product, f"/review?task={frames_id}")
    status_shown(page, "Approved")
    screenshot(page, "e2e-04-review-approved")


def test_an_invalid_image_shows_its_message_and_nothing_is_sent(page, product, tmp_path):
    banner = solid_png(tmp_path / "banner.png", (1920, 200), (30, 30, 90))
    with product.client() as client:
        before = client.tasks.list(page_size=1).total

    open_page(page, product, "/")
    page.get_by_text("First frame", exact=True).click()
    settle(page)
    page.locator('[data-testid="stFileUploaderDropzoneInput"]').first.set_input_files(str(banner))
    settle(page)
    page.get_by_role("textbox", name="Prompt").fill("A banner that is far too wide.")
    settle(page)
    page.get_by_text("1920x200: aspect 9.6 is outside 0.4 to 2.5").first.wait_for()
    page.get_by_text("1920x200: height 200 px is outside 300 to 6000 px").first.wait_for()
    submit = page.get_by_role("button", name="Submit", exact=True)
    assert submit.is_disabled()
    clicked_at = time.time()
    submit.click(force=True)  # a click on the disabled button does nothing either
    settle(page)
    screenshot(page, "e2e-05-invalid-image")

    wait_past_second(clicked_at)  # a task made by that click would be listed from the next second on
    with product.client() as client:
        assert client.tasks.list(page_size=1).total == before
    assert page.get_by_text("Submitted", exact=False).count() == 0
