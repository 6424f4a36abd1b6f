"""InputResolver: data URLs, asset:// ids, and real downloads from a server on 127.0.0.1."""

from __future__ import annotations

from pathlib import Path

import pytest

from dailies.generator import InputError, InputResolver, content_path
from dailies.spec.models import ContentItem

from .conftest import LocalServer, Route
from .media_fixtures import data_url

WHERE = "content[1].image_url"
PAYLOAD = b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 8


@pytest.fixture
def resolver(tmp_path: Path) -> InputResolver:
    return InputResolver(tmp_path, allow_loopback=True, timeout=5.0)


def assert_download_failed(error: pytest.ExceptionInfo[InputError], reason: str) -> None:
    assert error.value.code == "InvalidParameter"
    assert error.value.message.startswith(f"{WHERE}: resource download failed")
    assert reason in error.value.message
    assert str(error.value) == error.value.message


def test_content_path_names_the_media_field() -> None:
    item = ContentItem(type="video_url", video_url={"url": "asset://clip"}, role="reference_video")
    assert content_path(2, item) == "content[2].video_url"


# ---------- data URLs ----------


def test_base64_data_url_is_decoded(resolver: InputResolver, tmp_path: Path) -> None:
    url = data_url(PAYLOAD)
    assert resolver.read_bytes(url, WHERE) == PAYLOAD
    written = resolver.fetch(url, WHERE, scratch_dir=tmp_path)
    assert written.parent == tmp_path and written.read_bytes() == PAYLOAD


@pytest.mark.parametrize(
    "url",
    ["data:image/png;base64", "data:image/png;base64,@@@not-base64@@@", "data:image/png,plain-text", "data:;base64,"],
)
def test_malformed_data_url_names_the_item(resolver: InputResolver, url: str) -> None:
    with pytest.raises(InputError) as error:
        resolver.read_bytes(url, WHERE)
    assert error.value.code == "InvalidParameter"
    assert error.value.message.startswith(f"{WHERE}: ")
    assert "data URL" in error.value.message


def test_data_url_over_the_limit_is_refused(resolver: InputResolver) -> None:
    with pytest.raises(InputError, match="larger than 100 bytes"):
        resolver.read_bytes(data_url(PAYLOAD), WHERE, max_bytes=100)


# ---------- asset:// ----------


def test_asset_found_by_id_with_or_without_extension(tmp_path: Path, resolver: InputResolver) -> None:
    assets = tmp_path / "assets"
    assets.mkdir()
    (assets / "hero.png").write_bytes(PAYLOAD)
    (assets / "plain-id").write_bytes(b"exact")
    assert resolver.read_bytes("asset://hero", WHERE) == PAYLOAD
    assert resolver.read_bytes("asset://plain-id", WHERE) == b"exact"
    # Assets are handed out in place, never copied.
    assert resolver.fetch("asset://hero", WHERE, scratch_dir=tmp_path / "unused") == assets / "hero.png"


@pytest.mark.parametrize("url", ["asset://missing", "asset://../secrets", "asset://a/b", "asset://"])
def test_missing_or_invalid_asset_fails_the_download(resolver: InputResolver, url: str) -> None:
    with pytest.raises(InputError) as error:
        resolver.read_bytes(url, WHERE)
    assert_download_failed(error, "asset")


def test_unsupported_scheme_is_refused(resolver: InputResolver) -> None:
    with pytest.raises(InputError) as error:
        resolver.read_bytes("ftp://127.0.0.1/a.png", WHERE)
    assert_download_failed(error, "unsupported URL scheme")


# ---------- http(s) ----------


def test_download_from_loopback_when_allowed(http_server: LocalServer, resolver: InputResolver, tmp_path: Path) -> None:
    http_server.routes["/cat.png"] = Route(body=PAYLOAD, headers={"Content-Type": "image/png"})
    assert resolver.read_bytes(http_server.url("/cat.png"), WHERE) == PAYLOAD
    written = resolver.fetch(http_server.url("/cat.png"), WHERE, scratch_dir=tmp_path)
    assert written.read_bytes() == PAYLOAD


def test_loopback_refused_by_default_without_connecting(http_server: LocalServer, tmp_path: Path) -> None:
    http_server.routes["/cat.png"] = Route(body=PAYLOAD)
    strict = InputResolver(tmp_path)
    with pytest.raises(InputError) as error:
        strict.read_bytes(http_server.url("/cat.png"), WHERE)
    assert_download_failed(error, "loopback")
    assert http_server.hits == []


def test_private_address_refused(resolver: InputResolver) -> None:
    with pytest.raises(InputError) as error:
        resolver.read_bytes("http://10.0.0.1/a.png", WHERE)
    assert_download_failed(error, "private")


def test_http_404_names_the_item_and_the_status(http_server: LocalServer, resolver: InputResolver) -> None:
    with pytest.raises(InputError) as error:
        resolver.read_bytes(http_server.url("/gone.png"), WHERE)
    assert error.value.message == f"{WHERE}: resource download failed (HTTP 404)"


def test_declared_oversize_is_refused(http_server: LocalServer, tmp_path: Path) -> None:
    http_server.routes["/big"] = Route(body=b"x" * 5000)
    small = InputResolver(tmp_path, allow_loopback=True, max_bytes=1000)
    with pytest.raises(InputError) as error:
        small.read_bytes(http_server.url("/big"), WHERE)
    assert_download_failed(error, "larger than 1000 bytes")


def test_undeclared_oversize_stops_at_the_limit(http_server: LocalServer, tmp_path: Path) -> None:
    http_server.routes["/stream"] = Route(body=b"x" * 300_000, send_length=False)
    small = InputResolver(tmp_path, allow_loopback=True, max_bytes=100_000)
    with pytest.raises(InputError) as error:
        small.fetch(http_server.url("/stream"), WHERE, scratch_dir=tmp_path)
    assert_download_failed(error, "larger than 100000 bytes")
    # The partial download is not left behind.
    assert [p for p in tmp_path.iterdir() if p.name.startswith("input-")] == []


def test_per_item_limit_tightens_the_resolver_limit(http_server: LocalServer, resolver: InputResolver) -> None:
    http_server.routes["/img"] = Route(body=b"x" * 2000)
    with pytest.raises(InputError, match="larger than 1500 bytes"):
        resolver.read_bytes(http_server.url("/img"), WHERE, max_bytes=1500)


def test_redirects_are_followed_and_every_hop_is_checked(http_server: LocalServer, resolver: InputResolver) -> None:
    http_server.routes["/cat.png"] = Route(body=PAYLOAD)
    http_server.routes["/moved"] = Route(status=302, headers={"Location": "/cat.png"})
    http_server.routes["/to-private"] = Route(status=302, headers={"Location": "http://10.0.0.1/cat.png"})
    assert resolver.read_bytes(http_server.url("/moved"), WHERE) == PAYLOAD
    with pytest.raises(InputError) as error:
        resolver.read_bytes(http_server.url("/to-private"), WHERE)
    assert_download_failed(error, "private")


def test_redirect_loop_gives_up(http_server: LocalServer, resolver: InputResolver) -> None:
    http_server.routes["/loop"] = Route(status=302, headers={"Location": "/loop"})
    with pytest.raises(InputError) as error:
        resolver.read_bytes(http_server.url("/loop"), WHERE)
    assert_download_failed(error, "redirects")


def test_slow_server_times_out(http_server: LocalServer, tmp_path: Path) -> None:
    http_server.routes["/slow"] = Route(body=PAYLOAD, delay=1.5)
    impatient = InputResolver(tmp_path, allow_loopback=True, timeout=0.3)
    with pytest.raises(InputError) as error:
        impatient.read_bytes(http_server.url("/slow"), WHERE)
    assert_download_failed(error, "timed out")
