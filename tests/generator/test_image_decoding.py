"""Input images are decoded no larger than the video's frame needs (generator/media.py): a render of
nine 6000-pixel references held ~100 MB per image in every render slot. What the frame shows is the same."""

from __future__ import annotations

import io

import numpy as np
import pytest
from PIL import Image

from dailies.generator.media import fit_image, open_image


def photo(width: int, height: int, fmt: str, orientation: int | None = None) -> bytes:
    """A smooth gradient with a bright square off-centre, so a crop or a turn that went wrong shows."""
    x = np.linspace(0, 255, width, dtype=np.float32)[None, :]
    y = np.linspace(0, 255, height, dtype=np.float32)[:, None]
    pixels = np.stack([np.broadcast_to(x, (height, width)), np.broadcast_to(y, (height, width)),
                       np.full((height, width), 90, np.float32)], axis=-1).astype(np.uint8)
    pixels[height // 5:height // 3, width // 5:width // 3] = 250
    image = Image.fromarray(pixels)
    out = io.BytesIO()
    exif = Image.Exif()
    if orientation is not None:
        exif[0x0112] = orientation
    image.save(out, format=fmt, exif=exif.tobytes(), **({"quality": 92} if fmt == "JPEG" else {}))
    return out.getvalue()


@pytest.mark.parametrize(("width", "height", "fmt", "orientation", "frame"), [
    (6000, 4000, "JPEG", None, (1280, 720)),   # DCT scaling, then a whole factor
    (6000, 4000, "JPEG", 6, (720, 1280)),      # stored sideways: the sides swap before the scaling
    (3000, 3000, "PNG", None, (720, 720)),     # no DCT scaling: a whole factor only
    (1000, 700, "PNG", None, (1280, 720)),     # smaller than the frame already: as it is
])
def test_an_image_is_decoded_no_larger_than_its_frame_needs_and_looks_the_same(width, height, fmt, orientation,
                                                                                 frame):
    data = photo(width, height, fmt, orientation)
    whole = open_image(data, "content[1].image_url")
    small = open_image(data, "content[1].image_url", cover=frame)
    assert small.mode == "RGB"
    assert (small.width >= frame[0] and small.height >= frame[1]) or small.size == whole.size
    # Upright either way: the same shape as the whole picture.
    assert abs(small.width / small.height - whole.width / whole.height) < 0.01
    if whole.width >= 2 * frame[0] and whole.height >= 2 * frame[1]:
        assert small.width * small.height <= whole.width * whole.height / 4
    shown_whole = np.asarray(fit_image(whole, frame), dtype=np.int16)
    shown_small = np.asarray(fit_image(small, frame), dtype=np.int16)
    assert shown_small.shape == shown_whole.shape == (frame[1], frame[0], 3)
    assert np.abs(shown_small - shown_whole).mean() < 3.0
