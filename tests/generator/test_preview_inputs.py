"""Previews made from images, videos and audio: first and last frames match the inputs, crops
follow the ratio, references appear in order, reference audio is muxed in."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from dailies.generator import InputError, InputResolver

from .conftest import LocalServer, RenderFn, Route
from .media_fixtures import (
    BLUE,
    GREEN,
    MODEL_1_5,
    MODEL_2_0,
    RED,
    YELLOW,
    banded_image,
    data_url,
    dominant_frequency,
    fitted,
    gradient_image,
    image_url,
    mean_difference,
    png_bytes,
    video_bytes,
    wav_bytes,
)

TEXT = {"type": "text", "text": "The camera slowly pushes in"}
MATCH = 4.0  # mean absolute difference of a frame and the picture it should be (codec loss only)
DIFFERENT = 12.0


def first_frame(url: str, role: str | None = "first_frame") -> dict:
    item = {"type": "image_url", "image_url": {"url": url}}
    if role:
        item["role"] = role
    return item


def test_first_frame_is_the_image_then_the_camera_moves(render: RenderFn) -> None:
    picture = gradient_image(1000, 750)  # 4:3, so adaptive gives 752x560 at 480p
    rendered = render(MODEL_1_5, [TEXT, first_frame(image_url(picture), role=None)],
                      resolution="480p", duration=4, generate_audio=False)
    video = rendered.video
    assert (video.width, video.height, rendered.result.ratio) == (752, 560, "4:3")
    assert video.frame_count == 97
    assert mean_difference(video.first, fitted(picture, (752, 560))) < MATCH
    assert mean_difference(video.first, video.last) > 3, "the camera moved"


def test_camera_fixed_keeps_the_picture_still(render: RenderFn) -> None:
    picture = gradient_image(1000, 750)
    rendered = render(MODEL_1_5, [TEXT, first_frame(image_url(picture))], resolution="480p", duration=4,
                      camera_fixed=True, generate_audio=False)
    expected = fitted(picture, (752, 560))
    assert mean_difference(rendered.video.first, expected) < MATCH
    assert mean_difference(rendered.video.last, expected) < MATCH


def test_image_is_centre_cropped_to_a_fixed_ratio(render: RenderFn) -> None:
    # Red | green | blue bands, 2.4:1 (within the spec's aspects); a square crop keeps mostly green.
    picture = banded_image(1200, 500, [RED, GREEN, BLUE])
    rendered = render(MODEL_1_5, [TEXT, first_frame(image_url(picture))], resolution="480p", duration=4,
                      ratio="1:1", camera_fixed=True, generate_audio=False)
    assert (rendered.video.width, rendered.video.height) == (640, 640)
    assert mean_difference(rendered.video.first, fitted(picture, (640, 640))) < MATCH
    red, green, blue = rendered.video.first.reshape(-1, 3).mean(axis=0)
    assert green > 150 and red < 60 and blue < 80


def test_first_and_last_frame_are_the_two_images(render: RenderFn) -> None:
    first = gradient_image(864, 496, tint=(255, 120, 40))
    last = banded_image(864, 496, [BLUE, YELLOW])
    rendered = render(MODEL_1_5, [TEXT, first_frame(image_url(first)),
                                  first_frame(image_url(last), role="last_frame")],
                      resolution="480p", ratio="16:9", duration=4, generate_audio=False, keep=(48,))
    video = rendered.video
    assert mean_difference(video.first, fitted(first, (864, 496))) < MATCH
    assert mean_difference(video.last, fitted(last, (864, 496))) < MATCH
    middle = video.sampled[48]
    assert mean_difference(middle, video.first) > DIFFERENT and mean_difference(middle, video.last) > DIFFERENT


def test_reference_image_then_video_resampled(render: RenderFn, tmp_path: Path) -> None:
    picture = gradient_image(800, 600)
    clip = video_bytes([RED, GREEN, BLUE, YELLOW], seconds_each=0.5)  # 2 s, 4:3
    (tmp_path / "data" / "assets").mkdir(parents=True)
    (tmp_path / "data" / "assets" / "clip.mp4").write_bytes(clip)
    content = [
        TEXT,
        {"type": "image_url", "image_url": {"url": image_url(picture)}, "role": "reference_image"},
        {"type": "video_url", "video_url": {"url": "asset://clip"}, "role": "reference_video"},
    ]
    # 97 frames: 49 for the image, 48 for the 2 s video (12 per colour).
    keep = (49 + 6, 49 + 18, 49 + 30, 49 + 42)
    rendered = render(MODEL_2_0, content, resolution="480p", duration=4, generate_audio=False, keep=keep)
    video = rendered.video
    assert (video.width, video.height, rendered.result.ratio) == (752, 560, "4:3")
    assert video.frame_count == 97
    assert mean_difference(video.first, fitted(picture, (752, 560))) < MATCH
    for index, colour in zip(keep, [RED, GREEN, BLUE, YELLOW], strict=True):
        assert np.abs(video.sampled[index].reshape(-1, 3).mean(axis=0) - colour).max() < 12


def test_reference_audio_is_looped_under_the_video(render: RenderFn) -> None:
    picture = gradient_image(864, 496)
    content = [TEXT, first_frame(image_url(picture)),
               {"type": "audio_url", "audio_url": {"url": data_url(wav_bytes(440, 2.0), "audio/wav")},
                "role": "reference_audio"}]
    rendered = render(MODEL_2_0, content, resolution="480p", duration=4)
    audio = rendered.video.audio
    assert audio is not None and audio.channels == 1
    assert audio.seconds == pytest.approx(97 / 24, abs=0.05)
    # Past the clip's own two seconds, the tone is still there: the clip loops.
    assert dominant_frequency(audio.samples[48000 * 3 : 48000 * 3 + 16384], 48000) == pytest.approx(440, abs=6)


def test_long_reference_audio_is_trimmed(render: RenderFn) -> None:
    content = [TEXT, first_frame(image_url(gradient_image(864, 496))),
               {"type": "audio_url", "audio_url": {"url": data_url(wav_bytes(300, 7.0), "audio/wav")},
                "role": "reference_audio"}]
    rendered = render(MODEL_2_0, content, resolution="480p", duration=4, camera_fixed=False)
    assert rendered.video.audio.seconds == pytest.approx(97 / 24, abs=0.05)


def test_no_audio_stream_when_generate_audio_is_false_even_with_reference_audio(render: RenderFn) -> None:
    content = [TEXT, first_frame(image_url(gradient_image(864, 496))),
               {"type": "audio_url", "audio_url": {"url": data_url(wav_bytes(440, 1.0), "audio/wav")},
                "role": "reference_audio"}]
    rendered = render(MODEL_2_0, content, resolution="480p", duration=4, generate_audio=False)
    assert rendered.video.audio is None


def test_image_from_http_and_asset(render: RenderFn, http_server: LocalServer, tmp_path: Path) -> None:
    picture = gradient_image(864, 496)
    http_server.routes["/first.png"] = Route(body=png_bytes(picture))
    (tmp_path / "data" / "assets").mkdir(parents=True)
    last = banded_image(864, 496, [GREEN, BLUE])
    (tmp_path / "data" / "assets" / "last.png").write_bytes(png_bytes(last))
    resolver = InputResolver(tmp_path / "data", allow_loopback=True)
    rendered = render(MODEL_1_5, [TEXT, first_frame(http_server.url("/first.png")),
                                  first_frame("asset://last", role="last_frame")],
                      resolution="480p", duration=4, generate_audio=False, resolver=resolver)
    assert mean_difference(rendered.video.first, fitted(picture, (864, 496))) < MATCH
    assert mean_difference(rendered.video.last, fitted(last, (864, 496))) < MATCH


def test_failed_download_fails_with_the_item_and_leaves_nothing(
    render: RenderFn, http_server: LocalServer, tmp_path: Path
) -> None:
    resolver = InputResolver(tmp_path / "data", allow_loopback=True)
    with pytest.raises(InputError) as error:
        render(MODEL_1_5, [TEXT, first_frame(http_server.url("/missing.png"))], resolution="480p", duration=4,
               resolver=resolver)
    assert error.value.code == "InvalidParameter"
    assert error.value.message == "content[1].image_url: resource download failed (HTTP 404)"
    assert not any(path.is_file() for path in tmp_path.rglob("*")), "no partial files are left behind"


def test_unreadable_image_names_the_item(render: RenderFn) -> None:
    with pytest.raises(InputError, match=r"^content\[1\]\.image_url: not an image that can be read"):
        render(MODEL_1_5, [TEXT, first_frame(data_url(b"this is not a picture"))], resolution="480p", duration=4)


def test_unreadable_video_names_the_item(render: RenderFn) -> None:
    content = [TEXT, {"type": "video_url", "video_url": {"url": data_url(b"garbage" * 100, "video/mp4")},
                      "role": "reference_video"}]
    with pytest.raises(InputError, match=r"^content\[1\]\.video_url: resource is not a readable video$"):
        render(MODEL_2_0, content, resolution="480p", duration=4)


def test_a_fetched_input_is_held_to_the_limits_an_inline_one_is_at_create(render: RenderFn, tmp_path: Path) -> None:
    """A URL's or an asset's media is only seen at render: it is checked there as the create checks an
    inline one (these rendered: a 100-pixel image, a 10:1 one, a 20 s reference video), and a tiny
    PNG that decodes to gigabytes is refused unread."""
    assets = tmp_path / "data" / "assets"
    assets.mkdir(parents=True)
    (assets / "small.png").write_bytes(png_bytes(gradient_image(100, 100)))
    (assets / "wide.png").write_bytes(png_bytes(gradient_image(3000, 300)))
    (assets / "long.mp4").write_bytes(video_bytes([RED, GREEN], seconds_each=10.0))
    from PIL import Image

    bomb = assets / "bomb.png"
    Image.new("1", (13_000, 13_000)).save(bomb)  # 20 KB on disk, 169 megapixels
    for asset, expected in (("small", "width"), ("wide", "aspect"), ("bomb", "decompression bomb")):
        with pytest.raises(InputError, match=rf"^content\[1\]\.image_url: .*{expected}"):
            render(MODEL_1_5, [TEXT, first_frame(f"asset://{asset}")], resolution="480p", duration=4)
    content = [TEXT, {"type": "video_url", "video_url": {"url": "asset://long"}, "role": "reference_video"}]
    with pytest.raises(InputError, match=r"^content\[1\]\.video_url: video lasts 20"):
        render(MODEL_2_0, content, resolution="480p", duration=4, generate_audio=False)
