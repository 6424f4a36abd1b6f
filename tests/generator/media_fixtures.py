"""Building test inputs (images, videos, audio) and decoding rendered outputs, all with PyAV and
Pillow, so that the tests judge the files as a player would see them."""

from __future__ import annotations

import base64
import hashlib
import io
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from PIL import Image, ImageOps

MODEL_2_0 = "doubao-seedance-2-0-260128"
MODEL_1_5 = "doubao-seedance-1-5-pro-251215"
MODEL_1_0 = "doubao-seedance-1-0-pro-250528"

RED, GREEN, BLUE, YELLOW = (220, 30, 30), (30, 200, 60), (40, 60, 220), (230, 210, 40)


# ---------- inputs ----------


def gradient_image(width: int, height: int, tint: tuple[int, int, int] = (255, 160, 60)) -> Image.Image:
    """A smooth picture with structure in both directions (so crops and motion show) that
    survives H.264 with little loss."""
    yy, xx = np.mgrid[0:height, 0:width].astype(np.float32)
    base = np.stack([xx / width, yy / height, 0.5 + 0.5 * np.sin(xx / width * 6.28) * np.cos(yy / height * 6.28)], -1)
    pixels = (base * np.array(tint, np.float32)).clip(0, 255).astype(np.uint8)
    return Image.fromarray(pixels)


def banded_image(width: int, height: int, colours: list[tuple[int, int, int]]) -> Image.Image:
    """Vertical bands of solid colour, left to right."""
    pixels = np.zeros((height, width, 3), np.uint8)
    edges = np.linspace(0, width, len(colours) + 1).astype(int)
    for colour, left, right in zip(colours, edges[:-1], edges[1:], strict=True):
        pixels[:, left:right] = colour
    return Image.fromarray(pixels)


def png_bytes(image: Image.Image) -> bytes:
    buffer = io.BytesIO()
    image.save(buffer, format="PNG")
    return buffer.getvalue()


def data_url(data: bytes, mime: str = "image/png") -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode()}"


def image_url(image: Image.Image) -> str:
    return data_url(png_bytes(image))


def video_bytes(colours: list[tuple[int, int, int]], seconds_each: float = 0.5, fps: int = 24,
                size: tuple[int, int] = (320, 240)) -> bytes:
    """An MP4 showing each colour in turn for `seconds_each`."""
    buffer = io.BytesIO()
    with av.open(buffer, mode="w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width, stream.height, stream.pix_fmt = size[0], size[1], "yuv420p"
        index = 0
        for colour in colours:
            for _ in range(round(seconds_each * fps)):
                frame = av.VideoFrame.from_ndarray(np.full((size[1], size[0], 3), colour, np.uint8), format="rgb24")
                frame.pts = index
                container.mux(stream.encode(frame))
                index += 1
        container.mux(stream.encode(None))
    return buffer.getvalue()


def wav_bytes(frequency: float, seconds: float, rate: int = 44100) -> bytes:
    """A sine tone as 16-bit PCM WAV (stereo, so the renderer has to mix it down to mono)."""
    count = int(seconds * rate)
    tone = (0.5 * np.sin(2 * np.pi * frequency * np.arange(count) / rate) * 32767).astype(np.int16)
    buffer = io.BytesIO()
    with av.open(buffer, mode="w", format="wav") as container:
        stream = container.add_stream("pcm_s16le", rate=rate, layout="stereo")
        frame = av.AudioFrame.from_ndarray(np.repeat(tone[None, :], 2, axis=0).T.reshape(1, -1),
                                           format="s16", layout="stereo")
        frame.sample_rate = rate
        frame.pts = 0
        frame.time_base = Fraction(1, rate)
        container.mux(stream.encode(frame))
        container.mux(stream.encode(None))
    return buffer.getvalue()


def fitted(image: Image.Image, size: tuple[int, int]) -> np.ndarray:
    """What a centre-crop to `size`'s aspect and resize should give (Pillow's own ImageOps.fit,
    independent of the renderer's code)."""
    return np.asarray(ImageOps.fit(image, size, Image.Resampling.LANCZOS))


def mean_difference(a: np.ndarray, b: np.ndarray) -> float:
    return float(np.abs(a.astype(np.int16) - b.astype(np.int16)).mean())


# ---------- outputs ----------


@dataclass
class AudioInfo:
    codec: str
    channels: int
    sample_rate: int
    seconds: float
    samples: np.ndarray


@dataclass
class Decoded:
    """A rendered MP4 as PyAV decodes it."""

    codec: str
    profile: str | None
    pix_fmt: str
    width: int
    height: int
    fps: Fraction
    frame_count: int
    seconds: float
    first: np.ndarray
    last: np.ndarray
    metadata: dict[str, str]
    moov_before_mdat: bool
    audio: AudioInfo | None
    frame_hashes: list[str] = field(default_factory=list)
    sampled: dict[int, np.ndarray] = field(default_factory=dict)


def decode(path: Path, keep: tuple[int, ...] = ()) -> Decoded:
    """Decode every frame (hashing each, holding only the first, the last and `keep`)."""
    head = path.read_bytes()[:4096]
    moov, mdat = head.find(b"moov"), head.find(b"mdat")
    with av.open(str(path)) as container:
        video = container.streams.video[0]
        context = video.codec_context
        hashes: list[str] = []
        sampled: dict[int, np.ndarray] = {}
        first = last = None
        for index, frame in enumerate(container.decode(video)):
            pixels = frame.to_ndarray(format="rgb24")
            hashes.append(hashlib.sha256(pixels.tobytes()).hexdigest())
            if index == 0:
                first = pixels
            if index in keep:
                sampled[index] = pixels
            last = pixels
        info = Decoded(
            codec=context.name, profile=context.profile, pix_fmt=context.pix_fmt, width=context.width,
            height=context.height, fps=video.average_rate, frame_count=len(hashes),
            seconds=container.duration / av.time_base, first=first, last=last,
            metadata=dict(container.metadata), moov_before_mdat=0 <= moov < mdat or (moov >= 0 and mdat < 0),
            audio=None, frame_hashes=hashes, sampled=sampled,
        )
    with av.open(str(path)) as container:
        if container.streams.audio:
            stream = container.streams.audio[0]
            chunks = [frame.to_ndarray().reshape(-1) for frame in container.decode(stream)]
            samples = np.concatenate(chunks) if chunks else np.zeros(0, np.float32)
            # `layout.channels`, not `layout.nb_channels`: the latter came with av 13, and av 12 is our bound.
            info.audio = AudioInfo(
                codec=stream.codec_context.name, channels=len(stream.codec_context.layout.channels),
                sample_rate=stream.codec_context.sample_rate, seconds=samples.size / stream.codec_context.sample_rate,
                samples=samples,
            )
    return info


def dominant_frequency(samples: np.ndarray, rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(samples * np.hanning(samples.size)))
    return float(np.fft.rfftfreq(samples.size, 1 / rate)[int(np.argmax(spectrum))])


def lower_right(frame: np.ndarray) -> np.ndarray:
    """Where the watermark goes."""
    height, width = frame.shape[:2]
    return frame[height * 7 // 8 :, width * 3 // 4 :]


def upper_left(frame: np.ndarray) -> np.ndarray:
    """Far from the watermark."""
    height, width = frame.shape[:2]
    return frame[: height // 4, : width // 4]
