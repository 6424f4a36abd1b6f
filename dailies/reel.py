"""A reel: several videos played one after another in one H.264/AAC MP4, as a review or a client sees them.

Every shot is brought to one frame size and one frame rate:
- the size is `size` (default 1280 x 720, whatever the shots are: a reel of mixed 9:16, 1:1 and 16:9
  takes gets one predictable frame, and the first shot does not decide for the others). Each picture
  is scaled to fit inside it with its aspect ratio kept, centred on black (letterbox or pillarbox),
  never stretched (a smaller picture is enlarged until it touches two sides of the frame);
- the frame rate is `fps`: a source frame is shown for as long as its timestamp says, so frames are
  repeated or dropped as the rates require (a 30 fps shot in a 24 fps reel loses one frame in five);
- the sound is stereo 48 kHz AAC (the project's encoder, `Mp4Writer`): each shot's audio is decoded and
  resampled (`av.AudioResampler`; a mono shot plays on both sides), cut or padded with silence to the
  shot's video duration, and a shot without sound (and a slate) gets silence, so picture and sound stay
  in step over the whole reel. Stereo because the clips are: a reel is how a client hears them.

Optionally a slate (a still of `slate_seconds` with the shot's name and the lines given, e.g. version,
status, prompt excerpt and date) goes before each shot, and a burn-in (the shot's name and the reel's
running timecode HH:MM:SS:FF on a dark strip at the top) over every picture of the shots.

Everything streams: each input is demuxed and decoded a packet at a time, every output frame goes
straight to the encoder, and the only per-frame buffers are one canvas of the reel's size and the
audio decoded ahead of the picture within one shot. Memory therefore depends on the frame size, not on
the number or length of the shots (bench/reel_memory.py measures it).
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from PIL import Image, ImageDraw

from .generator.audio import AUDIO_RATE
from .generator.encode import Mp4Writer, yuv420_from_rgb, yuv420_planes
from .generator.overlays import Overlay
from .generator.typography import fit, load_font, needs_cjk
from .reel_options import DEFAULT_FPS, DEFAULT_SIZE, SLATE_SECONDS
from .reel_options import parse_size as parse_size  # where the dashboard and the tests import it from
from .spec.media import MediaRefused, open_untrusted
from .timecodes import frame_timecode

# The reel's sound: stereo (see the module's docstring).
LAYOUT = "stereo"
CHANNELS = 2
PROMPT_EXCERPT = 160  # characters of the prompt on a slate
# Black in the limited-range YUV the encoder writes (what RGB 0, 0, 0 becomes).
_BLACK_Y, _BLACK_UV = 16, 128
_EPSILON = 1e-6

Progress = Callable[[float], object]


@dataclass(frozen=True)
class ReelShot:
    """One shot of a reel: its video file, the name shown on the slate and the burn-in, and the slate's
    other lines (None: the name only)."""

    path: Path
    title: str
    slate_lines: list[str] | None = None


def slate_lines(version: str | None = None, status: str | None = None, prompt: str | None = None,
                created_at: float | None = None) -> list[str]:
    """The usual lines of a slate, those known: "Version v2", "Status: Approved", the prompt's first
    PROMPT_EXCERPT characters, and the date the take was made (local time)."""
    lines = []
    if version:
        lines.append(f"Version {version}")
    if status:
        lines.append(f"Status: {status}")
    if created_at:
        lines.append(datetime.fromtimestamp(created_at).strftime("%Y-%m-%d %H:%M"))
    if prompt:
        text = " ".join(prompt.split())
        lines.append(text if len(text) <= PROMPT_EXCERPT else text[: PROMPT_EXCERPT - 1].rstrip() + "…")
    return lines


# ---------- probing ----------


@dataclass(frozen=True)
class _Probe:
    duration: float  # seconds, as the container says (for progress only; decoding decides)
    has_audio: bool


def _probe(shot: ReelShot) -> _Probe:
    """Check that a shot can be read; its duration and whether it has sound. ValueError names the shot."""
    if not Path(shot.path).is_file():
        raise ValueError(f"shot {shot.title}: no video file at {shot.path}")
    try:
        with open_untrusted(Path(shot.path), "video") as container:
            if not container.streams.video:
                raise ValueError(f"shot {shot.title}: {shot.path} has no video stream")
            stream = container.streams.video[0]
            if stream.duration is not None and stream.time_base is not None:
                duration = float(stream.duration * stream.time_base)
            elif container.duration is not None:
                duration = container.duration / av.time_base
            else:
                duration = 0.0
            return _Probe(duration, bool(container.streams.audio))
    except (av.FFmpegError, MediaRefused) as exc:
        raise ValueError(f"shot {shot.title}: cannot read {shot.path}: {exc}") from exc


# ---------- pictures ----------


def _fit_size(width: int, height: int, target: tuple[int, int]) -> tuple[int, int]:
    """The largest even size of `width` x `height`'s aspect ratio inside `target` (smaller pictures are
    enlarged: every shot fills the frame's height or width)."""
    scale = min(target[0] / width, target[1] / height)
    fitted_w = max(2, min(target[0], int(round(width * scale / 2)) * 2))
    fitted_h = max(2, min(target[1], int(round(height * scale / 2)) * 2))
    return fitted_w, fitted_h


class _Canvas:
    """One yuv420p frame of the reel's size, black, onto which each picture is placed centred. Reused for
    every frame (the encoder copies what it is given), so composing allocates nothing per frame."""

    def __init__(self, size: tuple[int, int]) -> None:
        self.width, self.height = size
        self.frame = np.empty((self.height * 3 // 2, self.width), dtype=np.uint8)
        self._placed: tuple[int, int, int, int] | None = None
        self.clear()

    def clear(self) -> None:
        self.frame[: self.height] = _BLACK_Y
        self.frame[self.height :] = _BLACK_UV
        self._placed = None

    def place(self, picture: av.VideoFrame) -> None:
        fitted_w, fitted_h = _fit_size(picture.width, picture.height, (self.width, self.height))
        left, top = (self.width - fitted_w) // 4 * 2, (self.height - fitted_h) // 4 * 2
        if self._placed != (left, top, fitted_w, fitted_h):
            self.clear()
            self._placed = (left, top, fitted_w, fitted_h)
        scaled = picture.reformat(width=fitted_w, height=fitted_h, format="yuv420p",
                                  interpolation="BILINEAR").to_ndarray()
        y, u, v = yuv420_planes(self.frame)
        src_y, src_u, src_v = yuv420_planes(scaled)
        y[top : top + fitted_h, left : left + fitted_w] = src_y
        u[top // 2 : (top + fitted_h) // 2, left // 2 : (left + fitted_w) // 2] = src_u
        v[top // 2 : (top + fitted_h) // 2, left // 2 : (left + fitted_w) // 2] = src_v


def _slate_picture(shot: ReelShot, size: tuple[int, int], number: int, count: int) -> np.ndarray:
    """The slate of a shot as yuv420p planes: its name large, then its lines, on dark grey."""
    width, height = size
    image = Image.new("RGB", size, (24, 24, 28))
    draw = ImageDraw.Draw(image)
    short = min(width, height)
    margin = max(8, width // 16)
    title_size = max(12, short // 9)
    small = max(9, short // 22)
    y = max(8, height // 8)
    draw.text((margin, y), f"{number}/{count}", font=load_font(small), fill=(150, 150, 160))
    y += round(small * 1.6)
    title_font = load_font(title_size, bold=True, cjk=needs_cjk(shot.title))
    draw.text((margin, y), shot.title, font=title_font, fill=(245, 245, 245))
    y += round(title_size * 1.5)
    lines = list(shot.slate_lines or [])
    for index, line in enumerate(lines):
        room = height - y - margin // 2
        if room < small:
            break
        if index == len(lines) - 1 or len(line) > 60:  # the prompt: wrapped into what room is left
            font, wrapped, line_height = fit(line, (width - 2 * margin, room), small, max(8, small * 2 // 3))
        else:
            font, wrapped, line_height = load_font(small, cjk=needs_cjk(line)), [line], round(small * 1.4)
        for text in wrapped:
            if y + line_height > height:
                break
            draw.text((margin, y), text, font=font, fill=(210, 210, 215))
            y += line_height
    return yuv420_from_rgb(np.asarray(image))


class _BurnIn:
    """The shot's name (drawn once per shot) and the running timecode (drawn per frame on a small patch)
    on a dark strip along the top, blended with the project's overlays: at the bottom, a browser's
    player controls covered it."""

    def __init__(self, title: str, size: tuple[int, int], fps: int) -> None:
        width, height = size
        self.fps = fps
        self.font_size = max(10, min(width, height) // 24)
        self.font = load_font(self.font_size, cjk=needs_cjk(title))
        self.digits = load_font(self.font_size)
        pad = max(2, self.font_size // 3) // 2 * 2
        strip_h = (self.font_size + 2 * pad + 1) // 2 * 2
        self.top = 0
        self.pad = pad
        self.code_w = (int(self.digits.getlength("00:00:00:00")) + 2 * pad + 1) // 2 * 2
        self.code_left = (width - self.code_w) // 2 * 2
        strip = Image.new("RGBA", (width, strip_h), (0, 0, 0, 150))
        draw = ImageDraw.Draw(strip)
        room = self.code_left - 2 * pad
        name = title
        while name and self.font.getlength(name) > room:
            name = name[:-1]
        draw.text((pad, pad), name if name == title else name[:-1] + "…", font=self.font,
                  fill=(255, 255, 255, 235))
        self.strip = Overlay(np.asarray(strip), 0, self.top)
        self.strip_h = strip_h

    def apply(self, frame: np.ndarray, reel_frame: int) -> None:
        self.strip.apply(frame)
        patch = Image.new("RGBA", (self.code_w, self.strip_h), (0, 0, 0, 0))
        ImageDraw.Draw(patch).text((self.pad, self.pad), frame_timecode(reel_frame, self.fps), font=self.digits,
                                   fill=(255, 230, 120, 255))
        Overlay(np.asarray(patch), self.code_left, self.top).apply(frame)


# ---------- the reel ----------


class _Reel:
    def __init__(self, writer: Mp4Writer, fps: int, rate: int, total_frames: int, progress: Progress | None) -> None:
        self.writer, self.fps, self.rate = writer, fps, rate
        self.total_frames = max(1, total_frames)
        self.progress = progress
        self._last_report = -1.0

    @property
    def frames(self) -> int:
        return self.writer.frames_written

    def sample_at(self, frame_index: int) -> int:
        """The audio sample that starts video frame `frame_index` (exact over the whole reel, no drift)."""
        return frame_index * self.rate // self.fps

    def add_frame(self, picture: np.ndarray) -> None:
        self.writer.add_frame(picture)
        if self.progress is not None:
            fraction = min(0.99, self.frames / self.total_frames)
            if fraction - self._last_report >= 0.01:
                self._last_report = fraction
                self.progress(fraction)

    def add_silence_to(self, sample: int) -> None:
        missing = sample - self.writer.samples_written
        while missing > 0:
            chunk = min(missing, self.rate)
            self.writer.add_audio(_silence(chunk))
            missing -= chunk

    def add_slate(self, picture: np.ndarray, frames: int) -> None:
        for _ in range(frames):
            self.add_frame(picture)
            self.add_silence_to(self.sample_at(self.frames))


def _silence(samples: int) -> np.ndarray:
    return np.zeros((CHANNELS, samples), dtype=np.float32)


class _AudioQueue:
    """A shot's decoded sound not yet written, float32 at the reel's rate, a row per channel."""

    def __init__(self) -> None:
        self._chunks: list[np.ndarray] = []
        self.size = 0

    def push(self, samples: np.ndarray) -> None:
        if samples.shape[1]:
            self._chunks.append(samples)
            self.size += samples.shape[1]

    def take(self, count: int) -> np.ndarray:
        count = min(count, self.size)
        out, taken = [], 0
        while taken < count:
            chunk = self._chunks[0]
            need = count - taken
            if chunk.shape[1] <= need:
                out.append(self._chunks.pop(0))
                taken += chunk.shape[1]
            else:
                out.append(chunk[:, :need])
                self._chunks[0] = chunk[:, need:]
                taken += need
        self.size -= count
        return np.concatenate(out, axis=1) if out else _silence(0)


def _add_shot(reel: _Reel, shot: ReelShot, canvas: _Canvas, burn_in: _BurnIn | None) -> None:
    """Decode one shot packet by packet and write its frames and sound."""
    fps, rate = reel.fps, reel.rate
    start_frame = reel.frames
    queue = _AudioQueue()
    state = {"audio_started": False}

    def flush_audio(until_sample: int) -> None:
        want = until_sample - reel.writer.samples_written
        if want > 0 and queue.size:
            reel.writer.add_audio(queue.take(want))

    # The burn-in changes every frame: it is drawn on a copy, so the canvas keeps the clean picture
    # (a repeated frame is not scaled again).
    scratch = np.empty_like(canvas.frame) if burn_in is not None else None

    def emit(picture: av.VideoFrame, placed: list[av.VideoFrame | None]) -> None:
        if placed[0] is not picture:
            canvas.place(picture)
            placed[0] = picture
        frame = canvas.frame
        if scratch is not None and burn_in is not None:
            scratch[...] = frame
            burn_in.apply(scratch, reel.frames)
            frame = scratch
        reel.add_frame(frame)
        flush_audio(reel.sample_at(reel.frames))

    opened = ExitStack()
    try:
        container = opened.enter_context(open_untrusted(Path(shot.path), "video"))
    except MediaRefused as exc:
        raise ValueError(f"shot {shot.title}: cannot read {shot.path}: {exc}") from exc
    with opened:
        video = container.streams.video[0]
        video.thread_type = "AUTO"
        audio = container.streams.audio[0] if container.streams.audio else None
        resampler = av.AudioResampler(format="fltp", layout=LAYOUT, rate=rate) if audio is not None else None
        streams = [video] + ([audio] if audio is not None else [])
        default_duration = 1 / float(video.average_rate) if video.average_rate else 1 / fps
        first_time: float | None = None
        # Where the picture starts, until its first frame is decoded (the decoder holds frames back,
        # so the first sound often comes before it): a clip trimmed or remuxed starts after 0.
        picture_start = (float(video.start_time * video.time_base)
                         if video.start_time is not None and video.time_base is not None else 0.0)
        pending: av.VideoFrame | None = None
        placed: list[av.VideoFrame | None] = [None]
        shown = 0  # frames of this shot written
        end = 0.0  # where the shot's picture ends, in seconds from its first frame

        def take_audio(frames: list[av.AudioFrame]) -> None:
            for resampled in frames:
                samples = resampled.to_ndarray().reshape(CHANNELS, -1).astype(np.float32, copy=False)
                if not state["audio_started"]:
                    state["audio_started"] = True
                    # Sound that starts after the picture: silence before it; before it: cut.
                    if resampled.pts is not None and resampled.time_base is not None:
                        start = picture_start if first_time is None else first_time
                        lead = float(resampled.pts * resampled.time_base) - start
                        if lead > 1 / fps:
                            queue.push(_silence(int(lead * rate)))
                        elif lead < -1 / fps:
                            samples = samples[:, int(-lead * rate):]
                queue.push(samples)

        try:
            for packet in container.demux(*streams):
                for decoded in packet.decode():
                    if isinstance(decoded, av.AudioFrame):
                        if resampler is not None:  # there is one whenever there is an audio stream
                            take_audio(resampler.resample(decoded))
                        continue
                    if not isinstance(decoded, av.VideoFrame):  # no other stream is demuxed
                        continue
                    when = decoded.time if decoded.time is not None else (first_time or 0.0) + end
                    if first_time is None:
                        first_time = when
                    t = when - first_time
                    while pending is not None and shown / fps < t - _EPSILON:
                        emit(pending, placed)
                        shown += 1
                    pending = decoded
                    # Frame.duration came with PyAV 13; on 12 (the oldest pyproject allows) every frame
                    # lasts the stream's frame interval.
                    frame_duration = getattr(decoded, "duration", None)
                    duration = (float(frame_duration * decoded.time_base)
                                if frame_duration and decoded.time_base else default_duration)
                    end = max(end, t + duration)
            if resampler is not None:
                take_audio(resampler.resample(None))
        except av.FFmpegError as exc:
            raise ValueError(f"shot {shot.title}: cannot decode {shot.path}: {exc}") from exc
        if pending is None:
            raise ValueError(f"shot {shot.title}: {shot.path} has no pictures")
        total = max(1, round(end * fps))
        while shown < total:
            emit(pending, placed)
            shown += 1
    # The shot's sound ends where its picture ends: the rest of what was decoded is dropped, what is
    # missing is silence.
    shot_end = reel.sample_at(start_frame + shown)
    flush_audio(shot_end)
    reel.add_silence_to(shot_end)


def make_reel(shots: Sequence[ReelShot], out: Path, *, size: tuple[int, int] = DEFAULT_SIZE, fps: int = DEFAULT_FPS,
              slates: bool = False, burn_in: bool = False, slate_seconds: float = SLATE_SECONDS,
              progress: Progress | None = None) -> Path:
    """Write the reel of `shots`, in that order, to `out` (an MP4). Returns `out`.

    Raises ValueError naming the shot when a file is missing or cannot be decoded (before anything is
    written when it can tell: every file is opened first); `out` is then left as it was.
    `progress(fraction)` is called as the reel is written (0..1, 1 at the end)."""
    if not shots:
        raise ValueError("a reel needs at least one shot")
    width, height = size
    if width % 2 or height % 2 or width < 16 or height < 16:
        raise ValueError(f"a reel's frame size needs even sides of at least 16 pixels, got {width}x{height}")
    if fps < 1:
        raise ValueError("fps must be at least 1")
    probes = [_probe(shot) for shot in shots]
    slate_frames = max(1, round(slate_seconds * fps)) if slates else 0
    total = sum(max(1, round(p.duration * fps)) for p in probes) + slate_frames * len(shots)
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    partial = out.with_name(f".{out.name}.{time.time_ns()}.part")
    canvas = _Canvas(size)
    try:
        with Mp4Writer(partial, width, height, fps, audio_rate=AUDIO_RATE, audio_channels=CHANNELS,
                       metadata={"title": f"Reel of {len(shots)} shot(s)"}) as writer:
            reel = _Reel(writer, fps, AUDIO_RATE, total, progress)
            for number, shot in enumerate(shots, 1):
                if slates:
                    reel.add_slate(_slate_picture(shot, size, number, len(shots)), slate_frames)
                _add_shot(reel, shot, canvas, _BurnIn(shot.title, size, fps) if burn_in else None)
        partial.replace(out)
    except BaseException:
        partial.unlink(missing_ok=True)
        raise
    if progress is not None:
        progress(1.0)
    return out


def reel_duration(path: Path) -> float:
    """A written reel's duration in seconds (its video stream's frames / rate)."""
    with open_untrusted(Path(path), "video") as container:
        stream = container.streams.video[0]
        frames = stream.frames
        rate = stream.average_rate or Fraction(DEFAULT_FPS)
        if frames:
            return float(frames / rate)
        return container.duration / av.time_base if container.duration else math.nan
