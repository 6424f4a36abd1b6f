"""A reel's shots are kept copies of results an upstream or a member's bucket handed over (issue 34):
they are opened only through `spec.media.open_untrusted`, so a copy that is a protocol format, a
container the service does not take or an MP4 of millions of frames is named and refused, without a
socket opened."""

from __future__ import annotations

from pathlib import Path

import pytest

from dailies.reel import ReelShot, make_reel, reel_duration
from tests.support import hostile_media as hm

from .clips import make_clip


@pytest.fixture(scope="module")
def good(tmp_path_factory) -> Path:
    return make_clip(tmp_path_factory.mktemp("reel-hostile") / "good.mp4", (160, 96), 24, 0.5, (200, 30, 30), 48000)


def test_every_shot_is_opened_guarded(good, tmp_path, monkeypatch):
    opens = hm.record_av_opens(monkeypatch)
    out = make_reel([ReelShot(good, "good")], tmp_path / "reel.mp4", size=(160, 96), fps=24)
    assert reel_duration(out) > 0
    assert opens and [o for o in opens if not o.guarded] == []


@pytest.mark.parametrize("name", ["sdp", "hls", "concat-local-file", "nested-data-url", "mp4-of-millions-of-frames",
                                  "truncated-mp4", "ftyp-only"])
def test_a_hostile_kept_copy_is_named_without_a_socket(good, tmp_path, name):
    with hm.connection_counter() as counter:
        port = hm.free_udp_port()
        raw = {**hm.protocol_formats(counter.url, port), **hm.malformed_media()}[name]
        shot = tmp_path / "kept.mp4"
        shot.write_bytes(raw)
        udp = hm.UdpWatch(port)
        try:
            with pytest.raises(ValueError, match="shot kept: cannot read"):
                make_reel([ReelShot(good, "good"), ReelShot(shot, "kept")], tmp_path / "reel.mp4")
        finally:
            assert not udp.stop(), f"UDP port {port} was bound"
        assert counter.connections == 0
    assert not (tmp_path / "reel.mp4").exists()
