"""Hostile media through the real service (issue 34, hole 1): a create carrying inline bytes that are
a protocol format (SDP, HLS, DASH, concat lists, nested data URLs), a truncated or malformed
container, or a bomb (a PNG declaring 100,000 x 100,000 pixels, an MP4 of millions of frames, a
video or audio of hours) is refused with a 400 naming the field, while /healthz keeps answering and
no socket is opened.

The service runs in a thread of its own (uvicorn on loopback, SQLite), so a create that froze its
event loop shows here as /healthz not answering, and the test fails instead of hanging with it.
"""

from __future__ import annotations

import threading
import time

import httpx
import pytest

from tests.service.conftest import MODEL_2_0, TASKS, FakeGenerator
from tests.support import hostile_media as hm
from tests.support.live_service import start_live_service

KEY = "hostile-media-key"
TEXT = {"type": "text", "text": "a heron lands on a post"}
PUBLIC_IMAGE = "https://example.com/heron.png"
# Generous guards for a busy two-core machine: each refusal takes milliseconds.
REFUSED_WITHIN_S = 20.0
HEALTHZ_WITHIN_S = 5.0


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    live = start_live_service(tmp_path_factory.mktemp("hostile-media"), workers=0, api_keys={KEY: "p"},
                              generator=FakeGenerator())
    yield live
    live.stop()


@pytest.fixture(scope="module")
def watchers():
    with hm.connection_counter() as counter:
        yield counter, hm.free_udp_port()


def body_with(kind: str, raw: bytes) -> tuple[dict, str]:
    """A create body holding `raw` inline as the content item of `kind`, and the field its refusal names."""
    if kind == "image_url":
        items = [TEXT, {"type": "image_url", "image_url": {"url": hm.data_url(raw, "image/png")},
                        "role": "first_frame"}]
    elif kind == "video_url":
        items = [TEXT, {"type": "video_url", "video_url": {"url": hm.data_url(raw, "video/mp4")},
                        "role": "reference_video"}]
    else:
        items = [TEXT, {"type": "image_url", "image_url": {"url": PUBLIC_IMAGE}, "role": "reference_image"},
                 {"type": "audio_url", "audio_url": {"url": hm.data_url(raw, "audio/wav")},
                  "role": "reference_audio"}]
    return {"model": MODEL_2_0, "content": items}, f"content[{len(items) - 1}].{kind}"


def create_while_polling_healthz(service, body: dict) -> tuple[httpx.Response, list[float]]:
    """POST the create in a thread and poll /healthz until it is answered; each poll's answer time.
    Fails (never hangs) when the create or a poll takes longer than its guard."""
    answer: dict = {}

    def create() -> None:
        try:
            answer["response"] = httpx.post(f"{service.root}{TASKS}", json=body, timeout=REFUSED_WITHIN_S,
                                            headers={"Authorization": f"Bearer {KEY}"})
        except httpx.HTTPError as exc:
            answer["error"] = exc

    thread = threading.Thread(target=create, daemon=True)
    thread.start()
    polls: list[float] = []
    while thread.is_alive():
        started = time.monotonic()
        try:
            health = httpx.get(f"{service.root}/healthz", timeout=HEALTHZ_WITHIN_S)
        except httpx.TimeoutException:
            pytest.fail(f"/healthz did not answer within {HEALTHZ_WITHIN_S:g} s while the create was in flight")
        assert health.status_code == 200
        polls.append(time.monotonic() - started)
        thread.join(0.01)
    assert "error" not in answer, f"the create was not answered within {REFUSED_WITHIN_S:g} s: {answer.get('error')!r}"
    return answer["response"], polls


def assert_refused(response: httpx.Response, param: str) -> str:
    assert response.status_code == 400, response.text[:500]
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}, error
    assert error["param"] == param, error
    assert error["code"] == "InvalidParameter", error
    return error["message"]


PROTOCOLS = ["sdp", "hls", "hls-local-file", "hls-nested-data-url", "dash", "concat", "concat-local-file",
             "concat-nested-data-url", "nested-data-url"]


@pytest.mark.parametrize("kind", ["video_url", "audio_url"])
@pytest.mark.parametrize("name", PROTOCOLS)
def test_protocol_formats_are_refused_without_a_socket(service, watchers, name, kind):
    counter, udp_port = watchers
    raw = hm.protocol_formats(counter.url, udp_port)[name]
    body, param = body_with(kind, raw)
    before = counter.connections
    udp = hm.UdpWatch(udp_port)
    try:
        response, _ = create_while_polling_healthz(service, body)
    finally:
        bound = udp.stop()
    message = assert_refused(response, param)
    assert "not a media file" in message
    assert counter.connections == before, "the loopback HTTP server was connected to"
    assert not bound, f"UDP port {udp_port} was bound"


MALFORMED = {
    "video_url": ["truncated-mp4", "malformed-mp4", "mp4-of-hours", "mp4-of-millions-of-frames", "garbage",
                  "ftyp-only"],
    "audio_url": ["m4a-of-hours", "wav-of-hours", "truncated-mp4", "garbage"],
}


@pytest.mark.parametrize(("kind", "name"), [(k, n) for k, names in MALFORMED.items() for n in names])
def test_malformed_media_and_bombs_are_refused(service, kind, name):
    body, param = body_with(kind, hm.malformed_media()[name])
    response, _ = create_while_polling_healthz(service, body)
    assert_refused(response, param)


def test_a_png_declaring_ten_billion_pixels_is_refused(service):
    bomb = hm.png_bomb(100_000, 100_000)
    assert len(bomb) < 4096
    body, param = body_with("image_url", bomb)
    response, _ = create_while_polling_healthz(service, body)
    assert "decompression bomb" in assert_refused(response, param)


def test_a_small_hostile_create_never_runs_on_the_event_loop(service, watchers, monkeypatch):
    """A body under the quick-create size holding inline media is checked in the thread pool: while a
    check is held there, /healthz answers (the attacker's create was about 1 KB)."""
    from dailies.service.api import routes

    counter, udp_port = watchers
    raw = hm.protocol_formats(counter.url, udp_port)["sdp"]
    body, param = body_with("video_url", raw)
    assert len(str(body)) < routes.QUICK_CREATE_MAX_BYTES
    tasks = service.app.state.services.tasks
    entered, release = threading.Event(), threading.Event()
    real_create = tasks.create

    def held_create(*args, **kwargs):
        entered.set()
        release.wait(REFUSED_WITHIN_S)
        return real_create(*args, **kwargs)

    monkeypatch.setattr(tasks, "create", held_create)
    answer: dict = {}
    thread = threading.Thread(target=lambda: answer.update(response=httpx.post(
        f"{service.root}{TASKS}", json=body, timeout=REFUSED_WITHIN_S * 2,
        headers={"Authorization": f"Bearer {KEY}"})), daemon=True)
    thread.start()
    try:
        assert entered.wait(REFUSED_WITHIN_S), "the create did not reach the task service"
        health = httpx.get(f"{service.root}/healthz", timeout=HEALTHZ_WITHIN_S)
        assert health.status_code == 200
    finally:
        release.set()
        thread.join(REFUSED_WITHIN_S * 2)
    assert_refused(answer["response"], param)


def test_real_inline_media_is_still_accepted(service):
    for kind, raw in (("video_url", hm.small_mp4(2.5)), ("audio_url", hm.small_wav(2.5)),
                      ("audio_url", hm.small_m4a(2.5))):
        body, _ = body_with(kind, raw)
        response, _ = create_while_polling_healthz(service, body)
        assert response.status_code == 200, response.text
