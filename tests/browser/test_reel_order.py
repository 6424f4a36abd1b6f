"""The reel maker's order in headless Chromium against `dailies up`: the last row of the list dragged to the
top (pointer events, in the component's shadow root) is where the reel starts. Which shot is where in the
reel is read from its pictures: each preview's background has colours of its own (prompt and seed), so a
frame near the end of each shot is closest in colour to that task's last frame."""

from __future__ import annotations

import time

import av
import numpy as np
import pytest
from PIL import Image

from dailies.journal import Journal, Submission
from tests.support.live_service import wait_until_listed

from .ui import open_page, pick, screenshot, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

# Backgrounds far apart in colour with these seeds (warm, blue, green), so no frame is a near miss; a model
# that takes a seed (2.0 does not).
MODEL = "doubao-seedance-1-5-pro-251215"
TAKES = [("A lantern rising over a dark river", 11), ("A paper boat on a rain-soaked street", 12),
         ("Snow falling on a quiet harbour", 13)]
ROWS = ".ro-row"  # the list's rows, in the component's shadow root (Playwright's CSS looks inside)
SLATE_S, SHOT_S, FPS = 1.5, 4, 24  # the reel's defaults: slates on, 24 fps


def rows(tab) -> list[str]:
    return tab.locator(ROWS).evaluate_all("rows => rows.map(r => r.dataset.task)")


def mean_colour(picture: np.ndarray) -> np.ndarray:
    return picture.reshape(-1, 3).astype(float).mean(axis=0)


def test_the_last_row_dragged_to_the_top_starts_the_reel(page, product, tmp_path):
    bodies = [{"model": MODEL, "resolution": "480p", "duration": SHOT_S, "seed": seed, "return_last_frame": True,
               "content": [{"type": "text", "text": prompt}]} for prompt, seed in TAKES]
    with product.client() as client:
        ids = [client.tasks.create(body).id for body in bodies]
        records = [client.wait(task_id, timeout=120, poll_interval=0.2) for task_id in ids]
        wait_until_listed(product.api_url, product.api_key, set(ids))  # the reel maker lists (spec 4.2)
        last_frames = {}
        for record in records:
            path = client.download(record.content.last_frame_url, tmp_path / f"{record.id}.png")
            last_frames[record.id] = mean_colour(np.asarray(Image.open(path).convert("RGB")))
    # A batch of their own (as Compose makes), approved: the reel maker picks these three and no other. Rows
    # of no scope, which one person's dashboard reads as its own.
    label = f"reel order {ids[0][-5:]}"
    journal = Journal(product.data_dir / "dashboard" / "journal.sqlite3", database_url="", storage="")
    try:
        batch = journal.new_batch(label, "text")
        for task_id, (prompt, _), body in zip(ids, TAKES, bodies, strict=True):
            journal.record_submission(Submission(task_id, batch, time.time(), product.api_url, MODEL, "text",
                                                 prompt, body))
            journal.set_status(task_id, "approved")
    finally:
        journal.close()
    reels = product.data_dir / "dashboard" / "reels"
    made_before = set(reels.rglob("reel-*.mp4"))

    open_page(page, product, "/review")
    pick(page, "Batch", f"{label} · 3 task(s) · text")
    page.get_by_text("🎬 Reel of approved shots").click()
    settle(page)
    listed = page.locator(ROWS)
    listed.first.wait_for()
    before = rows(page)
    assert sorted(before) == sorted(ids)  # the approved ones of the batch (made in one second: in any order)
    first, last = listed.first.bounding_box(), listed.last.bounding_box()
    page.mouse.move(last["x"] + 300, last["y"] + last["height"] / 2)
    page.mouse.down()
    page.mouse.move(first["x"] + 300, first["y"] + 2, steps=5)
    page.mouse.up()
    settle(page)
    order = [before[-1], *before[:-1]]
    assert rows(page) == order  # and still so after the run the drag asked for
    screenshot(page, "reel-order-dragged")
    page.get_by_role("button", name="🎬 Make reel").click()
    page.get_by_text("Made a reel of 3 shot(s)", exact=False).wait_for(timeout=60_000)

    [reel] = set(reels.rglob("reel-*.mp4")) - made_before
    per_shot = round((SLATE_S + SHOT_S) * FPS)
    wanted = [(index + 1) * per_shot - 3 for index in range(len(order))]  # a few frames before each shot ends
    colours = []
    with av.open(str(reel)) as container:
        for number, frame in enumerate(container.decode(video=0)):
            if number in wanted:
                colours.append(mean_colour(frame.to_ndarray(format="rgb24")))
            if number == wanted[-1]:
                break
    shown = [min(last_frames, key=lambda task_id: float(np.abs(last_frames[task_id] - colour).sum()))
             for colour in colours]
    assert shown == order
