"""Countdown arithmetic with a fixed clock: every deadline, every threshold, formatting, and that an
expired link is never offered for playback."""

from __future__ import annotations

import pytest

from components.common import countdown as cd
from components.common.player import choose
from dailies.journal import KeptFile
from dailies.spec import limits as L
from dailies.spec.models import TaskRecord

CREATED = 1_800_000_000
SUCCEEDED = CREATED + 90
HOUR = 3600
VIDEO = "http://127.0.0.1:8000/files/cgt-1/video.mp4?expires=1&signature=x"
FRAME = "http://127.0.0.1:8000/files/cgt-1/last_frame.png?expires=1&signature=x"


def record(status: str = "succeeded", **fields) -> TaskRecord:
    base = {"id": "cgt-20270115080000-abcde", "model": "doubao-seedance-2-0-260128", "status": status,
            "created_at": CREATED, "updated_at": SUCCEEDED if status == "succeeded" else CREATED + 5,
            "execution_expires_after": L.EXECUTION_EXPIRES_DEFAULT}
    if status == "succeeded":
        base["content"] = {"video_url": VIDEO, "last_frame_url": FRAME}
    base.update(fields)
    return TaskRecord.model_validate(base)


# ---------- each deadline ----------


def test_result_link_expires_24_hours_after_success():
    assert cd.result_url_expires_at(record()) == SUCCEEDED + 24 * HOUR
    clock = cd.countdown(record(), "result_url", now=SUCCEEDED + 60)
    assert clock.expires_at == SUCCEEDED + L.RESULT_URL_VALIDITY_SECONDS
    assert clock.remaining_s == 24 * HOUR - 60


def test_record_is_deleted_7_days_after_creation_whatever_the_status():
    for status in ("queued", "running", "succeeded", "failed", "cancelled", "expired"):
        clock = cd.countdown(record(status), "record", now=CREATED)
        assert clock.expires_at == CREATED + 7 * 24 * HOUR
        assert clock.remaining_s == L.RECORD_RETENTION_SECONDS


def test_execution_deadline_only_while_queued_or_running():
    for status in ("queued", "running"):
        clock = cd.countdown(record(status, execution_expires_after=3600), "execution", now=CREATED + 600)
        assert clock.expires_at == CREATED + 3600
        assert clock.remaining_s == 3000
    for status in ("succeeded", "failed", "cancelled", "expired"):
        assert cd.countdown(record(status), "execution", now=CREATED) is None


def test_execution_deadline_defaults_to_48_hours_when_the_record_omits_it():
    clock = cd.countdown(record("queued", execution_expires_after=None), "execution", now=CREATED)
    assert clock.expires_at == CREATED + L.EXECUTION_EXPIRES_DEFAULT


def test_no_link_clock_before_success():
    for status in ("queued", "running", "failed", "cancelled", "expired"):
        assert cd.countdown(record(status), "result_url", now=CREATED) is None


def test_deadlines_in_the_order_people_act_on_them():
    assert [c.kind for c in cd.deadlines(record("running"), CREATED)] == ["execution", "record"]
    assert [c.kind for c in cd.deadlines(record(), SUCCEEDED)] == ["result_url", "record"]
    assert [c.kind for c in cd.deadlines(record("failed"), CREATED)] == ["record"]


def test_deadlines_accept_a_journal_dict():
    saved = record().model_dump(mode="json", exclude_none=True)
    assert cd.deadlines(saved, SUCCEEDED) == cd.deadlines(record(), SUCCEEDED)


# ---------- thresholds ----------


@pytest.mark.parametrize(("left", "level"), [
    (24 * HOUR, "ok"),
    (6 * HOUR + 1, "ok"),
    (6 * HOUR, "warn"),
    (1 * HOUR + 1, "warn"),
    (1 * HOUR, "critical"),
    (1, "critical"),
    (0, "expired"),
    (-5, "expired"),
])
def test_result_link_levels(left, level):
    expires = SUCCEEDED + 24 * HOUR
    assert cd.countdown(record(), "result_url", now=expires - left).level == level


@pytest.mark.parametrize(("left", "level"), [
    (3 * 24 * HOUR, "ok"),
    (2 * 24 * HOUR, "warn"),
    (12 * HOUR + 1, "warn"),
    (12 * HOUR, "critical"),
    (0, "expired"),
])
def test_record_levels(left, level):
    expires = CREATED + L.RECORD_RETENTION_SECONDS
    assert cd.countdown(record("failed"), "record", now=expires - left).level == level


@pytest.mark.parametrize(("window", "left", "level"), [
    (172800, 172800 * 0.25 + 1, "ok"),
    (172800, 172800 * 0.25, "warn"),
    (172800, 172800 * 0.10, "critical"),
    (3600, 900, "warn"),  # a 1 h window turns orange at 15 min, red at 6 min
    (3600, 360, "critical"),
    (3600, 0, "expired"),
])
def test_execution_levels_scale_with_the_window(window, left, level):
    rec = record("queued", execution_expires_after=window)
    assert cd.countdown(rec, "execution", now=CREATED + window - left).level == level


def test_colours_and_text():
    ok = cd.countdown(record(), "result_url", now=SUCCEEDED)
    assert (ok.colour, ok.emoji, ok.text) == ("green", "🟢", "Result link expires in 24 h")
    gone = cd.countdown(record(), "result_url", now=SUCCEEDED + 24 * HOUR)
    assert (gone.colour, gone.text) == ("gray", "Result link expires: expired")
    assert cd.countdown(record(), "result_url", now=SUCCEEDED + 23 * HOUR + 30 * 60).colour == "red"
    assert cd.countdown(record(), "result_url", now=SUCCEEDED + 20 * HOUR).colour == "orange"


# ---------- formatting ----------


@pytest.mark.parametrize(("seconds", "text"), [
    (23 * HOUR + 12 * 60 + 59, "23 h 12 min"),
    (4 * 60 + 59, "4 min"),
    (60, "1 min"),
    (59, "< 1 min"),
    (0.5, "< 1 min"),
    (0, "expired"),
    (-1, "expired"),
    (3 * HOUR, "3 h"),
    (6 * 24 * HOUR + 23 * HOUR + 59 * 60, "6 d 23 h"),
    (7 * 24 * HOUR, "7 d"),
    (48 * HOUR - 60, "47 h 59 min"),
    (48 * HOUR, "2 d"),
])
def test_format_remaining(seconds, text):
    assert cd.format_remaining(seconds) == text


# ---------- playback ----------


def test_link_is_playable_until_the_second_it_expires():
    expires = SUCCEEDED + 24 * HOUR
    assert cd.playable_url(record(), expires - 1) == VIDEO
    assert cd.playable_last_frame_url(record(), expires - 1) == FRAME
    assert cd.playable_url(record(), expires) is None
    assert cd.playable_last_frame_url(record(), expires) is None


def test_unfinished_or_failed_tasks_have_nothing_to_play():
    for status in ("queued", "running", "failed", "cancelled", "expired"):
        assert cd.playable_url(record(status), CREATED) is None


def test_player_falls_back_to_the_kept_copy_then_says_the_link_expired(tmp_path):
    expired_at = SUCCEEDED + 24 * HOUR
    assert choose(record(), {}, SUCCEEDED).source == "url"
    none = choose(record(), {}, expired_at)
    assert none.source == "none" and "expired" in none.reason
    video = tmp_path / "video.mp4"
    video.write_bytes(b"x")
    kept = {"video.mp4": KeptFile("cgt-1", "video.mp4", video, 1, 0.0)}
    choice = choose(record(), kept, expired_at)
    assert (choice.source, choice.path) == ("kept", video)
    # Once the record itself is gone, the kept copy still plays.
    assert choose(None, kept, expired_at).source == "kept"
    assert choose(None, {}, expired_at).source == "none"


def test_links_of_a_task_the_service_no_longer_has_are_never_played(tmp_path):
    # The journal's copy of a deleted task still holds young links, but their files are gone.
    assert choose(record(), {}, SUCCEEDED, on_service=False).source == "none"
    video = tmp_path / "video.mp4"
    video.write_bytes(b"x")
    kept = {"video.mp4": KeptFile("cgt-1", "video.mp4", video, 1, 0.0)}
    assert choose(record(), kept, SUCCEEDED, on_service=False).source == "kept"
