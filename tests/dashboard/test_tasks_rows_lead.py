"""Issue 37, point 5: the task table leads with what a person looks for. The status in words with its
time (pure, no Streamlit), which picture a row shows, and the thumbnails of kept copies: made once per
kept file through the untrusted-media opener, kept beside the copy, never waited for beyond a bound."""

from __future__ import annotations

import base64
import io
import threading
import time
from datetime import UTC

import pytest
from PIL import Image

from components.common import thumbnails
from components.tasks.rows import clock, frame_cell, status_cell, table_rows
from dailies.journal import Journal
from dailies.spec.models import TaskRecord
from dailies.spec.results import LAST_FRAME_NAME, VIDEO_NAME
from tests.support import hostile_media as hm

NOW = 1_800_000_000.0
FRAME_URL = "http://127.0.0.1:9/files/cgt-1/last_frame.png?sig=abc"


def record(status: str, created: float | None = NOW - 100, updated: float | None = None, **fields) -> TaskRecord:
    return TaskRecord.model_validate({"id": "cgt-20270115080000-abcde", "model": "m", "status": status,
                                      "created_at": None if created is None else int(created),
                                      "updated_at": None if updated is None else int(updated), **fields})


# ---------- what is running, what just finished ----------


@pytest.mark.parametrize(("seconds", "shown"), [(0, "0:00"), (42, "0:42"), (725, "12:05"), (3723, "1:02:03"),
                                                (-5, "0:00")])
def test_a_clock_reads_minutes_and_seconds_then_hours(seconds, shown):
    assert clock(seconds) == shown


def test_a_running_task_says_for_how_long_since_it_went_running():
    assert status_cell(record("running", created=NOW - 300, updated=NOW - 42), NOW) == "⚙️ running 0:42"
    assert status_cell(record("running", created=NOW - 9000, updated=NOW - 3723), NOW) == "⚙️ running 1:02:03"
    # A record without the moment it started says what it knows: since it was made.
    assert status_cell(record("running", created=NOW - 70), NOW) == "⚙️ running, made 1:10 ago"


def test_a_queued_task_says_for_how_long_since_it_was_made():
    assert status_cell(record("queued", created=NOW - 10, updated=NOW - 10), NOW) == "⏳ queued 0:10"
    # A service whose clock runs ahead: not "-1:59".
    assert status_cell(record("queued", created=NOW + 5), NOW) == "⏳ queued 0:00"


def test_a_finished_task_says_how_long_ago():
    assert status_cell(record("succeeded", updated=NOW - 125), NOW) == "✅ succeeded 2 min ago"
    assert status_cell(record("succeeded", updated=NOW - 20), NOW) == "✅ succeeded just now"
    assert status_cell(record("failed", updated=NOW - 3 * 3600 - 300), NOW) == "❌ failed 3 h 5 min ago"
    assert status_cell(record("cancelled", updated=NOW + 30), NOW) == "🚫 cancelled just now"
    assert status_cell(record("succeeded", updated=None), NOW) == "✅ succeeded"  # no time: the label alone


# ---------- a frame of each ----------


def succeeded(last_frame: str | None = FRAME_URL, finished: float = NOW - 60) -> TaskRecord:
    return record("succeeded", updated=finished, content={"video_url": "http://127.0.0.1:9/files/cgt-1/video.mp4",
                                                          "last_frame_url": last_frame})


def test_a_row_shows_its_kept_thumbnail_else_its_live_last_frame_else_nothing():
    thumb = "data:image/jpeg;base64,AAAA"
    assert frame_cell(succeeded(), thumb, NOW) == thumb
    assert frame_cell(succeeded(), None, NOW) == FRAME_URL  # a task made with return_last_frame
    assert frame_cell(succeeded(last_frame=None), None, NOW) is None
    assert frame_cell(succeeded(finished=NOW - 25 * 3600), None, NOW) is None  # the link has died
    assert frame_cell(succeeded(last_frame="/etc/passwd"), None, NOW) is None  # a path would be served from here
    assert frame_cell(record("running", updated=NOW - 5), None, NOW) is None


def test_the_table_leads_with_the_frame_and_the_status_in_words():
    rows = [succeeded(), record("running", created=NOW - 300, updated=NOW - 42)]
    rows[1] = rows[1].model_copy(update={"id": "cgt-20270115080001-fghij"})
    frame = table_rows(rows, {}, set(), NOW, UTC, thumbnails={rows[0].id: "data:image/jpeg;base64,AAAA"})
    assert list(frame.columns[:2]) == ["frame", "status"]
    assert list(frame["frame"]) == ["data:image/jpeg;base64,AAAA", ""]  # an empty cell, not "None"
    assert list(frame["status"]) == ["✅ succeeded 1 min ago", "⚙️ running 0:42"]


# ---------- thumbnails of kept copies ----------


@pytest.fixture
def fresh(monkeypatch):
    """No thumbnail made in this process yet (as after a restart)."""
    monkeypatch.setattr(thumbnails, "_made", type(thumbnails._made)())
    monkeypatch.setattr(thumbnails, "_failed", {})


def keep_video(journal: Journal, task_id: str, data: bytes, name: str = VIDEO_NAME) -> None:
    path = journal.keep_path(task_id, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(data)
    journal.mark_kept(task_id, name, path)


def jpeg_of(url: str) -> Image.Image:
    assert url.startswith("data:image/jpeg;base64,")
    return Image.open(io.BytesIO(base64.b64decode(url.split(",", 1)[1])))


def task_ids(n: int) -> list[str]:
    return [f"cgt-2027011508{i:04d}-aaaaa" for i in range(n)]


def test_a_page_of_kept_videos_is_decoded_once_then_read_from_beside_the_copies(tmp_path, monkeypatch, fresh):
    journal = Journal(tmp_path / "journal.sqlite3")
    ids = task_ids(20)
    for task_id in ids:
        keep_video(journal, task_id, hm.wide_mp4(256, 144))
    opens = hm.record_av_opens(monkeypatch)
    made = thumbnails.thumbnails(journal, ids, wait_s=120)
    assert made.keys() == set(ids)
    assert len(opens) == 20 and all(o.guarded for o in opens)  # only through spec.media.open_untrusted
    assert jpeg_of(made[ids[0]]).size == (thumbnails.WIDTH_PX, 72)
    assert [p.name.startswith(thumbnails.PREFIX) for p in journal.keep_path(ids[0], VIDEO_NAME).parent.iterdir()
            ].count(True) == 1  # beside the copy
    # The page's next runs decode nothing, nor does a new process: the thumbnails are on disk.
    assert thumbnails.thumbnails(journal, ids, wait_s=120) == made
    monkeypatch.setattr(thumbnails, "_made", type(thumbnails._made)())
    assert thumbnails.thumbnails(journal, ids, wait_s=120) == made
    assert len(opens) == 20


def test_a_kept_last_frame_is_the_picture_and_a_replaced_copy_gets_a_new_one(tmp_path, fresh):
    journal = Journal(tmp_path / "journal.sqlite3")
    [task_id] = task_ids(1)
    keep_video(journal, task_id, hm.wide_mp4(256, 144))
    red = io.BytesIO()
    Image.new("RGB", (256, 144), (220, 20, 20)).save(red, format="PNG")
    keep_video(journal, task_id, red.getvalue(), LAST_FRAME_NAME)
    first = thumbnails.thumbnails(journal, [task_id], wait_s=120)[task_id]
    assert jpeg_of(first).convert("RGB").getpixel((64, 36))[0] > 180  # the red last frame, not the dark video
    # Kept again (a new download over the old file): a new thumbnail, the old one gone from the folder.
    blue = io.BytesIO()
    Image.new("RGB", (256, 144), (20, 20, 220)).save(blue, format="PNG")
    keep_video(journal, task_id, blue.getvalue(), LAST_FRAME_NAME)
    second = thumbnails.thumbnails(journal, [task_id], wait_s=120)[task_id]
    assert jpeg_of(second).convert("RGB").getpixel((64, 36))[2] > 180
    folder = journal.keep_path(task_id, VIDEO_NAME).parent
    assert len([p for p in folder.iterdir() if p.name.startswith(thumbnails.PREFIX)]) == 1


def test_a_copy_that_cannot_be_read_gives_no_picture_and_is_not_tried_on_every_run(tmp_path, monkeypatch, fresh):
    journal = Journal(tmp_path / "journal.sqlite3")
    bad, good = task_ids(2)
    keep_video(journal, bad, hm.malformed_media()["truncated-mp4"])
    keep_video(journal, good, hm.wide_mp4(256, 144))
    real, tried = thumbnails.thumbnail_from_kept, []
    monkeypatch.setattr(thumbnails, "thumbnail_from_kept", lambda kept, width: tried.append(
        kept[VIDEO_NAME].task_id) or real(kept, width))
    assert thumbnails.thumbnails(journal, [bad, good], wait_s=120).keys() == {good}
    assert thumbnails.thumbnails(journal, [bad, good], wait_s=120).keys() == {good}
    assert sorted(tried) == sorted([bad, good])  # the broken copy waits RETRY_S before another try
    monkeypatch.setattr(thumbnails, "RETRY_S", 0.0)
    assert thumbnails.thumbnails(journal, [bad, good], wait_s=120).keys() == {good}
    assert tried.count(bad) == 2


def test_the_page_waits_a_bounded_time_and_takes_a_slow_thumbnail_on_a_later_run(tmp_path, monkeypatch, fresh):
    journal = Journal(tmp_path / "journal.sqlite3")
    [task_id] = task_ids(1)
    keep_video(journal, task_id, hm.wide_mp4(256, 144))
    release = threading.Event()
    real = thumbnails.thumbnail_from_kept
    makings = []

    def slow(kept, width):
        makings.append(width)
        release.wait(60)
        return real(kept, width)

    monkeypatch.setattr(thumbnails, "thumbnail_from_kept", slow)
    started = time.monotonic()
    assert thumbnails.thumbnails(journal, [task_id], wait_s=0.2) == {}  # drawn without it
    assert time.monotonic() - started < 30  # a bound, not a measurement: far below the 60 s the making takes
    release.set()
    assert task_id in thumbnails.thumbnails(journal, [task_id], wait_s=120)
    assert makings == [thumbnails.WIDTH_PX]  # the making under way was waited for, not started again
