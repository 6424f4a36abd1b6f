"""Timecodes of a review comment: "mm:ss.cc" (minutes, seconds, hundredths), e.g. "00:02.13", and
of a frame: "HH:MM:SS:FF" at the video's own frame rate (reel burn-ins, the edit hand-off).

Pure functions with no Streamlit import, so the comment list can format and parse them anywhere.
The timecode player's JavaScript formats its button label the same way (`fmt` in
timecode_player.py): both round half up to the hundredth, so the label the reviewer clicked and
the time the comment shows agree. Minutes are not capped at 59 (there are no hours: a take lasts
seconds, and "75:00.00" still reads plainly).
"""

from __future__ import annotations

import math
import re
from typing import TypeGuard

_TIMECODE = re.compile(r"(\d+):([0-5]?\d(?:\.\d+)?)")
# The latest time a comment may be pinned at: a day, beyond any clip and any reel made of them. A
# bound, so a timecode of 1e300 (finite, but no position in any video) is refused like infinity.
MAX_SECONDS = 24 * 3600.0


def is_timecode(seconds: object) -> TypeGuard[float]:
    """Whether `seconds` is a position in a video: a finite number of seconds from 0 to MAX_SECONDS."""
    return (isinstance(seconds, int | float) and not isinstance(seconds, bool) and math.isfinite(seconds)
            and 0 <= seconds <= MAX_SECONDS)


def format_timecode(seconds: float) -> str:
    """'mm:ss.cc' of a time in seconds, rounded half up to the hundredth (2.125 -> '00:02.13').

    Raises ValueError for a negative, infinite or NaN time."""
    if not isinstance(seconds, int | float) or isinstance(seconds, bool):
        raise ValueError(f"not a time in seconds: {seconds!r}")
    if not math.isfinite(seconds) or seconds < 0:
        raise ValueError(f"not a time in seconds: {seconds!r}")
    # Half up, as JavaScript's Math.round (Python's round() would send 0.125 to 0.12).
    hundredths = math.floor(seconds * 100 + 0.5)
    minutes, rest = divmod(hundredths, 6000)
    whole, cents = divmod(rest, 100)
    return f"{minutes:02d}:{whole:02d}.{cents:02d}"


def parse_timecode(text: str) -> float:
    """Seconds of 'mm:ss', 'mm:ss.c' or 'mm:ss.cc' (more decimals are kept): '00:02.13' -> 2.13,
    '01:05.5' -> 65.5. Surrounding spaces are ignored.

    Raises ValueError for anything else: an empty string, a missing colon, seconds of 60 or more, a
    sign, hours ('1:00:00')."""
    if not isinstance(text, str):
        raise ValueError(f"not a timecode: {text!r}")
    match = _TIMECODE.fullmatch(text.strip())
    if match is None:
        raise ValueError(f"not a timecode (mm:ss.cc): {text!r}")
    minutes, seconds = int(match.group(1)), float(match.group(2))
    # Rounded to the microsecond so 1 minute + 5.1 s is 65.1, not 65.10000000000001.
    return round(minutes * 60 + seconds, 6)


# The most frames a position may name: a day at 120 fps (MAX_SECONDS at any rate a video has).
MAX_FRAME = int(MAX_SECONDS * 120)


def is_frame(frame: object) -> TypeGuard[int]:
    """Whether `frame` is a frame number: a whole number from 0 to MAX_FRAME (not a bool)."""
    return isinstance(frame, int) and not isinstance(frame, bool) and 0 <= frame <= MAX_FRAME


# What a record that gives no frame rate is taken to be at: Seedance renders 24 fps.
DEFAULT_FRAME_RATE = 24.0


def record_frame_rate(value: object) -> float:
    """A record's `framespersecond` as a rate: a positive finite number, else DEFAULT_FRAME_RATE."""
    if isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value) and 0 < value <= 1000:
        return float(value)
    return DEFAULT_FRAME_RATE


def nominal_rate(fps: float) -> int:
    """The whole frames per second a timecode counts in: 24 for 23.976, 30 for 29.97 (non-drop)."""
    if not isinstance(fps, int | float) or isinstance(fps, bool) or not math.isfinite(fps) or not 0 < fps <= 1000:
        raise ValueError(f"not a frame rate: {fps!r}")
    return max(1, round(fps))


def frame_timecode(frame: int, fps: float) -> str:
    """HH:MM:SS:FF of a frame counted from 0, at the video's rate (non-drop: 29.97 counts as 30)."""
    if not isinstance(frame, int) or isinstance(frame, bool) or frame < 0:
        raise ValueError(f"not a frame number: {frame!r}")
    rate = nominal_rate(fps)
    seconds, frames = divmod(frame, rate)
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours:02d}:{minutes:02d}:{seconds:02d}:{frames:02d}"


def frame_at(seconds: float, fps: float) -> int:
    """The frame a player shows at `seconds`: the last one starting at or before it. A hair's
    tolerance, so a time stored to the hundredth from a frame's start still names that frame."""
    if not is_timecode(seconds):
        raise ValueError(f"not a time in seconds: {seconds!r}")
    nominal_rate(fps)  # checks it
    return math.floor(seconds * fps + 1e-6)


def frame_start(frame: int, fps: float) -> float:
    """Seconds at which `frame` starts showing."""
    nominal_rate(fps)
    return frame / fps
