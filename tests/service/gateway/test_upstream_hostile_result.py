"""The gateway's check of the upstream's video (issue 34): what an upstream delivers is media nobody
vouches for, opened only through `spec.media.open_untrusted`; an MP4 whose tables declare millions of
frames is refused as an invalid result before FFmpeg indexes them."""

from __future__ import annotations

import pytest

from dailies.service.gateway.forwarding import UPSTREAM_RESULT_INVALID, UpstreamFailed
from tests.service.gateway.test_upstream import Upstream, created, generator, job, render
from tests.support import hostile_media as hm


def test_the_upstreams_video_is_opened_guarded(tmp_path, monkeypatch):
    opens = hm.record_av_opens(monkeypatch)
    result = render(generator(Upstream([created()])), job(tmp_path), tmp_path)
    assert (result.width, result.height) == (64, 48)
    assert opens and [o for o in opens if not o.guarded] == []


@pytest.mark.parametrize("name", ["mp4-of-millions-of-frames", "truncated-mp4", "ftyp-only"])
def test_a_hostile_upstream_video_fails_the_task_as_an_invalid_result(tmp_path, name):
    upstream = Upstream([created()])
    upstream.video = hm.malformed_media()[name]
    with pytest.raises(UpstreamFailed) as failed:
        render(generator(upstream), job(tmp_path), tmp_path)
    assert failed.value.code == UPSTREAM_RESULT_INVALID
