"""Timecodes of review comments: 'mm:ss.cc' formatted and parsed (dailies/timecodes.py)."""

from __future__ import annotations

import math

import pytest

from dailies.timecodes import format_timecode, parse_timecode


@pytest.mark.parametrize(("seconds", "shown"), [
    (0, "00:00.00"),
    (2, "00:02.00"),
    (2.13, "00:02.13"),
    (2.134, "00:02.13"),
    (2.125, "00:02.13"),  # half up, as the player's JavaScript (Math.round) rounds
    (0.005, "00:00.01"),
    (59.994, "00:59.99"),
    (59.995, "01:00.00"),  # the rounding carries into the minutes
    (60, "01:00.00"),
    (65.5, "01:05.50"),
    (125.07, "02:05.07"),
    (3600, "60:00.00"),  # no hours: minutes go on
    (4530.25, "75:30.25"),
])
def test_format(seconds, shown):
    assert format_timecode(seconds) == shown


@pytest.mark.parametrize(("text", "seconds"), [
    ("00:02.13", 2.13),
    ("00:00.00", 0.0),
    ("01:05.50", 65.5),
    ("01:05.5", 65.5),
    ("1:05", 65.0),
    ("02:05.07", 125.07),
    ("75:30.25", 4530.25),
    (" 00:02.13 ", 2.13),
    ("00:02.125", 2.125),
])
def test_parse(text, seconds):
    assert parse_timecode(text) == pytest.approx(seconds, abs=1e-9)


@pytest.mark.parametrize("seconds", [0, 0.01, 2.13, 59.99, 60, 61.07, 599.99, 3725.5])
def test_round_trip(seconds):
    assert parse_timecode(format_timecode(seconds)) == pytest.approx(seconds, abs=1e-9)


def test_parse_keeps_no_float_noise():
    assert parse_timecode("01:05.10") == 65.1


@pytest.mark.parametrize("bad", ["", "  ", "2.13", "abc", "00:60.00", "00:2x", "-00:01.00", "00:-1",
                                 "1:00:00", "00:02.", ":02.13", "00:02,13", "00:02.13s"])
def test_parse_rejects(bad):
    with pytest.raises(ValueError):
        parse_timecode(bad)


def test_parse_rejects_a_non_string():
    with pytest.raises(ValueError):
        parse_timecode(2.13)  # type: ignore[arg-type]


@pytest.mark.parametrize("bad", [-0.01, -5, math.inf, -math.inf, math.nan, "2.13", None, True])
def test_format_rejects(bad):
    with pytest.raises(ValueError):
        format_timecode(bad)


@pytest.mark.parametrize("bad", [math.inf, 1e300, math.nan, -1.0])
def test_a_comment_whose_timecode_is_no_time_in_a_video_still_draws_and_goes_in_a_report(bad):
    """A comment made by other means than the journal's reads (an entry built by a caller, a row of an
    older release): its card draws it without a timecode button, and the report leaves its timecode out."""
    from streamlit.testing.v1 import AppTest

    from dailies.review_report import ReportComment, ReportEntry, to_csv, to_pdf

    def card(bad: float) -> None:
        from components.review import comments as review_comments
        from dailies.journal import Comment

        comment = Comment("c1", "cgt-1", "Ana", "pinned nowhere", 1.0, bad)
        review_comments.timecode_button(comment, "review.tc.c1", lambda: None, ())
        import streamlit as st

        st.write("drawn")

    at = AppTest.from_function(card, args=(bad,)).run()
    assert not at.exception and not at.button and [m.value for m in at.markdown] == ["drawn"]
    entry = ReportEntry(task_id="cgt-1", version="v1", model="m", created_at=1.0, prompt="p", status="Pending review",
                        status_by="", status_at=None, comments=[ReportComment("Ana", 1.0, bad, "pinned nowhere")])
    assert "pinned nowhere" in to_csv([entry]) and to_pdf([entry], "report").startswith(b"%PDF")
