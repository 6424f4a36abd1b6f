"""Small test clips for reels: a solid colour per clip (so a frame tells which clip it came from), any
size and frame rate, with or without a tone. Written with PyAV directly, in formats the project's own
encoder does not make (stereo 44.1 kHz sound, 30 fps), so the reel has something to convert."""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path

import av
import numpy as np


def make_clip(path: Path, size: tuple[int, int], fps: int, seconds: float, colour: tuple[int, int, int],
              audio_rate: int | None = None, stereo: bool = False, tone: float = 440.0, start: float = 0.0,
              left_only: bool = False) -> Path:
    """A `size` (width, height) clip of round(seconds * fps) frames of one colour; with a tone at
    `audio_rate` when given (in stereo on both sides, or on the left only); its picture and sound both
    starting at `start` seconds (a trimmed or remuxed file's do not start at 0)."""
    width, height = size
    frames = round(seconds * fps)
    with av.open(str(path), mode="w", format="mp4") as container:
        video = container.add_stream("libx264", rate=fps)
        video.width, video.height, video.pix_fmt = width, height, "yuv420p"
        video.options = {"preset": "ultrafast"}
        audio = None
        if audio_rate is not None:
            audio = container.add_stream("aac", rate=audio_rate, layout="stereo" if stereo else "mono")
        picture = np.empty((height, width, 3), dtype=np.uint8)
        picture[...] = colour
        samples_done = 0
        for index in range(frames):
            frame = av.VideoFrame.from_ndarray(picture, format="rgb24")
            frame.pts, frame.time_base = index + round(start * fps), Fraction(1, fps)
            container.mux(video.encode(frame))
            if audio is not None:
                until = (index + 1) * audio_rate // fps
                t = np.arange(samples_done, until) / audio_rate
                wave = (0.3 * np.sin(2 * np.pi * tone * t)).astype(np.float32)
                channels = 2 if stereo else 1
                planar = np.ascontiguousarray(np.tile(wave, (channels, 1)))
                if stereo and left_only:
                    planar[1] = 0
                chunk = av.AudioFrame.from_ndarray(planar, format="fltp", layout="stereo" if stereo else "mono")
                chunk.sample_rate, chunk.pts = audio_rate, samples_done + round(start * audio_rate)
                chunk.time_base = Fraction(1, audio_rate)
                container.mux(audio.encode(chunk))
                samples_done = until
        container.mux(video.encode(None))
        if audio is not None:
            container.mux(audio.encode(None))
    return path
