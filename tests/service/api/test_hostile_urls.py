"""Hostile input, category 4: every URL field (`image_url.url`, `video_url.url`, `audio_url.url`,
`callback_url`) with bad schemes, private, loopback and metadata-service addresses, data URLs that
are not what they claim, and pixel bombs. Each is a 400 at create naming the field; names that
need DNS are judged when the input is fetched, which refuses private addresses after resolving."""

from __future__ import annotations

import base64
import io
import struct
import zlib

import httpx
import pytest
from PIL import Image

from dailies import netguard
from dailies.generator.inputs import InputError, InputResolver
from dailies.service.api.app import create_app
from dailies.service.settings import Settings
from tests.service.conftest import MODEL_2_0, FakeClock, FakeGenerator, text_body
from tests.service.hostile import ACCEPTED, assert_refused, hostile_service, module_anyio_backend  # noqa: F401 - fixtures

pytestmark = pytest.mark.anyio

TEXT = {"type": "text", "text": "a heron at dawn"}
PUBLIC_IMAGE = "https://example.com/heron.png"


def with_url(kind: str, url: str) -> tuple[dict, str]:
    """A body that puts `url` in a content item of `kind` (in a combination the kind allows) and
    the param naming it."""
    if kind == "image_url":
        items = [TEXT, {"type": "image_url", "image_url": {"url": url}, "role": "first_frame"}]
    elif kind == "video_url":
        items = [TEXT, {"type": "video_url", "video_url": {"url": url}, "role": "reference_video"}]
    else:
        items = [TEXT, {"type": "image_url", "image_url": {"url": PUBLIC_IMAGE}, "role": "reference_image"},
                 {"type": "audio_url", "audio_url": {"url": url}, "role": "reference_audio"}]
    return {"model": MODEL_2_0, "content": items}, f"content[{len(items) - 1}].{kind}.url"


def data_url(mime: str, raw: bytes) -> str:
    return f"data:{mime};base64,{base64.b64encode(raw).decode()}"


def png_chunk(tag: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + tag + data + struct.pack(">I", zlib.crc32(tag + data))


def png_header(width: int, height: int) -> bytes:
    """A PNG that declares its size and holds no pixels: what a pixel bomb looks like to a
    checker that reads headers."""
    ihdr = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + png_chunk(b"IHDR", ihdr) + png_chunk(b"IEND", b"")


def real_png(width: int = 640, height: int = 480) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", (width, height), (30, 90, 160)).save(out, format="PNG")
    return out.getvalue()


KINDS = ["image_url", "video_url", "audio_url"]

BAD_SCHEMES = [
    "javascript:alert(document.cookie)",
    "file:///etc/passwd",
    "ftp://example.com/a.bin",
    "gopher://example.com:70/_GET",
    "dict://example.com:11211/stat",
    "ldap://example.com/dc=x",
    "jar:http://example.com/a.jar!/",
    "example.com/no-scheme.png",
    "//example.com/protocol-relative.png",
    "data:text/html;base64,PHNjcmlwdD5hbGVydCgxKTwvc2NyaXB0Pg==",
    "asset://../../etc/passwd",
    "http:///no-host",
]


@pytest.mark.parametrize("url", BAD_SCHEMES)
@pytest.mark.parametrize("kind", KINDS)
async def test_bad_schemes_and_shapes_are_refused_naming_the_field(hostile, kind, url):
    body, param = with_url(kind, url)
    assert_refused(await hostile.create(body), param, code="InvalidParameter")


@pytest.mark.parametrize("url", ["ftp://example.com/hook", "file:///tmp/hook", "javascript:alert(1)", "hook",
                                 "http://", "https://example.com/\r\nX-Injected: yes"])
async def test_bad_callback_urls(hostile, url):
    assert_refused(await hostile.create(text_body(callback_url=url)), "callback_url", code="InvalidParameter")


PRIVATE = [
    ("http://127.0.0.1:8000/x.png", "loopback"),
    ("http://[::1]/x.png", "loopback"),
    ("http://2130706433/x.png", "loopback"),
    ("http://0x7f.0.0.1/x.png", "loopback"),
    ("http://localhost:9/x.png", "loopback"),
    ("http://api.localhost/x.png", "loopback"),
    ("http://10.0.0.5/x.png", "private"),
    ("http://192.168.0.1/x.png", "private"),
    ("http://[::ffff:172.16.0.1]/x.png", "private"),
    ("http://169.254.169.254/latest/meta-data/iam/", "link-local"),
    ("http://0xa9fea9fe/latest/meta-data/", "link-local"),
    ("http://[fe80::1%25eth0]/x.png", "link-local"),
    ("http://metadata.google.internal/computeMetadata/v1/", "internal"),
    ("http://0.0.0.0:8000/x.png", "unspecified"),
    ("http://239.255.255.250/x.png", "multicast"),
    ("http://240.0.0.1/x.png", "reserved"),
]


@pytest.mark.parametrize(("url", "reason"), PRIVATE)
@pytest.mark.parametrize("kind", KINDS)
async def test_private_loopback_and_metadata_hosts_are_refused_at_create(hostile, kind, url, reason):
    body, param = with_url(kind, url)
    error = assert_refused(await hostile.create(body), param, code="InvalidParameter")
    assert reason in error["message"]


@pytest.mark.parametrize(("url", "reason"), [
    ("http://10.0.0.5/hook", "private"), ("http://169.254.169.254/hook", "link-local"),
    ("http://metadata.google.internal/hook", "internal"), ("http://0.0.0.0:9/hook", "unspecified"),
])
async def test_private_callback_hosts_are_refused_at_create(hostile, url, reason):
    error = assert_refused(await hostile.create(text_body(callback_url=url)), "callback_url")
    assert reason in error["message"]


NOT_IMAGES = [
    pytest.param(data_url("image/png", b"<html><script>alert(1)</script></html>"), "content[1].image_url",
                 "not an image", id="html-labelled-png"),
    pytest.param(data_url("image/png", b"%PDF-1.7\n" + b"0" * 200), "content[1].image_url", "not an image",
                 id="pdf-labelled-png"),
    pytest.param(data_url("image/gif", b"GIF89a\x01"), "content[1].image_url", "not an image", id="truncated-gif"),
    pytest.param("data:image/png;base64,%%%not-base64%%%", "content[1].image_url.url", "invalid Base64",
                 id="broken-base64"),
    pytest.param("data:image/png;base64,iVBORw0KGgo", "content[1].image_url.url", "invalid Base64",
                 id="unpadded-base64"),
    pytest.param("data:image/png;base64,", "content[1].image_url.url", "empty", id="empty-payload"),
    pytest.param("data:image/png,iVBORw0KGgo=", "content[1].image_url.url", "without ';base64'", id="not-base64"),
    pytest.param(data_url("text/plain", real_png()), "content[1].image_url.url", "data URL of 'text/plain'",
                 id="png-labelled-text"),
    pytest.param(data_url("image/svg+xml", b"<svg xmlns='http://www.w3.org/2000/svg'/>"), "content[1].image_url",
                 "not an image", id="svg"),
    pytest.param(data_url("image/png", png_header(100_000, 100_000)), "content[1].image_url",
                 "decompression bomb", id="pixel-bomb-100000x100000"),
    pytest.param(data_url("image/png", png_header(40_000, 40_000)), "content[1].image_url",
                 "decompression bomb", id="pixel-bomb-40000x40000"),
    pytest.param(data_url("image/png", png_header(6_001, 3_000)), "content[1].image_url", "width 6001 px",
                 id="too-wide-header"),
    pytest.param(data_url("image/png", png_header(0, 400)), "content[1].image_url", "not an image",
                 id="zero-width-header"),
]


@pytest.mark.parametrize(("url", "param", "fragment"), NOT_IMAGES)
async def test_data_urls_that_are_not_usable_images(hostile, url, param, fragment):
    body, _ = with_url("image_url", url)
    error = assert_refused(await hostile.create(body), param, code="InvalidParameter")
    assert fragment in error["message"]


@pytest.mark.parametrize(("kind", "url", "param"), [
    ("video_url", data_url("video/mp4", b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 64), "content[1].video_url"),
    ("video_url", data_url("video/mp4", b"<html></html>"), "content[1].video_url"),
    ("audio_url", data_url("audio/wav", b"RIFF\x00\x00\x00\x00WAVE"), "content[2].audio_url"),
])
async def test_inline_media_that_is_not_media(hostile, kind, url, param):
    body, _ = with_url(kind, url)
    error = assert_refused(await hostile.create(body), param, code="InvalidParameter")
    assert "not a media file" in error["message"]


async def test_a_real_inline_image_and_a_public_url_are_accepted(hostile):
    for url in (data_url("image/png", real_png()), PUBLIC_IMAGE):
        body, _ = with_url("image_url", url)
        response = await hostile.client.post("/api/v3/contents/generations/tasks", json=body, headers=ACCEPTED)
        assert response.status_code == 200, response.text


async def test_own_signed_result_urls_pass_whatever_their_host(hostile):
    # Chained shots: our own result URL points at loopback, and is read from disk, not downloaded.
    done = next(r for r in hostile.seeded.values() if r["status"] == "succeeded")
    # As a service on 127.0.0.1:8000 signs them (the signature covers the path and expiry only).
    own = done["content"]["video_url"].replace("http://testserver", "http://127.0.0.1:8000")
    body, _ = with_url("video_url", own)
    response = await hostile.client.post("/api/v3/contents/generations/tasks", json=body, headers=ACCEPTED)
    assert response.status_code == 200, response.text
    forged, param = with_url("video_url", own.replace("signature=", "signature=1"))
    assert "loopback" in assert_refused(await hostile.create(forged), param)["message"]


async def test_names_that_need_dns_are_accepted_and_fail_when_fetched(hostile, tmp_path):
    # Offline, `.invalid` never resolves: like the real service, the task is made and fails later.
    url = "https://does-not-resolve.invalid/heron.png"
    body, _ = with_url("image_url", url)
    response = await hostile.client.post("/api/v3/contents/generations/tasks", json=body, headers=ACCEPTED)
    assert response.status_code == 200, response.text
    with pytest.raises(InputError, match=r"content\[1\]\.image_url: resource download failed") as failure:
        hostile.services.workers.inputs.read_bytes(url, "content[1].image_url")
    assert failure.value.code == "InvalidParameter"


# ---------- after resolution: the fetch refuses private addresses ----------


@pytest.fixture
def dns(monkeypatch):
    """A resolver answering from a table, as a DNS server pointing public-looking names inward."""
    table: dict[str, list[str]] = {}
    real = netguard.resolve

    def resolve(host, port=None, timeout=None):
        if host in table:
            import ipaddress

            return [ipaddress.ip_address(a) for a in table[host]]
        return real(host, port, timeout)

    monkeypatch.setattr(netguard, "resolve", resolve)
    return table


@pytest.mark.parametrize(("addresses", "reason"), [
    (["10.1.2.3"], "private"), (["169.254.169.254"], "link-local"), (["127.0.0.1"], "loopback"),
    (["93.184.216.34", "192.168.1.1"], "private"), (["::1"], "loopback"), (["0.0.0.0"], "unspecified"),
])
async def test_a_name_resolving_inward_is_refused_by_the_fetch(dns, tmp_path, addresses, reason):
    dns["images.example.com"] = addresses
    called = []
    resolver = InputResolver(tmp_path, allow_loopback=False,
                             transport=httpx.MockTransport(lambda request: called.append(request)))
    with pytest.raises(InputError, match=f"resource download failed .*{reason}"):
        resolver.read_bytes("https://images.example.com/a.png", "content[1].image_url")
    assert called == []  # refused before any connection


async def test_a_redirect_inward_is_refused_by_the_fetch(dns, tmp_path):
    dns["images.example.com"] = ["93.184.216.34"]
    seen = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        return httpx.Response(302, headers={"Location": "http://169.254.169.254/latest/meta-data/"})

    resolver = InputResolver(tmp_path, allow_loopback=False, transport=httpx.MockTransport(handler))
    with pytest.raises(InputError, match="link-local"):
        resolver.read_bytes("https://images.example.com/a.png", "content[1].image_url")
    assert seen == ["https://93.184.216.34/a.png"]  # the address checked (the host's name in Host and TLS)


async def test_the_fetch_connects_to_the_address_it_checked(dns, tmp_path):
    dns["images.example.com"] = ["93.184.216.34"]
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return httpx.Response(200, content=b"\x89PNG\r\n\x1a\n")

    resolver = InputResolver(tmp_path, allow_loopback=False, transport=httpx.MockTransport(handler))
    resolver.read_bytes("https://images.example.com:8443/a.png?v=2", "content[1].image_url")
    [request] = seen
    assert str(request.url) == "https://93.184.216.34:8443/a.png?v=2"
    assert request.headers["host"] == "images.example.com:8443"
    assert request.extensions["sni_hostname"] == "images.example.com"


async def test_a_name_that_answers_inward_on_a_second_lookup_cannot_turn_the_fetch_inward(tmp_path, monkeypatch):
    """DNS rebinding: the name resolves to a public address for the check and to loopback after it.
    The fetch connects to the address checked, so the loopback server is never reached."""
    from tests.support.rebinding import rebinding_name

    with rebinding_name(monkeypatch, "rebind.example", public_lookups=1) as inside:
        resolver = InputResolver(tmp_path, allow_loopback=False, timeout=2)
        with pytest.raises(InputError, match="resource download failed"):
            resolver.read_bytes(f"http://rebind.example:{inside.port}/a.png", "content[1].image_url")
    assert inside.reached == [] and inside.lookups == ["rebind.example"]


async def test_localhost_is_refused_by_the_fetch_without_the_setting(tmp_path):
    resolver = InputResolver(tmp_path, allow_loopback=False, transport=httpx.MockTransport(lambda r: None))
    with pytest.raises(InputError, match="loopback"):
        resolver.read_bytes("http://localhost:9/a.png", "content[1].image_url")


# ---------- the operator's setting ----------


async def test_loopback_inputs_are_accepted_when_the_operator_allows_them(tmp_path):
    settings = Settings(data_dir=tmp_path, api_keys={"key-a": "alpha"}, workers=0, clock=FakeClock(),
                        log_requests=False, allow_loopback_inputs=True)
    app = create_app(settings, generator=FakeGenerator(), start_background=False)
    auth = {"Authorization": "Bearer key-a"}
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as client:
            loopback, _ = with_url("image_url", "http://127.0.0.1:8765/x.png")
            assert (await client.post("/api/v3/contents/generations/tasks", json=loopback, headers=auth)
                    ).status_code == 200
            metadata, param = with_url("image_url", "http://169.254.169.254/latest/meta-data/")
            assert_refused(await client.post("/api/v3/contents/generations/tasks", json=metadata, headers=auth),
                           param)
    finally:
        app.state.services.stop()
