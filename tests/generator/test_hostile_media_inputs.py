"""The renderer's inputs are media nobody vouches for (issue 34): a reference video or audio fetched
from a URL or an asset is opened only through `spec.media.open_untrusted`, so a protocol format, a
container FFmpeg reads but the service does not take, or a bomb fails the task naming its field,
without a socket opened."""

from __future__ import annotations

import io
from pathlib import Path

import av
import numpy as np
import pytest

from dailies.generator import InputError
from dailies.generator.media import VideoClip, load_audio, open_image
from tests.support import hostile_media as hm

from .conftest import RenderFn
from .media_fixtures import MODEL_2_0, data_url, gradient_image, image_url, video_bytes, wav_bytes

TEXT = {"type": "text", "text": "The camera slowly pushes in"}


def reference(kind: str, url: str) -> dict:
    return {"type": kind, kind: {"url": url}, "role": f"reference_{kind.removesuffix('_url')}"}


def y4m_video(seconds: float = 3, fps: int = 8) -> bytes:
    """A raw YUV4MPEG video: FFmpeg reads it, the service does not take it."""
    buf = io.BytesIO()
    with av.open(buf, "w", format="yuv4mpegpipe") as container:
        stream = container.add_stream("rawvideo", rate=fps)
        stream.width = stream.height = 64
        stream.pix_fmt = "yuv420p"
        for i in range(round(seconds * fps)):
            frame = av.VideoFrame.from_ndarray(np.zeros((64, 64, 3), np.uint8), format="rgb24")
            frame.pts = i
            container.mux(stream.encode(frame))
        container.mux(stream.encode(None))
    return buf.getvalue()


def test_every_input_the_renderer_opens_is_opened_guarded(render: RenderFn, monkeypatch) -> None:
    opens = hm.record_av_opens(monkeypatch)
    content = [TEXT, reference("video_url", data_url(video_bytes([(200, 0, 0)], seconds_each=2.5), "video/mp4")),
               reference("audio_url", data_url(wav_bytes(440, 2.5), "audio/wav"))]
    render(MODEL_2_0, content, resolution="480p", duration=4)
    inputs = [o for o in opens if Path(str(o.source)).name.startswith("input-")]
    assert len(inputs) >= 4  # the video's check, its probe and its frames; the audio's check and samples
    assert [o for o in inputs if not o.guarded] == []


def test_a_container_the_service_does_not_take_fails_the_task(render: RenderFn, tmp_path: Path) -> None:
    assets = tmp_path / "data" / "assets"
    assets.mkdir(parents=True)
    (assets / "raw.mp4").write_bytes(y4m_video())
    with pytest.raises(InputError, match=r"^content\[1\]\.video_url: resource is not a readable video$"):
        render(MODEL_2_0, [TEXT, reference("video_url", "asset://raw")], resolution="480p", duration=4,
               generate_audio=False)


@pytest.mark.parametrize("name", ["sdp", "hls", "dash", "concat", "concat-local-file", "nested-data-url"])
def test_protocol_formats_fail_the_task_without_a_socket(render: RenderFn, tmp_path: Path, name: str) -> None:
    assets = tmp_path / "data" / "assets"
    assets.mkdir(parents=True)
    with hm.connection_counter() as counter:
        port = hm.free_udp_port()
        (assets / "hostile.mp4").write_bytes(hm.protocol_formats(counter.url, port)[name])
        for kind in ("video_url", "audio_url"):
            content = [TEXT, {"type": "image_url", "image_url": {"url": image_url(gradient_image(864, 496))},
                              "role": "reference_image"}, reference(kind, "asset://hostile")]
            udp = hm.UdpWatch(port)
            try:
                with pytest.raises(InputError, match=rf"^content\[2\]\.{kind}: "):
                    render(MODEL_2_0, content, resolution="480p", duration=4)
            finally:
                assert not udp.stop(), f"UDP port {port} was bound"
        assert counter.connections == 0


def test_the_renderer_openers_refuse_what_the_spec_does_not_take(tmp_path: Path) -> None:
    raw = tmp_path / "input-raw"
    raw.write_bytes(y4m_video())
    with pytest.raises(InputError, match="not a readable video"):
        VideoClip(raw, "content[1].video_url")
    with pytest.raises(InputError, match="not a readable audio"):
        load_audio(raw, "content[2].audio_url", 48000, 48000)
    frames = tmp_path / "input-frames"
    frames.write_bytes(hm.mp4_of_frames(20_000_000))
    with pytest.raises(InputError, match="not a readable video"):
        VideoClip(frames, "content[1].video_url")


def test_open_image_takes_only_the_formats_the_check_takes(monkeypatch) -> None:
    """Pillow opens formats beyond the spec's (EPS would run Ghostscript): even past the check, the
    renderer's own open names the formats it takes."""
    from dailies.generator import media as renderer_media

    buf = io.BytesIO()
    gradient_image(640, 480).save(buf, format="PCX")
    monkeypatch.setattr(renderer_media, "check_image", lambda data, where: (None, []))
    with pytest.raises(InputError, match="not a readable image"):
        open_image(buf.getvalue(), "content[1].image_url")
