"""The two kinds of frames scenes give the writer, RGB and yuv420p planes: both encode to the same
picture, the camera's zoom on the planes matches the zoom on RGB, and the watermark and the
last-frame PNG are right for image-to-video, whose frames are yuv420p; frames drawn ahead of the
encoder arrive in order, intact."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from PIL import Image

from dailies.generator.encode import Mp4Writer, is_yuv420, rgb_from_frame, yuv420_from_rgb
from dailies.generator.overlays import watermark
from dailies.generator.preview import _drawn_ahead
from dailies.generator.scenes import CameraMove

from .conftest import RenderFn
from .media_fixtures import MODEL_1_5, decode, gradient_image, image_url, lower_right, mean_difference, upper_left

TEXT = {"type": "text", "text": "The camera slowly pushes in"}
MATCH = 4.0  # mean absolute difference of a frame and the picture it should be (codec loss only)


def image_to_video(url: str) -> list[dict]:
    return [TEXT, {"type": "image_url", "image_url": {"url": url}, "role": "first_frame"}]


def test_rgb_and_yuv_frames_encode_to_the_same_picture(tmp_path: Path) -> None:
    picture = np.asarray(gradient_image(320, 240))
    planes = yuv420_from_rgb(picture)
    assert is_yuv420(planes) and planes.shape == (360, 320) and not is_yuv420(picture)
    with Mp4Writer(tmp_path / "both.mp4", 320, 240, 24) as writer:
        writer.add_frame(picture)
        writer.add_frame(planes)
        writer.add_frame(picture)
    video = decode(tmp_path / "both.mp4", keep=(1,))
    assert video.frame_count == 3
    for frame in (video.first, video.sampled[1], video.last):
        assert mean_difference(frame, picture) < MATCH
    # The conversion back gives the picture too, up to chroma subsampling.
    assert mean_difference(rgb_from_frame(planes), picture) < MATCH
    assert rgb_from_frame(picture) is picture


def test_zoom_on_the_planes_matches_the_zoom_in_rgb() -> None:
    image = gradient_image(640, 360)
    camera = CameraMove(image, drift=(0.6, -0.4))
    assert np.array_equal(camera.at(1.0), yuv420_from_rgb(np.asarray(image)))
    zoomed = rgb_from_frame(camera.at(1.2))
    # The same box, scaled in RGB: centre (320 + 0.6 * 53.33, 180 - 0.4 * 30), 533.33 x 300 pixels.
    width, height = 640 / 1.2, 360 / 1.2
    centre_x, centre_y = 320 + 0.6 * (640 - width) / 2, 180 - 0.4 * (360 - height) / 2
    box = (centre_x - width / 2, centre_y - height / 2, centre_x + width / 2, centre_y + height / 2)
    expected = np.asarray(image.resize((640, 360), Image.Resampling.BILINEAR, box=box))
    assert mean_difference(zoomed, expected) < 2.0
    assert mean_difference(zoomed, np.asarray(image)) > 5.0, "and it is not the unzoomed image"


def test_watermark_on_yuv_planes_matches_the_watermark_on_rgb() -> None:
    picture = np.asarray(gradient_image(864, 496))
    mark = watermark(864, 496)
    on_rgb = picture.copy()
    mark.apply(on_rgb)
    on_planes = yuv420_from_rgb(picture)
    mark.apply(on_planes)
    on_yuv = rgb_from_frame(on_planes)
    region = (slice(mark.top, mark.top + mark.height), slice(mark.left, mark.left + mark.width))
    assert mean_difference(on_rgb[region], picture[region]) > 20, "the mark shows"
    assert mean_difference(on_yuv[region], on_rgb[region]) < 4.0
    # Outside the patch the planes are untouched.
    outside = rgb_from_frame(yuv420_from_rgb(picture))
    assert np.array_equal(on_yuv[: mark.top], outside[: mark.top])


def test_image_to_video_watermark_and_last_frame_png(render: RenderFn) -> None:
    url = image_url(gradient_image(1000, 562))
    fields = {"resolution": "480p", "ratio": "16:9", "duration": 4, "generate_audio": False, "seed": 3,
              "return_last_frame": True}
    plain = render(MODEL_1_5, image_to_video(url), **fields)
    marked = render(MODEL_1_5, image_to_video(url), watermark=True, **fields)
    for index_frame in ("first", "last"):
        a, b = getattr(plain.video, index_frame), getattr(marked.video, index_frame)
        assert mean_difference(lower_right(a), lower_right(b)) > 8, "the watermark is visible"
        assert mean_difference(upper_left(a), upper_left(b)) < 1.5, "and nowhere else"

    png_plain = np.asarray(Image.open(plain.result.last_frame_path))
    png_marked = np.asarray(Image.open(marked.result.last_frame_path))
    assert png_plain.shape == (496, 864, 3)
    # Without the watermark either way, and the video's last frame (the camera has moved by then).
    assert np.array_equal(png_plain, png_marked)
    assert mean_difference(png_plain, plain.video.last) < 3
    assert mean_difference(png_plain, plain.video.first) > mean_difference(png_plain, plain.video.last)


def test_image_to_video_is_the_same_for_the_same_seed(render: RenderFn) -> None:
    url = image_url(gradient_image(1000, 562))
    fields = {"resolution": "480p", "ratio": "16:9", "duration": 4, "generate_audio": False}
    first = render(MODEL_1_5, image_to_video(url), seed=5, **fields)
    again = render(MODEL_1_5, image_to_video(url), seed=5, **fields)
    other = render(MODEL_1_5, image_to_video(url), seed=6, **fields)
    assert first.video.frame_count == 97
    assert first.video.frame_hashes == again.video.frame_hashes
    # The seed picks where the camera drifts: the same first frame (up to the encoder's choices,
    # which look ahead at the frames that follow), a different last one.
    assert mean_difference(first.video.first, other.video.first) < 1.0
    assert mean_difference(first.video.last, other.video.last) > 1.0


def test_frames_drawn_ahead_are_copies_in_order_and_errors_surface() -> None:
    def reusing(count: int, fail: bool = False) -> Iterator[np.ndarray]:
        frame = np.zeros((2, 4), np.uint8)  # one array, redrawn for every frame
        for index in range(count):
            frame[...] = index
            yield frame
        if fail:
            raise RuntimeError("the scene broke")

    assert [int(frame[0, 0]) for frame in _drawn_ahead(reusing(7))] == list(range(7))
    assert list(_drawn_ahead(reusing(0))) == []
    with pytest.raises(RuntimeError, match="the scene broke"):
        list(_drawn_ahead(reusing(2, fail=True)))
