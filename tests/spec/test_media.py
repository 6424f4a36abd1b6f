"""Material limits of spec section 8, checked on real material made in memory: images with Pillow
(or written byte by byte when they must be huge but cheap), videos and audio with PyAV."""

from __future__ import annotations

import base64
import functools
import io
import struct
import subprocess
import sys
import textwrap
import zlib
from pathlib import Path
from typing import Any

import av
import numpy as np
import pytest
from PIL import Image, ImageFile

from dailies.spec import limits as L
from dailies.spec import media
from dailies.spec.media import (
    DataUrlError,
    ImageInfo,
    check_audio,
    check_image,
    check_inline_material,
    check_video,
    decode_data_url,
    encode_data_url,
    image_problems,
    read_image_info,
    read_media_info,
    reference_videos_problems,
)
from dailies.spec.models import CreateTaskRequest

from .builders import V20, audio, body, image, text, video

# ---------- material makers ----------


def pillow_image(width: int, height: int, fmt: str = "PNG", mode: str = "RGB") -> bytes:
    buf = io.BytesIO()
    Image.new(mode, (width, height), "teal" if mode == "RGB" else 0).save(buf, fmt)
    return buf.getvalue()


def _zlib_of_zeros(total: int, segment: int = 8 * L.MB) -> bytes:
    """A valid zlib stream of `total` zero bytes, made without compressing them all: after a full
    flush deflate starts afresh, so one compressed segment can be repeated; the Adler-32 of n zeros
    is (n mod 65521) << 16 | 1."""
    count, rest = divmod(total, segment)
    c = zlib.compressobj(9)
    zeros = bytes(segment) if count else b""
    first = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH)
    again = c.compress(zeros) + c.flush(zlib.Z_FULL_FLUSH) if count > 1 else b""
    tail = c.compress(bytes(rest)) + c.flush()
    adler = ((total % 65521) << 16) | 1
    return first + again * max(count - 1, 0) + tail[:-4] + struct.pack(">I", adler)


def _png_chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))


@functools.cache
def bilevel_png(width: int, height: int) -> bytes:
    """A black 1-bit PNG of any size that decodes correctly, at a cost of about 1 KB per 8 MB of
    pixels: 6001x3000 is a few kilobytes, 60000x60000 a few hundred."""
    ihdr = struct.pack(">IIBBBBB", width, height, 1, 0, 0, 0, 0)
    raw = height * (1 + (width + 7) // 8)  # a filter byte and the packed bits of each row
    return (b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", ihdr) + _png_chunk(b"IDAT", _zlib_of_zeros(raw))
            + _png_chunk(b"IEND", b""))


@functools.cache
def mp4_video(seconds: float, fps: int = 8, size: int = 64) -> bytes:
    buf = io.BytesIO()
    with av.open(buf, "w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width = stream.height = size
        stream.pix_fmt = "yuv420p"
        for i in range(round(seconds * fps)):
            pixels = np.full((size, size, 3), i * 8 % 256, np.uint8)
            for packet in stream.encode(av.VideoFrame.from_ndarray(pixels, format="rgb24")):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return buf.getvalue()


@functools.cache
def wav_audio(seconds: float, rate: int = 8000) -> bytes:
    buf = io.BytesIO()
    with av.open(buf, "w", format="wav") as container:
        stream = container.add_stream("pcm_s16le", rate=rate, layout="mono")
        total = round(seconds * rate)
        for start in range(0, total, 1024):
            n = min(1024, total - start)
            frame = av.AudioFrame.from_ndarray(np.zeros((1, n), np.int16), format="s16", layout="mono")
            frame.sample_rate, frame.pts = rate, start
            for packet in stream.encode(frame):
                container.mux(packet)
        for packet in stream.encode():
            container.mux(packet)
    return buf.getvalue()


def content_of(*items: dict[str, Any]) -> list:
    return CreateTaskRequest.model_validate(body(V20, list(items))).content


@pytest.fixture
def no_decoding(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to decode pixels fails the test."""

    def refuse(self: Any) -> None:
        raise AssertionError("the image was decoded")

    monkeypatch.setattr(ImageFile.ImageFile, "load", refuse)


def test_bilevel_png_maker_makes_real_images() -> None:
    with Image.open(io.BytesIO(bilevel_png(301, 300))) as img:
        img.load()
        assert (img.size, img.mode, img.getextrema()) == ((301, 300), "1", (0, 0))


# ---------- images: the pure limit checks ----------

SIDES = [
    pytest.param(299, 299, ["width", "height"], id="299x299"),
    pytest.param(300, 300, [], id="300x300"),
    pytest.param(6000, 6000, [], id="6000x6000"),
    pytest.param(6001, 6001, ["width", "height"], id="6001x6001"),
    pytest.param(300, 299, ["height"], id="300x299"),
    pytest.param(299, 300, ["width"], id="299x300"),
    pytest.param(6000, 6001, ["height"], id="6000x6001"),
    pytest.param(6001, 6000, ["width"], id="6001x6000"),
]


@pytest.mark.parametrize(("width", "height", "sides"), SIDES)
def test_side_limits(width: int, height: int, sides: list[str]) -> None:
    problems = image_problems(ImageInfo(width, height, "PNG", 1000), "content[1].image_url")
    assert [s for s in ("width", "height") if any(f" {s} " in p.message for p in problems)] == sides
    assert all(p.path == "content[1].image_url" for p in problems)
    assert len(problems) == len(sides)


ASPECTS = [
    pytest.param(1000, 400, True, id="2.5"),
    pytest.param(1001, 400, False, id="above-2.5"),
    pytest.param(1000, 2500, True, id="0.4"),
    pytest.param(1000, 2501, False, id="below-0.4"),
    pytest.param(5996, 2398, False, id="just-above-2.5"),
    pytest.param(1000, 1000, True, id="1"),
]


@pytest.mark.parametrize(("width", "height", "ok"), ASPECTS)
def test_aspect_limits(width: int, height: int, ok: bool) -> None:
    problems = image_problems(ImageInfo(width, height, "PNG", 1000), "image")
    assert (problems == []) == ok
    assert all("aspect" in p.message for p in problems)


def test_aspect_message_never_rounds_onto_the_limit() -> None:
    [problem] = image_problems(ImageInfo(5996, 2398, "PNG", 1000), "image")
    assert problem.message == "5996x2398: aspect 2.50042 is outside 0.4 to 2.5"


@pytest.mark.parametrize(
    ("size", "ok"),
    [(L.IMAGE_MAX_BYTES - 1, True), (L.IMAGE_MAX_BYTES, False), (L.IMAGE_MAX_BYTES + 1, False), (0, True)],
)
def test_byte_limit_pure(size: int, ok: bool) -> None:
    assert (image_problems(ImageInfo(1000, 1000, "PNG", size), "image") == []) == ok


# ---------- images: real files ----------


def test_a_good_image_passes(no_decoding: None) -> None:
    info, problems = check_image(pillow_image(800, 600), "content[1].image_url")
    assert problems == []
    assert (info.width, info.height, info.format) == (800, 600, "PNG")


@pytest.mark.parametrize("fmt", ["PNG", "JPEG", "WEBP", "BMP", "GIF", "TIFF"])
def test_formats_read_from_the_header(fmt: str, no_decoding: None) -> None:
    info, problems = check_image(pillow_image(640, 480, fmt))
    assert problems == [] and (info.width, info.height, info.format) == (640, 480, fmt)


def test_wide_banner_names_its_aspect() -> None:
    info, problems = check_image(pillow_image(1920, 200), "content[0].image_url")
    messages = [p.message for p in problems]
    assert "1920x200: aspect 9.6 is outside 0.4 to 2.5" in messages
    assert "1920x200: height 200 px is outside 300 to 6000 px" in messages
    assert {p.path for p in problems} == {"content[0].image_url"}


@pytest.mark.parametrize(
    ("width", "height", "ok"),
    [(299, 299, False), (300, 300, True), (6000, 6000, True), (6001, 3000, False), (3000, 6001, False)],
)
def test_side_limits_on_real_files(width: int, height: int, ok: bool, no_decoding: None) -> None:
    data = bilevel_png(width, height)
    assert len(data) < 64 * 1024
    info, problems = check_image(data)
    assert (info.width, info.height) == (width, height)
    assert (problems == []) == ok


def test_a_file_path_is_read_like_bytes(tmp_path: Path, no_decoding: None) -> None:
    path = tmp_path / "wide.png"
    path.write_bytes(pillow_image(1920, 200))
    info, problems = check_image(path)
    assert info.size_bytes == path.stat().st_size
    assert problems == check_image(path.read_bytes())[1]


def _padded(size: int) -> bytes:
    head = pillow_image(800, 600)
    return head + bytes(size - len(head))


def test_30_mb_is_refused_from_the_size_alone(monkeypatch: pytest.MonkeyPatch) -> None:
    def never(*_: Any, **__: Any) -> None:
        raise AssertionError("the image was opened")

    monkeypatch.setattr(Image, "open", never)
    info, problems = check_image(_padded(L.IMAGE_MAX_BYTES), "content[2].image_url")
    assert info is None
    assert [(p.path, p.message) for p in problems] == [
        ("content[2].image_url", "image is 30.0 MB; it must be smaller than 30 MB")
    ]


def test_just_under_30_mb_is_read(no_decoding: None) -> None:
    info, problems = check_image(_padded(L.IMAGE_MAX_BYTES - 1))
    assert problems == [] and info.size_bytes == L.IMAGE_MAX_BYTES - 1


def test_a_large_file_on_disk_is_refused_without_reading_it(tmp_path: Path, monkeypatch) -> None:
    path = tmp_path / "huge.png"
    with path.open("wb") as f:
        f.write(pillow_image(800, 600))
        f.truncate(40 * L.MB)  # sparse: nothing is written
    monkeypatch.setattr(Image, "open", lambda *a, **k: pytest.fail("opened"))
    info, problems = check_image(path)
    assert info is None and "40.0 MB" in problems[0].message


@pytest.mark.parametrize(("width", "height"), [(60000, 60000), (10000, 10000)], ids=["60000x60000", "10000x10000"])
def test_decompression_bomb_is_refused_without_decoding(width: int, height: int, no_decoding: None) -> None:
    data = bilevel_png(width, height)
    assert len(data) < 1 * L.MB  # a small file ...
    assert zlib.decompressobj().decompress(data[data.index(b"IDAT") + 4:], 4096) == bytes(4096)  # ... that is real
    info, problems = check_image(data, "content[0].image_url")
    assert info is None
    assert [p.path for p in problems] == ["content[0].image_url"]
    assert "decompression bomb" in problems[0].message
    with pytest.raises(ValueError, match="decompression bomb"):
        read_image_info(data)


@pytest.mark.parametrize(
    "data",
    [
        pytest.param(b"", id="empty"),
        pytest.param(b"not an image at all" * 50, id="text"),
        pytest.param(bytes(range(256)) * 8, id="noise"),
        pytest.param(b"\x89PNG\r\n\x1a\n" + bytes(40), id="png-signature-only"),
        pytest.param(pillow_image(400, 400, "JPEG")[:20], id="truncated-jpeg"),
        pytest.param(b"\x89PNG\r\n\x1a\n" + _png_chunk(b"IHDR", struct.pack(">IIBBBBB", 0, 400, 1, 0, 0, 0, 0)),
                     id="zero-width-png"),
    ],
)
def test_garbage_is_refused(data: bytes) -> None:
    info, problems = check_image(data, "content[1].image_url")
    assert info is None
    assert [p.path for p in problems] == ["content[1].image_url"]
    assert problems[0].message.startswith("not an image")


# ---------- data URLs ----------


def test_data_url_round_trip() -> None:
    png = pillow_image(400, 400)
    url = encode_data_url(png, "image/png")
    assert url.startswith("data:image/png;base64,")
    assert decode_data_url(url) == ("image/png", png)


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        pytest.param("data:image/png;base64,aGVsbG8=", ("image/png", b"hello"), id="plain"),
        pytest.param("data:image/png;base64,aGVs\nbG8=", ("image/png", b"hello"), id="line-broken"),
        pytest.param("data:;base64,aGVsbG8=", (None, b"hello"), id="no-mime"),
        pytest.param("data:image/jpeg;name=a.jpg;base64,aGVsbG8=", ("image/jpeg", b"hello"), id="with-parameter"),
    ],
)
def test_valid_data_urls(url: str, expected: tuple[str | None, bytes]) -> None:
    assert decode_data_url(url) == expected


@pytest.mark.parametrize(
    ("url", "why"),
    [
        pytest.param("data:image/png,aGVsbG8=", "base64", id="missing-base64"),
        pytest.param("data:image/png;base64,aGVsbG8", "Base64", id="bad-padding"),
        pytest.param("data:image/png;base64,a$b%c^d=", "Base64", id="bad-characters"),
        pytest.param("data:image/png;base64,", "empty", id="empty"),
        pytest.param("data:image/png;base64", "malformed", id="no-comma"),
        pytest.param("https://example.com/a.png", "malformed", id="not-a-data-url"),
    ],
)
def test_malformed_data_urls(url: str, why: str) -> None:
    with pytest.raises(DataUrlError, match=why):
        decode_data_url(url)


def test_data_url_error_is_a_value_error() -> None:
    assert issubclass(DataUrlError, ValueError)


# ---------- check_inline_material ----------


def test_inline_image_within_limits() -> None:
    url = encode_data_url(pillow_image(800, 600), "image/png")
    assert check_inline_material(content_of(text(), image(url=url))) == []


def test_malformed_inline_image_names_the_url() -> None:
    problems = check_inline_material(content_of(text(), image(url="data:image/png,aGVsbG8=")))
    assert [p.path for p in problems] == ["content[1].image_url.url"]


def test_inline_image_out_of_limits_names_the_item() -> None:
    url = encode_data_url(pillow_image(1920, 200), "image/png")
    problems = check_inline_material(content_of(text(), image(url=url)))
    assert {p.path for p in problems} == {"content[1].image_url"}
    assert "1920x200: aspect 9.6 is outside 0.4 to 2.5" in [p.message for p in problems]


def test_inline_bytes_that_are_not_an_image() -> None:
    url = "data:image/png;base64," + base64.b64encode(b"hello world").decode()
    problems = check_inline_material(content_of(text(), image(url=url)))
    assert [p.path for p in problems] == ["content[1].image_url"]


def test_urls_and_assets_are_left_for_the_fetch() -> None:
    content = content_of(text(), image("reference_image"), image("reference_image", url="asset://asset-123"),
                         video(), audio())
    assert check_inline_material(content) == []


def test_every_inline_item_is_checked() -> None:
    bad = "data:image/png;base64,%%%"
    content = content_of(text(), image("reference_image", url=bad), image("reference_image", url=bad))
    assert [p.path for p in check_inline_material(content)] == ["content[1].image_url.url", "content[2].image_url.url"]


def _video_url(seconds: float) -> str:
    return encode_data_url(mp4_video(seconds), "video/mp4")


def test_inline_videos_within_limits() -> None:
    assert check_inline_material(content_of(text(), *[video(url=_video_url(5))] * 3)) == []


def test_inline_video_too_short() -> None:
    problems = check_inline_material(content_of(text(), video(url=_video_url(1))))
    assert [(p.path, p.message) for p in problems] == [
        ("content[1].video_url", "video lasts 1.00 s; it must last 2 to 15 s")
    ]


def test_four_inline_videos_are_too_many() -> None:
    problems = check_inline_material(content_of(text(), *[video(url=_video_url(3))] * 4))
    assert [p.path for p in problems] == ["content[4].video_url"]
    assert "at most 3" in problems[0].message


def test_inline_videos_together_too_long() -> None:
    content = content_of(text(), video(url=_video_url(6)), video(url=_video_url(5)), video(url=_video_url(5)))
    problems = check_inline_material(content)
    assert [p.path for p in problems] == ["content[3].video_url"]
    assert "16.00 s together" in problems[0].message


def test_inline_audio_too_short() -> None:
    url = encode_data_url(wav_audio(1), "audio/wav")
    problems = check_inline_material(content_of(text(), image("reference_image"), audio(url=url)))
    assert [p.path for p in problems] == ["content[2].audio_url"]


# ---------- videos and audio ----------


@pytest.mark.parametrize(("seconds", "ok"), [(1, False), (2, True), (3, True), (15, True), (16, False)])
def test_video_duration(seconds: float, ok: bool) -> None:
    info, problems = check_video(mp4_video(seconds), "content[1].video_url")
    assert info.duration == pytest.approx(seconds)
    assert (info.has_video, info.width, info.height) == (True, 64, 64)
    assert (problems == []) == ok
    assert all(p.path == "content[1].video_url" for p in problems)


@pytest.mark.parametrize(("seconds", "ok"), [(1, False), (2, True), (3, True), (15, True), (16, False)])
def test_audio_duration(seconds: float, ok: bool) -> None:
    info, problems = check_audio(wav_audio(seconds))
    assert info.duration == pytest.approx(seconds)
    assert (info.has_audio, info.has_video) == (True, False)
    assert (problems == []) == ok


def test_audio_is_not_a_video() -> None:
    _, problems = check_video(wav_audio(3))
    assert [p.message for p in problems] == ["the file has no video stream"]


def test_a_silent_video_is_not_audio() -> None:
    _, problems = check_audio(mp4_video(3))
    assert [p.message for p in problems] == ["the file has no audio stream"]


@pytest.mark.parametrize("data", [b"", b"garbage" * 100, mp4_video(3)[:40]], ids=["empty", "text", "cut-mp4"])
def test_unreadable_media_is_refused(data: bytes) -> None:
    for check in (check_video, check_audio):
        info, problems = check(data, "where")
        assert info is None
        assert [p.path for p in problems] == ["where"]
        assert problems[0].message.startswith("not a media file")


def test_video_of_an_unknown_codec_is_probed_without_crashing() -> None:
    # FFmpeg gives a stream of an unknown codec no codec context at all.
    data = mp4_video(3).replace(b"avc1", b"zzzz")
    info = read_media_info(data)
    assert (info.has_video, info.width, info.height) == (True, None, None)
    assert info.duration == pytest.approx(3)


@pytest.mark.parametrize(("check", "kind"), [(check_video, "video"), (check_audio, "audio")])
def test_media_over_200_mb_is_refused_from_the_size_alone(tmp_path: Path, check: Any, kind: str) -> None:
    path = tmp_path / "big.bin"
    with path.open("wb") as f:
        f.truncate(L.VIDEO_MAX_BYTES + 1)  # sparse
    info, problems = check(path, "content[1]")
    assert info is None
    assert [p.message for p in problems] == [f"{kind} is 200.0 MB; the limit is 200 MB"]


def test_media_at_200_mb_is_not_refused_for_its_size(tmp_path: Path) -> None:
    path = tmp_path / "big.mp4"
    with path.open("wb") as f:
        f.write(mp4_video(3))
        f.truncate(L.VIDEO_MAX_BYTES)
    _, problems = check_video(path)
    assert not any("MB" in p.message for p in problems)


def test_video_from_a_path(tmp_path: Path) -> None:
    path = tmp_path / "clip.mp4"
    path.write_bytes(mp4_video(3))
    info, problems = check_video(path)
    assert problems == [] and info.size_bytes == path.stat().st_size


# ---------- reference videos together ----------


@pytest.mark.parametrize(
    ("durations", "expected"),
    [
        pytest.param([5.0, 5.0, 5.0], [], id="three-of-5s"),
        pytest.param([5.0, 5.0, 5.0, 5.0], ["content[4].video_url", "content[4].video_url"], id="four-of-5s"),
        pytest.param([3.0, 3.0, 3.0, 3.0], ["content[4].video_url"], id="four-of-3s"),
        pytest.param([6.0, 5.0, 5.0], ["content[3].video_url"], id="16s-together"),
        pytest.param([15.0], [], id="one-of-15s"),
        # Results of 24 d + 1 frames (d + 1/24 s): three "5 s" ones together, a "15 s" one.
        pytest.param([5 + 1 / 24] * 3, [], id="three-5s-results"),
        pytest.param([15 + 1 / 24], [], id="one-15s-result"),
        pytest.param([5.1, 5.1, 5.1], ["content[3].video_url"], id="three-of-5.1s"),
        pytest.param([], [], id="none"),
    ],
)
def test_reference_videos(durations: list[float], expected: list[str]) -> None:
    pairs = [(f"content[{i + 1}].video_url", d) for i, d in enumerate(durations)]
    assert [p.path for p in reference_videos_problems(pairs)] == expected


@pytest.mark.parametrize(("seconds", "refused"), [(15 + 1 / 24, False), (15.1, True), (2.0, False), (1.9, True)])
def test_a_video_of_whole_seconds_as_the_spec_counts_frames_is_within_its_limits(tmp_path, seconds, refused):
    """A "15 s" result of 24 x 15 + 1 frames lasts 15.04 s: refused as a reference, with the message
    "lasts 15.0 s; it must last 2 to 15 s". One frame is spared; the message has two decimals."""
    frames = round(seconds * 24)
    path = tmp_path / "clip.mp4"
    path.write_bytes(mp4_video(frames / 24, fps=24, size=16))
    info, problems = check_video(path)
    assert bool(problems) is refused, (info.duration, problems)
    if refused:
        assert f"lasts {info.duration:.2f} s" in problems[0].message


def test_an_image_is_sized_upright_and_only_the_services_formats_are_read(no_decoding) -> None:
    """The size every check, estimate and preview uses is the picture's as the renderer turns it
    (EXIF orientation), read from the header; formats Pillow can open but the service does not take
    (EPS, ICO, PPM, ...) are not images here."""
    from dailies.spec.media import read_image_info

    photo = io.BytesIO()
    exif = Image.Exif()
    exif[0x0112] = 6
    Image.new("RGB", (1600, 900)).save(photo, format="JPEG", exif=exif)
    assert (read_image_info(photo.getvalue()).width, read_image_info(photo.getvalue()).height) == (900, 1600)
    for other in ("ICO", "PPM", "TGA"):
        data = io.BytesIO()
        Image.new("RGB", (256, 256)).save(data, format=other)
        info, problems = check_image(data.getvalue(), "content[1].image_url")
        assert info is None and problems[0].message.startswith("not an image"), other


# ---------- hostile media (issue 34): protocol formats, malformed containers, bombs ----------

REPO = Path(__file__).resolve().parents[2]
# A guard for a busy machine: each refusal takes milliseconds; a protocol format used to wait forever.
REFUSED_WITHIN_S = 20.0


def _refusal_in_thread(call) -> BaseException | None:
    """What `call` raised, run in a thread so that one that never returns fails the test instead of
    hanging it; None when it returned."""
    outcome: dict = {}

    def run() -> None:
        try:
            call()
        except BaseException as exc:  # noqa: BLE001 - handed to the test
            outcome["raised"] = exc

    import threading

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(REFUSED_WITHIN_S)
    assert not thread.is_alive(), f"not refused within {REFUSED_WITHIN_S:g} s"
    return outcome.get("raised")


@pytest.mark.parametrize("name", ["sdp", "hls", "hls-local-file", "hls-nested-data-url", "dash", "concat",
                                  "concat-local-file", "concat-nested-data-url", "nested-data-url"])
@pytest.mark.parametrize("as_file", [False, True], ids=["bytes", "file"])
def test_protocol_formats_are_refused_without_opening_a_socket(tmp_path, name, as_file):
    from tests.support import hostile_media as hm

    with hm.connection_counter() as counter:
        port = hm.free_udp_port()
        raw = hm.protocol_formats(counter.url, port)[name]
        suffix = {"sdp": ".sdp", "dash": ".mpd"}.get(name, ".m3u8" if name.startswith("hls") else ".ffconcat")
        source: bytes | Path = raw
        if as_file:
            source = tmp_path / f"input{suffix}"
            source.write_bytes(raw)
        udp = hm.UdpWatch(port)
        try:
            raised = _refusal_in_thread(lambda: read_media_info(source))
        finally:
            bound = udp.stop()
        assert isinstance(raised, ValueError), raised
        assert str(raised).startswith("not a media file"), raised
        assert counter.connections == 0
        assert not bound, f"UDP port {port} was bound"
    _, problems = check_video(raw, "content[1].video_url")
    assert [p.path for p in problems] == ["content[1].video_url"]


def test_only_the_accepted_containers_are_opened() -> None:
    """FFmpeg opens many more formats than the service takes (raw YUV, image sequences, ...): those
    are refused by name, not read."""
    buf = io.BytesIO()
    with av.open(buf, "w", format="yuv4mpegpipe") as container:
        stream = container.add_stream("rawvideo", rate=8)
        stream.width = stream.height = 64
        stream.pix_fmt = "yuv420p"
        for i in range(24):
            frame = av.VideoFrame.from_ndarray(np.zeros((64, 64, 3), np.uint8), format="rgb24")
            frame.pts = i
            container.mux(stream.encode(frame))
        container.mux(stream.encode(None))
    _, problems = check_video(buf.getvalue(), "v")
    assert [p.message for p in problems] == [
        "not a media file of the accepted formats (video: MP4/MOV, WebM/MKV; audio: WAV, MP3, M4A, AAC, FLAC, "
        "Ogg, WebM/MKA)"]
    with pytest.raises(media.MediaRefused, match="accepted formats"):
        with media.open_untrusted(wav_audio(3), "video"):
            pass


def test_every_open_passes_the_whitelists_and_a_time_limit(monkeypatch) -> None:
    from tests.support import hostile_media as hm

    opens = hm.record_av_opens(monkeypatch)
    assert check_video(mp4_video(3))[1] == []
    assert check_audio(wav_audio(3))[1] == []
    assert len(opens) == 2 and all(o.guarded for o in opens)
    assert opens[0].kwargs["format"] == "mov" and opens[1].kwargs["format"] == "wav"  # nothing else probed
    options = opens[0].kwargs["container_options"]
    assert options["enable_drefs"] == "0"
    assert set(options["format_whitelist"].split(",")) == {"mov", "matroska", "wav", "mp3", "aac", "flac", "ogg"}


@pytest.mark.parametrize(("name", "fragment"), [
    ("truncated-mp4", "not a media file that can be read"),
    ("malformed-mp4", "no media data"),
    ("mp4-of-hours", "lasts 18000.00 s"),
    ("m4a-of-hours", "lasts 18000.00 s"),
    ("mp4-of-millions-of-frames", "samples in one track"),
    ("ftyp-only", "not a media file that can be read"),
])
def test_malformed_containers_and_bombs_are_refused(name, fragment) -> None:
    from tests.support import hostile_media as hm

    raw = hm.malformed_media()[name]
    for check in (check_video, check_audio):
        found: list = []
        assert _refusal_in_thread(lambda check=check, found=found: found.extend(check(raw, "where")[1])) is None
        assert found and found[0].path == "where"
        assert any(fragment in p.message for p in found), found


def test_refusing_bombs_holds_memory_bounded() -> None:
    """An MP4 of a kilobyte declaring 20 million frames made FFmpeg index each (about 750 MB): in a
    process of its own, the whole hostile set is refused with its peak memory barely moved."""
    script = textwrap.dedent("""
        from tests.support import hostile_media as hm
        from dailies.spec.media import check_audio, check_image, check_video

        def peaks():  # virtual and resident high-water marks, in KB
            status = dict(line.split(":", 1) for line in open("/proc/self/status"))
            return int(status["VmPeak"].split()[0]), int(status["VmHWM"].split()[0])

        bombs = {**hm.malformed_media(), "png": hm.png_bomb()}
        check_video(hm.small_mp4()), check_audio(hm.small_m4a())  # PyAV's own start-up, not the bombs'
        before = peaks()
        for name, raw in bombs.items():
            for check in (check_video, check_audio, check_image):
                check(raw, name)
        print(*before, *peaks())
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    virtual, resident, virtual_after, resident_after = map(int, done.stdout.split())
    assert resident_after - resident < 64 * 1024, f"resident peak grew by {(resident_after - resident) // 1024} MB"
    assert virtual_after - virtual < 128 * 1024, f"virtual peak grew by {(virtual_after - virtual) // 1024} MB"


def _live_matroska(seconds: float, fps: int = 8) -> bytes:
    """A Matroska written live: no duration in its header, so its length is found by reading packets."""
    buf = io.BytesIO()
    with av.open(buf, "w", format="matroska", options={"live": "1"}) as container:
        stream = container.add_stream("libx264", rate=fps)
        stream.width = stream.height = 64
        stream.pix_fmt = "yuv420p"
        stream.options = {"preset": "ultrafast"}
        for i in range(round(seconds * fps)):
            frame = av.VideoFrame.from_ndarray(np.zeros((64, 64, 3), np.uint8), format="rgb24")
            frame.pts = i
            container.mux(stream.encode(frame))
        container.mux(stream.encode(None))
    return buf.getvalue()


def test_the_walk_for_an_unstated_length_is_bounded(monkeypatch) -> None:
    assert read_media_info(_live_matroska(3)).duration == pytest.approx(3, abs=0.2)
    # It stops once past the longest length allowed: the answer is then "too long".
    long = read_media_info(_live_matroska(40))
    assert L.REFERENCE_VIDEOS_LONGEST_S < long.duration < 17
    # And within a packet count (a time as well), beyond which the file is refused.
    monkeypatch.setattr(media, "_WALK_PACKETS_MAX", 5)
    with pytest.raises(ValueError, match="not stated"):
        read_media_info(_live_matroska(3))


def test_a_video_whose_frames_are_larger_than_an_image_may_be_is_refused() -> None:
    from tests.support.hostile_media import wide_mp4

    _, problems = media.check_video(wide_mp4(6016), "content[1].video_url")
    assert [p.path for p in problems] == ["content[1].video_url"]
    assert "6016x64" in problems[0].message and "at most 6000 px" in problems[0].message
    info, problems = media.check_video(wide_mp4(1472), "content[1].video_url")
    assert problems == [] and info is not None and info.width == 1472
