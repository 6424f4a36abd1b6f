"""Writing MP4 files that browsers play: H.264 (yuv420p) and AAC (mono, or stereo for a reel), moov atom first.

Frames and audio go in one at a time and straight to the encoder, so memory does not depend on
the video's length. Audio is written as the video advances, which keeps the two interleaved in
the file (a player can start at once) and keeps the muxer's queue short.

A frame is either RGB (H x W x 3, uint8) or already yuv420p: the Y, U and V planes one after
another in an (H * 3 / 2) x W uint8 array, PyAV's layout for that format. Scenes that transform one
picture many times (camera moves) work on the planes directly, which spares the encoder an RGB to
YUV conversion per frame; H and W are even, as yuv420p needs.
"""

from __future__ import annotations

from fractions import Fraction
from pathlib import Path
from types import TracebackType
from typing import Final

import av
import numpy as np

# Final: the codec names' literal types pick PyAV's typed add_stream (a VideoStream, an AudioStream).
VIDEO_CODEC: Final = "libx264"
PIXEL_FORMAT = "yuv420p"
AUDIO_CODEC: Final = "aac"
AUDIO_BIT_RATE = 96_000
# "superfast" leaves out the slowest x264 analysis steps but keeps CABAC and the High profile:
# smaller files and better pictures than "ultrafast" at a modest cost (bench/render.py measures it).
X264_OPTIONS = {"preset": "superfast", "crf": "23"}
# x264's frame threads are both faster and better than slice threads, PyAV's default.
X264_THREAD_TYPE = "FRAME"
MUXER_OPTIONS = {"movflags": "faststart"}
KEYFRAME_SECONDS = 2


def add_video_stream(container: av.container.OutputContainer, width: int, height: int, fps: int) -> av.VideoStream:
    """An H.264 stream configured as every preview is encoded (the bench uses it for its baseline)."""
    stream = container.add_stream(VIDEO_CODEC, rate=fps)
    stream.width = width
    stream.height = height
    stream.pix_fmt = PIXEL_FORMAT
    stream.options = dict(X264_OPTIONS)
    stream.codec_context.thread_type = X264_THREAD_TYPE
    stream.codec_context.thread_count = 0
    # A keyframe every two seconds keeps scrubbing in the review player quick.
    stream.codec_context.gop_size = fps * KEYFRAME_SECONDS
    return stream


def is_yuv420(frame: np.ndarray) -> bool:
    """Whether `frame` is yuv420p planes (2-D) rather than RGB (3-D)."""
    return frame.ndim == 2


def yuv420_planes(frame: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Views of the Y (H x W), U and V (H/2 x W/2) planes of a yuv420p frame; writing to them
    writes to the frame."""
    height, width = frame.shape[0] * 2 // 3, frame.shape[1]
    luma, chroma = width * height, (width // 2) * (height // 2)
    flat = frame.reshape(-1)  # a view: the frame is C-contiguous
    return (
        frame[:height],
        flat[luma : luma + chroma].reshape(height // 2, width // 2),
        flat[luma + chroma :].reshape(height // 2, width // 2),
    )


def yuv420_from_rgb(rgb: np.ndarray) -> np.ndarray:
    """The yuv420p planes of an RGB picture, converted as the encoder would convert it itself."""
    return av.VideoFrame.from_ndarray(rgb, format="rgb24").reformat(format=PIXEL_FORMAT).to_ndarray()


def rgb_from_frame(frame: np.ndarray) -> np.ndarray:
    """An RGB picture of either kind of frame (for the last-frame PNG)."""
    if not is_yuv420(frame):
        return frame
    return av.VideoFrame.from_ndarray(frame, format=PIXEL_FORMAT).to_ndarray(format="rgb24")


_LAYOUTS = {1: "mono", 2: "stereo"}


class Mp4Writer:
    """An MP4 file being written. Use as a context manager: on an exception the file is closed
    without flushing, and the caller deletes it."""

    def __init__(
        self,
        path: Path,
        width: int,
        height: int,
        fps: int,
        audio_rate: int | None = None,
        metadata: dict[str, str] | None = None,
        audio_channels: int = 1,
    ) -> None:
        self.path = path
        self.fps = fps
        self._container = av.open(str(path), mode="w", format="mp4", options=dict(MUXER_OPTIONS))
        for key, value in (metadata or {}).items():
            self._container.metadata[key] = value
        self._video = add_video_stream(self._container, width, height, fps)
        self._audio: av.AudioStream | None = None
        if audio_rate is not None:
            self._audio = self._container.add_stream(AUDIO_CODEC, rate=audio_rate, layout=_LAYOUTS[audio_channels])
            self._audio.bit_rate = AUDIO_BIT_RATE
        self.audio_rate = audio_rate
        self.audio_channels = audio_channels
        self.frames_written = 0
        self.samples_written = 0
        self._closed = False

    def add_frame(self, picture: np.ndarray) -> None:
        """Encode one frame, RGB or yuv420p planes (see the module's docstring)."""
        frame = av.VideoFrame.from_ndarray(picture, format=PIXEL_FORMAT if is_yuv420(picture) else "rgb24")
        frame.pts = self.frames_written
        frame.time_base = Fraction(1, self.fps)
        self._container.mux(self._video.encode(frame))
        self.frames_written += 1

    def add_audio(self, samples: np.ndarray) -> None:
        """Encode float32 samples in [-1, 1] that follow the ones already written: a 1-D array for mono,
        one row per channel otherwise (the writer's `audio_channels`)."""
        if self._audio is None or self.audio_rate is None or samples.size == 0:  # both set, or neither
            return
        planar = np.ascontiguousarray(samples, dtype=np.float32).reshape(self.audio_channels, -1)
        frame = av.AudioFrame.from_ndarray(planar, format="fltp", layout=_LAYOUTS[self.audio_channels])
        frame.sample_rate = self.audio_rate
        frame.pts = self.samples_written
        frame.time_base = Fraction(1, self.audio_rate)
        self._container.mux(self._audio.encode(frame))
        self.samples_written += planar.shape[1]

    def finish(self) -> None:
        """Flush the encoders and write the index (moved to the front of the file)."""
        if self._closed:
            return
        self._container.mux(self._video.encode(None))
        if self._audio is not None:
            self._container.mux(self._audio.encode(None))
        self._closed = True
        self._container.close()

    def abort(self) -> None:
        """Close without flushing; the file is incomplete."""
        if not self._closed:
            self._closed = True
            self._container.close()

    def __enter__(self) -> Mp4Writer:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc_type is not None:
            self.abort()
        else:
            self.finish()
