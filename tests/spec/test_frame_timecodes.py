"""Frame timecodes (dailies/timecodes.py): HH:MM:SS:FF at the video's own rate, and the frame a
player shows at a time."""

from __future__ import annotations

import pytest

from dailies.timecodes import (
    MAX_FRAME,
    frame_at,
    frame_start,
    frame_timecode,
    is_frame,
    nominal_rate,
    record_frame_rate,
)


@pytest.mark.parametrize(("frame", "fps", "shown"), [
    (0, 24, "00:00:00:00"), (23, 24, "00:00:00:23"), (24, 24, "00:00:01:00"), (24 * 3661 + 5, 24, "01:01:01:05"),
    (29, 29.97, "00:00:00:29"), (30, 29.97, "00:00:01:00"), (24, 23.976, "00:00:01:00"), (49, 25, "00:00:01:24"),
])
def test_a_frames_timecode_counts_whole_frames_at_the_nominal_rate(frame, fps, shown):
    assert frame_timecode(frame, fps) == shown


@pytest.mark.parametrize("fps", [24, 25, 30, 23.976, 60])
def test_a_frames_start_is_shown_as_that_frame_and_so_is_its_time_to_the_hundredth(fps):
    for frame in range(0, 200):
        assert frame_at(frame_start(frame, fps), fps) == frame
        # The comment's timecode is kept to the hundredth, rounded half up: still inside the frame, or a
        # hair before its start (then the player seeks by the frame, not by the time).
        hundredth = int(frame_start(frame, fps) * 100 + 0.5) / 100
        assert frame_at(hundredth, fps) in (frame - 1, frame)
    assert frame_at(1.0 / fps * 2.5, fps) == 2


@pytest.mark.parametrize("bad", [-1, 1.5, True, None, "3", MAX_FRAME + 1])
def test_what_is_not_a_frame_number_is_refused(bad):
    assert not is_frame(bad)
    if not isinstance(bad, int) or isinstance(bad, bool) or bad < 0:
        with pytest.raises(ValueError):
            frame_timecode(bad, 24)


@pytest.mark.parametrize("fps", [0, -24, float("nan"), float("inf"), True, "24"])
def test_what_is_not_a_frame_rate_is_refused(fps):
    with pytest.raises(ValueError):
        nominal_rate(fps)


@pytest.mark.parametrize(("value", "rate"), [(24, 24.0), (30, 30.0), (23.976, 23.976), (None, 24.0), (0, 24.0),
                                             (-5, 24.0), (True, 24.0), ("24", 24.0), (float("nan"), 24.0)])
def test_a_records_frame_rate_is_its_own_when_it_is_one_else_24(value, rate):
    assert record_frame_rate(value) == rate
