"""Material limits of spec section 8, checked on the material itself.

Images are checked with Pillow from the header only: `Image.open` reads the size without decoding
pixels, so a 30 MB photo costs a few kilobytes of reading, and a decompression bomb (a tiny file
that claims billions of pixels) is refused from its header before anything is decoded.
Pillow and PyAV are imported by the checks that use them, so that the client and the CLI's client
commands (the core install, `pip install dailies`) import this module without either.
Videos and audio are probed with PyAV (container metadata, no decoding when the container
states its duration), opened only through `open_untrusted`: the bytes choose among the accepted
containers, never a protocol (SDP, HLS, DASH, concat) that would open sockets or other files.

Each check returns a list of `Problem`s whose path is the content item (`content[1].image_url`),
so the dashboard can show them beside the field and the service can return them as 400s.
"""

from __future__ import annotations

import base64
import binascii
import errno
import io
import re
import time
import warnings
from collections.abc import Callable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from . import limits as L
from .problems import Problem

if TYPE_CHECKING:
    import av

    from .models import ContentItem

Source = bytes | Path

_DATA_URL = re.compile(
    r"^data:(?P<mime>[\w.+-]+/[\w.+-]+)?(?P<params>(;[\w.+-]+=[^;,]*)*)(?P<b64>;base64)?,(?P<data>.*)$",
    re.DOTALL,
)


class DataUrlError(ValueError):
    """A `data:` URL that cannot be decoded."""


def is_data_url(url: str) -> bool:
    return url.startswith("data:")


def decode_data_url(url: str) -> tuple[str | None, bytes]:
    """(mime type, bytes) of a Base64 data URL; raises DataUrlError when malformed."""
    match = _DATA_URL.match(url)
    if not match:
        raise DataUrlError("malformed data URL: expected data:<mime>;base64,<data>")
    if not match.group("b64"):
        raise DataUrlError("data URL is not Base64-encoded (';base64' missing)")
    payload = re.sub(r"\s+", "", match.group("data"))
    try:
        raw = base64.b64decode(payload, validate=True)
    except (binascii.Error, ValueError) as exc:
        raise DataUrlError(f"data URL holds invalid Base64: {exc}") from exc
    if not raw:
        raise DataUrlError("data URL is empty")
    return match.group("mime"), raw


def encode_data_url(data: bytes, mime: str) -> str:
    return f"data:{mime};base64,{base64.b64encode(data).decode('ascii')}"


def image_mime(data: bytes, fallback: str | None = None) -> str:
    """The MIME type of an image from its bytes (a file's name may have no extension, or the wrong
    one); `fallback`, else application/octet-stream, when Pillow cannot tell, or is not installed (the
    core install, `pip install dailies`: the CLI's create then sends the type its file name says)."""
    try:
        from PIL import Image
    except ImportError:
        return fallback or "application/octet-stream"
    info = check_image(data)[0]
    if info is not None and info.format and info.format in Image.MIME:
        return Image.MIME[info.format]
    return fallback or "application/octet-stream"


@dataclass(frozen=True)
class ImageInfo:
    width: int
    height: int
    format: str | None
    size_bytes: int

    @property
    def aspect(self) -> float:
        return self.width / self.height


def _size_of(source: Source) -> int:
    return len(source) if isinstance(source, bytes) else source.stat().st_size


def image_problems(info: ImageInfo, where: str) -> list[Problem]:
    """Pure limit checks on an image's header facts."""
    problems = []
    if info.size_bytes >= L.IMAGE_MAX_BYTES:
        problems.append(Problem(where, f"image is {info.size_bytes / L.MB:.1f} MB; it must be smaller than "
                                       f"{L.IMAGE_MAX_BYTES // L.MB} MB"))
    dims = f"{info.width}x{info.height}"
    if not L.IMAGE_ASPECT_MIN <= info.aspect <= L.IMAGE_ASPECT_MAX:
        problems.append(Problem(where, f"{dims}: aspect {info.aspect:.6g} is outside "
                                       f"{L.IMAGE_ASPECT_MIN} to {L.IMAGE_ASPECT_MAX}"))
    for side, value in (("width", info.width), ("height", info.height)):
        if not L.IMAGE_SIDE_MIN <= value <= L.IMAGE_SIDE_MAX:
            problems.append(Problem(where, f"{dims}: {side} {value} px is outside "
                                           f"{L.IMAGE_SIDE_MIN} to {L.IMAGE_SIDE_MAX} px"))
    return problems


# The formats the service takes (Pillow's openers: JPEG's also opens cameras' MPO files).
IMAGE_FORMATS = ("PNG", "JPEG", "WEBP", "BMP", "TIFF", "GIF")
# EXIF orientations that turn the picture a quarter: its upright width is the stored height.
_QUARTER_TURNS = frozenset({5, 6, 7, 8})
_EXIF_IN_HEADER = frozenset({"JPEG", "MPO", "TIFF", "WEBP"})


def read_image_info(source: Source) -> ImageInfo:
    """Width and height as the picture is seen (upright, after its EXIF orientation, as the
    renderer turns it), format and size, from the header alone: the pixels are not decoded (a
    check on every rerun of the dashboard and every create), so data that breaks off after its
    header is found at render, and the dashboard's preview says so.

    Raises ValueError for data that is not an image of IMAGE_FORMATS, and for decompression bombs.
    """
    from PIL import Image

    size = _size_of(source)
    stream = io.BytesIO(source) if isinstance(source, bytes) else source
    with warnings.catch_warnings():
        # Pillow warns, then raises, on images claiming more pixels than MAX_IMAGE_PIXELS.
        warnings.simplefilter("error", Image.DecompressionBombWarning)
        try:
            with Image.open(stream, formats=IMAGE_FORMATS) as img:
                width, height = img.width, img.height
                # Where the orientation is in the header (a PNG's eXIf chunk may follow the pixels).
                if img.format in _EXIF_IN_HEADER and img.getexif().get(0x0112) in _QUARTER_TURNS:
                    width, height = height, width
                return ImageInfo(width, height, img.format, size)
        except (Image.DecompressionBombError, Image.DecompressionBombWarning) as exc:
            raise ValueError(f"refused as a decompression bomb: {exc}") from exc
        except (OSError, SyntaxError, ValueError) as exc:
            raise ValueError("not an image that can be read (PNG, JPEG, WebP, BMP, TIFF, GIF)") from exc


def check_image(source: Source, where: str = "image") -> tuple[ImageInfo | None, list[Problem]]:
    """Check one image against spec section 8. A file over the byte limit is refused from its
    size alone, before Pillow reads it."""
    size = _size_of(source)
    if size >= L.IMAGE_MAX_BYTES:
        return None, [Problem(where, f"image is {size / L.MB:.1f} MB; it must be smaller than "
                                     f"{L.IMAGE_MAX_BYTES // L.MB} MB")]
    try:
        info = read_image_info(source)
    except ValueError as exc:
        return None, [Problem(where, str(exc))]
    return info, image_problems(info, where)


@dataclass(frozen=True)
class MediaInfo:
    duration: float
    size_bytes: int
    has_video: bool
    has_audio: bool
    width: int | None = None
    height: int | None = None


class MediaRefused(ValueError):
    """Bytes that are not a video or audio of the accepted formats, or that could not be opened
    safely; the message never holds a path."""


# The container formats the service takes, by FFmpeg demuxer name (what format_whitelist matches):
# FFmpeg left to choose from the bytes also takes SDP, HLS, DASH, concat lists and image sequences,
# which open sockets, URLs and other files.
VIDEO_FORMATS = {"mov": "MP4/MOV", "matroska": "WebM/MKV"}
AUDIO_FORMATS = {"wav": "WAV", "mp3": "MP3", "mov": "M4A", "aac": "AAC", "flac": "FLAC", "ogg": "Ogg",
                 "matroska": "WebM/MKA"}
MEDIA_FORMATS = {**VIDEO_FORMATS, **AUDIO_FORMATS}
_KINDS = {"video": VIDEO_FORMATS, "audio": AUDIO_FORMATS, "media": MEDIA_FORMATS}
# Seconds FFmpeg may spend opening, and on each read, before it is interrupted.
MEDIA_OPEN_TIMEOUT_S = 10.0
# The mov demuxer indexes every sample a track declares, about 40 bytes each, before anything is
# read: a few hundred bytes of tables can declare hundreds of millions. A 15 s file of 192 kHz PCM
# has under 3 million.
MEDIA_SAMPLES_MAX = 3_000_000
# Bounds of the packet walk that finds the length of a file whose header does not state it.
_WALK_PACKETS_MAX = 200_000
_WALK_SECONDS_MAX = 10.0
_OPTIONS = {
    "protocol_whitelist": "file",  # nothing nested: no network, no other protocol
    "enable_drefs": "0",  # the mov demuxer's references to other files (FFmpeg's default, said)
    "probesize": "5000000",
    "analyzeduration": "5000000",
}


def _sniffed(head: bytes) -> str | None:
    """The demuxer the first bytes call for, so that FFmpeg probes nothing else; None when only
    FFmpeg can tell (MP3 and AAC frames, ID3 tags)."""
    if head[4:8] in (b"ftyp", b"moov", b"mdat", b"free", b"wide", b"skip", b"pnot"):
        return "mov"
    if head.startswith(b"\x1aE\xdf\xa3"):
        return "matroska"
    if head[:4] in (b"RIFF", b"RF64") and head[8:12] == b"WAVE":
        return "wav"
    if head.startswith(b"fLaC"):
        return "flac"
    if head.startswith(b"OggS"):
        return "ogg"
    return None


_MP4_PARENTS = {b"moov", b"trak", b"mdia", b"minf", b"stbl", b"moof", b"traf", b"mvex", b"edts"}
# Where each sample table keeps its sample count (bytes into the box's payload).
_MP4_COUNTS = {b"stsz": 8, b"stz2": 8, b"trun": 4}


# read(offset, n): at most n bytes of the source from offset.
_Read = Callable[[int, int], bytes]


def _declared_samples(read: _Read, size: int) -> int:
    """The most samples one sample table of an MP4 declares, from its box headers (`read(offset, n)`);
    media data is skipped, not read."""
    most, stack = 0, [(0, size)]
    boxes = 0
    while stack:
        at, end = stack.pop()
        while at + 8 <= end:
            boxes += 1
            if boxes > 100_000:
                raise MediaRefused("the file holds too many MP4 boxes")
            head = read(at, 16)
            if len(head) < 8:
                break
            length, kind = int.from_bytes(head[:4], "big"), head[4:8]
            start = at + 8
            if length == 1 and len(head) >= 16:
                length, start = int.from_bytes(head[8:16], "big"), at + 16
            elif length == 0:
                length = end - at
            if length < start - at:
                break
            if kind in _MP4_PARENTS:
                stack.append((start, min(at + length, end)))
            elif kind in _MP4_COUNTS:
                field = read(start + _MP4_COUNTS[kind], 4)
                if len(field) == 4:
                    most = max(most, int.from_bytes(field, "big"))
            at += length
    return most


def _reader(source: Source) -> tuple[_Read, AbstractContextManager[object]]:
    if isinstance(source, bytes):
        data = source
        return lambda at, n: data[at:at + n], nullcontext()
    handle = open(source, "rb")  # noqa: SIM115  closed by the context returned with it

    def read(at: int, n: int) -> bytes:
        handle.seek(at)
        return handle.read(n)
    return read, handle


def _named(kind: str) -> str:
    if kind == "media":
        return f"video: {_named('video')}; audio: {_named('audio')}"
    return ", ".join(dict.fromkeys(_KINDS[kind].values()))


@contextmanager
def open_untrusted(source: Source, kind: str = "media") -> Iterator[av.container.InputContainer]:
    """A PyAV container of bytes (or a file) Dailies did not make, opened so that they cannot make
    FFmpeg open anything else: only the file protocol, only the demuxers of `kind` ("video",
    "audio" or "media": `VIDEO_FORMATS`, `AUDIO_FORMATS`, both), the demuxer chosen from the first
    bytes where they say it, a time limit on opening and on each read, and MP4 sample tables of
    bounded size. Every place that opens such media goes through here (issue 34).

    Raises MediaRefused when the source is not of those formats or cannot be opened; errors of the
    reads that follow are FFmpeg's (av.FFmpegError)."""
    import av

    formats = _KINDS[kind]
    try:
        read, handle = _reader(source)
        with handle:
            demuxer = _sniffed(read(0, 16))
            if demuxer is not None and demuxer not in formats:
                raise MediaRefused(f"not a media file of the accepted formats ({_named(kind)})")
            if demuxer == "mov" and _declared_samples(read, _size_of(source)) > MEDIA_SAMPLES_MAX:
                raise MediaRefused(f"declares more than {MEDIA_SAMPLES_MAX:,} samples in one track, more "
                                   f"than a file of at most {L.VIDEO_DURATION_MAX:g} s holds")
    except OSError as exc:
        raise MediaRefused(f"not a media file that can be read: {exc.strerror or type(exc).__name__}") from exc
    options = {**_OPTIONS, "format_whitelist": ",".join(formats)}
    stream = io.BytesIO(source) if isinstance(source, bytes) else str(source)
    try:
        container = av.open(stream, "r", format=demuxer, container_options=options,
                            timeout=(MEDIA_OPEN_TIMEOUT_S, MEDIA_OPEN_TIMEOUT_S))
    except (av.FFmpegError, OSError) as exc:
        if getattr(exc, "errno", None) == errno.EINVAL:  # format_whitelist's refusal (PyAV 12 and 13+ alike)
            raise MediaRefused(f"not a media file of the accepted formats ({_named(kind)})") from exc
        raise MediaRefused(f"not a media file that can be read ({_named(kind)}): "
                           f"{getattr(exc, 'strerror', None) or type(exc).__name__}") from exc
    with container:
        yield container


def read_media_info(source: Source, kind: str = "media") -> MediaInfo:
    """Duration and streams of a video or audio file via PyAV (`open_untrusted`); ValueError when
    unreadable or not of the accepted formats."""
    import av

    try:
        with open_untrusted(source, kind) as container:
            video = next(iter(container.streams.video), None)
            audio = next(iter(container.streams.audio), None)
            main = video or audio
            stated = container.duration is not None or (main is not None and main.duration is not None)
            duration = _container_duration(container, main)
            if stated:  # else the walk that found the duration has read the packets
                _media_data_present(container, main)
            # A stream whose codec FFmpeg does not know has no codec context (and so no size).
            codec = video.codec_context if video is not None else None
            return MediaInfo(
                duration=duration, size_bytes=_size_of(source),
                has_video=video is not None, has_audio=audio is not None,
                width=codec.width if codec is not None else None,
                height=codec.height if codec is not None else None,
            )
    except av.FFmpegError as exc:
        raise MediaRefused(f"not a media file that can be read: {exc.strerror or type(exc).__name__}") from exc


def _media_data_present(container: av.container.InputContainer, stream: av.stream.Stream | None) -> None:
    """The first packet can be read (no decoding): tables that point past the end of the file, or
    at nothing, are refused at the check rather than found at render."""
    if stream is None:
        return
    for _, packet in zip(range(8), container.demux(stream), strict=False):
        if packet.size > 0:
            return
    raise MediaRefused("the file holds no media data where its tables point")


def _container_duration(container: av.container.InputContainer, stream: av.stream.Stream | None,
                        longest: float = L.REFERENCE_VIDEOS_LONGEST_S) -> float:
    if container.duration is not None:
        return container.duration / 1_000_000  # av.time_base is microseconds
    if stream is not None and stream.duration is not None and stream.time_base is not None:
        return float(stream.duration * stream.time_base)
    # No duration in the header: walk the packets (no decoding) to find the last timestamp, no
    # further than past `longest` (the answer is then "too long"), within a packet count and a time.
    end = 0.0
    deadline = time.monotonic() + _WALK_SECONDS_MAX
    for count, packet in enumerate(container.demux(stream)):
        if packet.pts is not None and packet.time_base is not None:
            end = max(end, float((packet.pts + (packet.duration or 0)) * packet.time_base))
        if end > longest:
            break
        if count >= _WALK_PACKETS_MAX or time.monotonic() > deadline:
            raise MediaRefused("its length is not stated, and it is too long to find by reading")
    return end


def _check_media(source: Source, where: str, kind: str, max_bytes: int, dmin: float, dmax: float
                 ) -> tuple[MediaInfo | None, list[Problem]]:
    size = _size_of(source)
    if size > max_bytes:
        return None, [Problem(where, f"{kind} is {size / L.MB:.1f} MB; the limit is {max_bytes // L.MB} MB")]
    try:
        # Any accepted container, so that a WAV given as a video is told it has no video stream.
        info = read_media_info(source)
    except ValueError as exc:
        return None, [Problem(where, str(exc))]
    problems = []
    if kind == "video" and not info.has_video:
        problems.append(Problem(where, "the file has no video stream"))
    if kind == "audio" and not info.has_audio:
        problems.append(Problem(where, "the file has no audio stream"))
    if kind == "video" and max(info.width or 0, info.height or 0) > L.VIDEO_SIDE_MAX:
        problems.append(Problem(where, f"video frames are {info.width}x{info.height}; each side must be at most "
                                       f"{L.VIDEO_SIDE_MAX} px"))
    if not dmin <= info.duration <= dmax + L.MEDIA_LENGTH_SPARE_S:
        problems.append(Problem(where, f"{kind} lasts {info.duration:.2f} s; "
                                       f"it must last {dmin:g} to {dmax:g} s"))
    return info, problems


def check_video(source: Source, where: str = "video") -> tuple[MediaInfo | None, list[Problem]]:
    return _check_media(source, where, "video", L.VIDEO_MAX_BYTES, L.VIDEO_DURATION_MIN, L.VIDEO_DURATION_MAX)


def check_audio(source: Source, where: str = "audio") -> tuple[MediaInfo | None, list[Problem]]:
    return _check_media(source, where, "audio", L.AUDIO_MAX_BYTES, L.AUDIO_DURATION_MIN, L.AUDIO_DURATION_MAX)


def reference_videos_problems(durations: list[tuple[str, float]]) -> list[Problem]:
    """Spec 8: at most 3 reference videos lasting at most 15 s together. `durations` pairs each
    video's path (`content[2].video_url`) with its length in seconds."""
    problems = []
    if len(durations) > L.REFERENCE_VIDEOS_MAX:
        problems.append(Problem(durations[L.REFERENCE_VIDEOS_MAX][0],
                                f"at most {L.REFERENCE_VIDEOS_MAX} reference videos are allowed"))
    total = sum(d for _, d in durations)
    if total > L.REFERENCE_VIDEOS_TOTAL_SECONDS_MAX + L.MEDIA_LENGTH_SPARE_S * min(len(durations),
                                                                                  L.REFERENCE_VIDEOS_MAX):
        problems.append(Problem(durations[-1][0], f"reference videos last {total:.2f} s together; "
                                                  f"at most {L.REFERENCE_VIDEOS_TOTAL_SECONDS_MAX:g} s"))
    return problems


_CHECKS: dict[str, Callable[[Source, str], tuple[ImageInfo | MediaInfo | None, list[Problem]]]] = {
    "image_url": check_image, "video_url": check_video, "audio_url": check_audio,
}


def check_inline_material(content: Sequence[ContentItem]) -> list[Problem]:
    """Check every Base64 data URL of a request's content: decodable, and within the limits of
    its kind. URLs and asset ids are checked when they are fetched."""
    problems: list[Problem] = []
    ref_videos: list[tuple[str, float]] = []
    for i, item in enumerate(content):
        payload = getattr(item, item.type, None) if item.type in _CHECKS else None
        if payload is None or not is_data_url(payload.url):
            continue
        where = f"content[{i}].{item.type}"
        try:
            _, raw = decode_data_url(payload.url)
        except DataUrlError as exc:
            problems.append(Problem(f"{where}.url", str(exc)))
            continue
        info, found = _CHECKS[item.type](raw, where)
        problems += found
        if item.type == "video_url" and isinstance(info, MediaInfo):
            ref_videos.append((where, info.duration))
    return problems + reference_videos_problems(ref_videos)
