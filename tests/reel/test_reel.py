"""The reel composer: shots of different sizes, ratios, frame rates and lengths, with and without sound,
become one MP4 of one frame size whose duration, sound and shot starts are where they should be."""

from __future__ import annotations

import time

import av
import numpy as np
import pytest

from dailies.reel import ReelShot, make_reel, parse_size, slate_lines
from dailies.timecodes import frame_timecode

from .clips import make_clip

SIZE = (384, 216)
FPS = 24
SLATE = 1.5
RED, GREEN, BLUE, YELLOW = (220, 30, 30), (30, 200, 30), (30, 30, 220), (230, 220, 40)


@pytest.fixture(scope="module")
def clips(tmp_path_factory):
    folder = tmp_path_factory.mktemp("reel-clips")
    # (path, duration in seconds, colour, has sound)
    return [
        (make_clip(folder / "wide.mp4", (320, 180), 24, 1.0, RED, 44100, stereo=True), 1.0, RED, True),
        (make_clip(folder / "portrait.mp4", (240, 320), 30, 1.5, GREEN), 1.5, GREEN, False),
        (make_clip(folder / "square.mp4", (200, 200), 24, 2.0, BLUE, 48000), 2.0, BLUE, True),
        (make_clip(folder / "wide30.mp4", (320, 180), 30, 1.2, YELLOW, 48000), 1.2, YELLOW, True),
    ]


def _decode(path):
    pictures, sizes = [], set()
    with av.open(str(path)) as container:
        for frame in container.decode(video=0):
            sizes.add((frame.width, frame.height))
            pictures.append(frame.to_ndarray(format="rgb24"))
    with av.open(str(path)) as container:
        sound = np.concatenate([f.to_ndarray()[0] for f in container.decode(audio=0)])  # the left side
        rate = container.streams.audio[0].rate
    return pictures, sizes, sound, rate


def _close(pixel, colour, tolerance=30):
    return all(abs(int(a) - int(b)) <= tolerance for a, b in zip(pixel, colour, strict=True))


def test_a_reel_of_mixed_shots_with_slates_and_burn_in(clips, tmp_path):
    reported = []
    shots = [ReelShot(path, f"shot {i}", slate_lines(f"v{i}", "Approved", "a test prompt", time.time()))
             for i, (path, *_rest) in enumerate(clips, 1)]
    out = make_reel(shots, tmp_path / "reel.mp4", size=SIZE, fps=FPS, slates=True, burn_in=True,
                    slate_seconds=SLATE, progress=reported.append)
    assert out.is_file() and not list(tmp_path.glob(".*part"))
    pictures, sizes, sound, rate = _decode(out)

    assert sizes == {SIZE}
    expected = sum(seconds for _, seconds, _, _ in clips) + SLATE * len(clips)
    assert abs(len(pictures) / FPS - expected) <= 1 / FPS
    # Sound throughout (AAC adds its priming and pads the last packet: a frame's worth either way).
    assert abs(sound.size / rate - expected) <= 2 / FPS
    with av.open(str(out)) as container:
        assert container.streams.video[0].codec_context.name == "h264"
        assert container.streams.audio[0].codec_context.name == "aac"

    start = 0.0
    for _, seconds, colour, has_sound in clips:
        start += SLATE
        first = round(start * FPS)
        picture = pictures[first]
        height, width = picture.shape[:2]
        assert _close(picture[height // 2, width // 2], colour), (first, picture[height // 2, width // 2])
        # The frame before is the slate (dark grey), not this shot.
        assert not _close(pictures[first - 1][height // 2, width // 2], colour)
        # Pillarboxed shots have black bars at the sides (the burn-in strip is at the top only).
        aspect = {RED: 16 / 9, YELLOW: 16 / 9, GREEN: 240 / 320, BLUE: 1.0}[colour]
        if aspect < SIZE[0] / SIZE[1]:
            assert picture[height // 3, 4].max() <= 12 and picture[height // 3, width - 5].max() <= 12
        else:  # fills the frame: no bars; the burn-in darkens the top, clear of a player's controls
            assert _close(picture[height // 3, 4], colour)
            assert _close(picture[height - 3, width // 2], colour) and not _close(picture[2, width // 2], colour)
        # Sound where the shot has some, silence where it has none and on the slates.
        middle = sound[int((start + 0.2) * rate): int((start + seconds - 0.2) * rate)]
        loudness = float(np.sqrt(np.mean(middle ** 2)))
        assert (loudness > 0.1) if has_sound else (loudness < 0.01), (colour, loudness)
        slate = sound[int((start - SLATE + 0.2) * rate): int((start - 0.2) * rate)]
        assert float(np.abs(slate).max()) < 0.01
        start += seconds

    assert reported[-1] == 1.0 and reported == sorted(reported) and len(reported) > 5


def test_without_slates_the_shots_follow_each_other_and_frame_rates_are_resampled(clips, tmp_path):
    shots = [ReelShot(path, f"shot {i}") for i, (path, *_rest) in enumerate(clips[:2], 1)]
    out = make_reel(shots, tmp_path / "plain.mp4", size=(320, 180), fps=30)
    pictures, sizes, sound, rate = _decode(out)
    assert sizes == {(320, 180)}
    assert len(pictures) == 30 + 45  # 1.0 s of 24 fps and 1.5 s of 30 fps, both at 30 fps
    assert _close(pictures[0][90, 160], RED) and _close(pictures[29][90, 160], RED)
    assert _close(pictures[30][90, 160], GREEN)
    assert abs(sound.size / rate - 2.5) <= 2 / 30


def test_a_missing_or_broken_shot_is_named(clips, tmp_path):
    good = ReelShot(clips[0][0], "good")
    with pytest.raises(ValueError, match="shot gone: no video file"):
        make_reel([good, ReelShot(tmp_path / "nope.mp4", "gone")], tmp_path / "r.mp4")
    broken = tmp_path / "broken.mp4"
    broken.write_bytes(b"not a video at all" * 100)
    with pytest.raises(ValueError, match="shot bad: cannot read"):
        make_reel([good, ReelShot(broken, "bad")], tmp_path / "r.mp4")
    assert not (tmp_path / "r.mp4").exists()
    with pytest.raises(ValueError, match="at least one shot"):
        make_reel([], tmp_path / "r.mp4")


def test_helpers():
    assert parse_size("1280x720") == (1280, 720)
    with pytest.raises(ValueError):
        parse_size("1281x720")
    assert frame_timecode(24 * 3661 + 5, 24) == "01:01:01:05"
    lines = slate_lines("v3", "Approved", "word " * 100, 0)
    assert lines[:2] == ["Version v3", "Status: Approved"] and lines[-1].endswith("…") and len(lines[-1]) <= 160


def test_the_sound_of_a_shot_whose_streams_start_late_stays_with_its_picture(tmp_path):
    """A clip cut from a longer take (or remuxed from MPEG-TS) starts after 0. Its first sound is
    decoded before its first picture (the video decoder holds frames back), and was measured from 0:
    half a second of silence went in, and the sound ran that late for the whole shot."""
    rate, fps = 48_000, 24
    late = make_clip(tmp_path / "late.mp4", (160, 96), fps, 1.0, (90, 90, 90), audio_rate=rate, start=0.5)
    with av.open(str(late)) as source:
        assert all(abs(float(s.start_time * s.time_base) - 0.5) < 0.05 for s in source.streams)
    reel = make_reel([ReelShot(late, "late")], tmp_path / "reel.mp4", size=(160, 96), fps=fps)
    with av.open(str(reel)) as made:
        sound = np.concatenate([f.to_ndarray()[0] for f in made.decode(audio=0)])
    onset = int(np.argmax(np.abs(sound) > 0.05)) / rate  # the reel's picture starts at 0
    assert onset < 1 / fps, f"the sound starts {onset:.3f} s after the picture"


def test_the_reel_keeps_stereo_and_plays_a_mono_shot_on_both_sides(tmp_path):
    """Clips come with stereo sound and a client hears the reel: a tone on the left stays on the left
    (it was mixed down to mono), and a mono shot is heard on both sides."""
    rate, fps = 48_000, 24
    left = make_clip(tmp_path / "left.mp4", (160, 96), fps, 1.0, (200, 0, 0), audio_rate=44_100, stereo=True,
                     left_only=True)
    mono = make_clip(tmp_path / "mono.mp4", (160, 96), fps, 1.0, (0, 0, 200), audio_rate=rate)
    reel = make_reel([ReelShot(left, "left"), ReelShot(mono, "mono")], tmp_path / "reel.mp4", size=(160, 96),
                     fps=fps)
    with av.open(str(reel)) as made:
        assert made.streams.audio[0].codec_context.channels == 2
        sound = np.concatenate([f.to_ndarray() for f in made.decode(audio=0)], axis=1)
    assert sound.shape[0] == 2
    first, second = sound[:, int(0.2 * rate):int(0.8 * rate)], sound[:, int(1.2 * rate):int(1.8 * rate)]
    loudness = np.sqrt(np.mean(first ** 2, axis=1)), np.sqrt(np.mean(second ** 2, axis=1))
    assert loudness[0][0] > 0.1 and loudness[0][1] < 0.01, loudness  # left only
    assert min(loudness[1]) > 0.1 and abs(loudness[1][0] - loudness[1][1]) < 0.01, loudness  # both sides
