"""Decoding the request's media into what the scenes use: RGB images and frames at the output
size (centre-cropped to the output's ratio), and mono audio samples.

Every decode failure becomes an `InputError` naming the content item, so a bad upload fails its
task with a readable error instead of an internal one. Videos and audio are opened only through
`spec.media.open_untrusted` (accepted containers, file protocol, a time limit), images only as the
formats the spec's check takes.
"""

from __future__ import annotations

import io
from collections.abc import Iterator
from fractions import Fraction
from pathlib import Path

import av
import numpy as np
from PIL import ExifTags, Image, ImageOps

from ..spec.media import IMAGE_FORMATS, MediaRefused, check_image, open_untrusted
from ..spec.pixels import centre_crop_box
from .inputs import InputError


def refuse_problems(problems: list) -> None:
    """The spec's checks of a fetched input (the same as the create's of an inline one): the first
    problem as the task's error, naming its field."""
    if problems:
        raise InputError(f"{problems[0].path}: {problems[0].message}")


def refuse_media_problems(found: object, problems: list) -> None:
    """`refuse_problems` for a video or audio file; one the check could not read at all (`found`
    None) is left to the decoder, whose error says so without the scratch file's path."""
    if found is not None:
        refuse_problems(problems)


def open_image(data: bytes | Path, where: str, cover: tuple[int, int] | None = None) -> Image.Image:
    """The image, upright (EXIF orientation applied), in RGB. Transparency is dropped. Checked first
    against the spec's limits as an inline image is at create (a URL's or an asset's is only seen
    here): its size, sides and aspect, and no decompression bomb (Pillow only warns of one below
    twice its limit, and a 20 KB PNG can decode to gigabytes).

    With `cover` (the video's frame size), no larger than it needs to be to cover that frame, which is
    all `fit_image` takes of it: a JPEG is decoded at 1/2, 1/4 or 1/8 scale where that is enough, any
    image is then divided by the largest whole factor that still covers. Nine 6000 x 6000 references
    for a 720p preview were held whole, ~100 MB each, in every render slot at once."""
    refuse_problems(check_image(data, where)[1])
    try:
        image: Image.Image = Image.open(io.BytesIO(data) if isinstance(data, bytes) else data, formats=IMAGE_FORMATS)
        if cover is not None:
            # draft() works on the stored picture, before the EXIF rotation: a sideways photo's sides swap.
            turned = image.getexif().get(ExifTags.Base.Orientation, 1) in (5, 6, 7, 8)
            image.draft("RGB", (cover[1], cover[0]) if turned else cover)
        image = ImageOps.exif_transpose(image)
        image = image.convert("RGB")
        return reduced_to_cover(image, cover) if cover is not None else image
    except (OSError, ValueError, Image.DecompressionBombError) as exc:
        raise InputError(f"{where}: resource is not a readable image") from exc


def reduced_to_cover(image: Image.Image, cover: tuple[int, int]) -> Image.Image:
    """`image` divided by the largest whole factor that leaves both sides at least `cover`'s: the
    centre crop `fit_image` takes at `cover`'s aspect then still has at least `cover`'s pixels."""
    factor = min(image.width // cover[0], image.height // cover[1])
    return image.reduce(factor) if factor >= 2 else image


def fit_image(image: Image.Image, size: tuple[int, int]) -> Image.Image:
    """`image` centre-cropped to the aspect of `size` and resized to it."""
    box = centre_crop_box(image.size, size)
    if box == (0, 0, *image.size) and image.size == size:
        return image
    return image.resize(size, Image.Resampling.LANCZOS, box=box)


class VideoClip:
    """A reference video, read frame by frame and resampled to a new frame count.

    Frames are decoded lazily and never all held, so a long reference costs no memory.
    """

    def __init__(self, path: Path, where: str) -> None:
        self.path = path
        self.where = where
        try:
            with open_untrusted(path, "video") as container:
                if not container.streams.video:
                    raise InputError(f"{where}: resource has no video stream")
                stream = container.streams.video[0]
                self.duration = _stream_seconds(stream, container)
        except (av.FFmpegError, MediaRefused) as exc:
            raise InputError(f"{where}: resource is not a readable video") from exc

    def resampled(self, count: int, size: tuple[int, int]) -> Iterator[np.ndarray]:
        """`count` RGB frames of `size` spread evenly over the clip (frames repeat when the clip is
        shorter, are skipped when it is longer)."""
        if count <= 0:
            return
        step = self.duration / count if self.duration > 0 else 0.0
        try:
            with open_untrusted(self.path, "video") as container:
                stream = container.streams.video[0]
                stream.thread_type = "AUTO"
                decoded = container.decode(stream)
                current = next(decoded, None)
                if current is None:
                    raise InputError(f"{self.where}: resource has no decodable frames")
                upcoming = next(decoded, None)
                converted: np.ndarray | None = None
                for index in range(count):
                    wanted = index * step
                    # Advance while the next frame starts no later than the wanted time.
                    while upcoming is not None and _frame_seconds(upcoming) <= wanted + 1e-6:
                        current, upcoming, converted = upcoming, next(decoded, None), None
                    if converted is None:
                        converted = _frame_to_rgb(current, size)
                    yield converted
        except (av.FFmpegError, MediaRefused) as exc:
            raise InputError(f"{self.where}: resource is not a readable video") from exc


def _stream_seconds(stream: av.video.stream.VideoStream, container: av.container.InputContainer) -> float:
    if stream.duration is not None and stream.time_base is not None:
        return float(stream.duration * stream.time_base)
    if container.duration is not None:
        return container.duration / av.time_base
    return 0.0


def _frame_seconds(frame: av.VideoFrame) -> float:
    if frame.time is not None:
        return float(frame.time)
    return float(Fraction(frame.pts or 0) * (frame.time_base or 0))


def _frame_to_rgb(frame: av.VideoFrame, size: tuple[int, int]) -> np.ndarray:
    # Scale with swscale so that the cropped result covers `size`, then crop centrally in numpy:
    # much cheaper than a Pillow round trip per frame.
    width, height = size
    scale = max(width / frame.width, height / frame.height)
    scaled_width = max(width, round(frame.width * scale))
    scaled_height = max(height, round(frame.height * scale))
    rgb = frame.reformat(width=scaled_width, height=scaled_height, format="rgb24", interpolation="BILINEAR")
    array = rgb.to_ndarray()
    left = (scaled_width - width) // 2
    top = (scaled_height - height) // 2
    return np.ascontiguousarray(array[top : top + height, left : left + width])


def load_audio(path: Path, where: str, rate: int, max_samples: int) -> np.ndarray:
    """Mono float32 samples at `rate`, at most `max_samples` of them (decoding stops there, so a
    long clip costs no more than the video needs)."""
    chunks: list[np.ndarray] = []
    total = 0
    try:
        with open_untrusted(path, "audio") as container:
            if not container.streams.audio:
                raise InputError(f"{where}: resource has no audio stream")
            resampler = av.AudioResampler(format="flt", layout="mono", rate=rate)
            for frame in container.decode(container.streams.audio[0]):
                for mono in resampler.resample(frame):
                    chunks.append(mono.to_ndarray().reshape(-1))
                    total += chunks[-1].size
                if total >= max_samples:
                    break
            else:
                for mono in resampler.resample(None):
                    chunks.append(mono.to_ndarray().reshape(-1))
    except (av.FFmpegError, MediaRefused) as exc:
        raise InputError(f"{where}: resource is not a readable audio file") from exc
    samples = np.concatenate(chunks) if chunks else np.zeros(0, np.float32)
    if samples.size == 0:
        raise InputError(f"{where}: resource has no audio samples")
    return samples[:max_samples].astype(np.float32, copy=False)
