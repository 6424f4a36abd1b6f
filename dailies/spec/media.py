"""Material limits of spec section 8, checked on the material itself.

Images are checked with Pillow from the header only: `Image.open` reads the size without decoding
pixels, so a 30 MB photo costs a few kilobytes of reading, and a decompression bomb (a tiny file
that claims billions of pixels) is refused from its header before anything is decoded.
Videos and audio are probed with PyAV (container metadata, no decoding when the container
states its duration).

Each check returns a list of `Problem`s whose path is the content item (`content[1].image_url`),
so the dashboard can show them beside the field and the service can return them as 400s.
"""

from __future__ import annotations

import base64
import binascii
import io
import re
import warnings
from dataclasses import dataclass
from pathlib import Path

from PIL import Image

from . import limits as L
from .problems import Problem

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
    one); `fallback`, else application/octet-stream, when Pillow cannot tell."""
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


def read_media_info(source: Source) -> MediaInfo:
    """Duration and streams of a video or audio file via PyAV; ValueError when unreadable."""
    import av

    stream = io.BytesIO(source) if isinstance(source, bytes) else str(source)
    try:
        with av.open(stream) as container:
            video = next(iter(container.streams.video), None)
            audio = next(iter(container.streams.audio), None)
            duration = _container_duration(container, video or audio)
            # A stream whose codec FFmpeg does not know has no codec context (and so no size).
            codec = video.codec_context if video is not None else None
            return MediaInfo(
                duration=duration, size_bytes=_size_of(source),
                has_video=video is not None, has_audio=audio is not None,
                width=codec.width if codec is not None else None,
                height=codec.height if codec is not None else None,
            )
    except av.FFmpegError as exc:
        raise ValueError(f"not a media file that can be read: {exc}") from exc


def _container_duration(container, stream) -> float:
    if container.duration is not None:
        return container.duration / 1_000_000  # av.time_base is microseconds
    if stream is not None and stream.duration is not None and stream.time_base is not None:
        return float(stream.duration * stream.time_base)
    # No duration in the header: walk the packets (no decoding) to find the last timestamp.
    end = 0.0
    for packet in container.demux(stream):
        if packet.pts is not None and packet.time_base is not None:
            end = max(end, float((packet.pts + (packet.duration or 0)) * packet.time_base))
    return end


def _check_media(source: Source, where: str, kind: str, max_bytes: int, dmin: float, dmax: float
                 ) -> tuple[MediaInfo | None, list[Problem]]:
    size = _size_of(source)
    if size > max_bytes:
        return None, [Problem(where, f"{kind} is {size / L.MB:.1f} MB; the limit is {max_bytes // L.MB} MB")]
    try:
        info = read_media_info(source)
    except ValueError as exc:
        return None, [Problem(where, str(exc))]
    problems = []
    if kind == "video" and not info.has_video:
        problems.append(Problem(where, "the file has no video stream"))
    if kind == "audio" and not info.has_audio:
        problems.append(Problem(where, "the file has no audio stream"))
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


_CHECKS = {"image_url": check_image, "video_url": check_video, "audio_url": check_audio}


def check_inline_material(content: list) -> list[Problem]:
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
        if item.type == "video_url" and info is not None:
            ref_videos.append((where, info.duration))
    return problems + reference_videos_problems(ref_videos)
