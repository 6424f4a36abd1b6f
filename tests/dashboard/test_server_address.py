"""The dashboard's server-address hint (dashboard/server_address.py): which responses get the script,
and that they stay whole HTTP responses (length, compression) while every other one passes untouched."""

from __future__ import annotations

import asyncio
import gzip

import pytest

from dashboard.server_address import SCRIPT, ServerAddressHint, page_path, with_script

PAGE = b"<!doctype html><html><head><title>Streamlit</title></head><body></body></html>"


def inner_app(body: bytes = PAGE, content_type: bytes = b"text/html; charset=utf-8", status: int = 200,
              chunks: int = 1):
    """A stand-in for Streamlit: answers every request with `body`, compressed when asked (as its own
    gzip middleware would), and remembers the requests' headers."""
    seen: list[dict] = []

    async def app(scope, receive, send):
        headers = dict(scope["headers"])
        seen.append(headers)
        data = gzip.compress(body) if b"gzip" in headers.get(b"accept-encoding", b"") else body
        response_headers = [(b"content-type", content_type), (b"content-length", str(len(data)).encode()),
                            (b"etag", b'"abc"')]
        if data is not body:
            response_headers.append((b"content-encoding", b"gzip"))
        await send({"type": "http.response.start", "status": status, "headers": response_headers})
        size = max(1, len(data) // chunks)
        parts = [data[i:i + size] for i in range(0, len(data), size)] or [b""]
        for index, part in enumerate(parts):
            await send({"type": "http.response.body", "body": part, "more_body": index < len(parts) - 1})

    app.seen = seen
    return app


def call(app, path: str, method: str = "GET", gzip_ok: bool = False, root_path: str = "") -> tuple[dict, bytes]:
    headers = [(b"host", b"127.0.0.1")] + ([(b"accept-encoding", b"gzip, deflate, br")] if gzip_ok else [])
    scope = {"type": "http", "method": method, "path": path, "root_path": root_path, "headers": headers}
    sent: list[dict] = []

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        sent.append(message)

    asyncio.run(app(scope, receive, send))
    start = next(m for m in sent if m["type"] == "http.response.start")
    return start, b"".join(m.get("body", b"") for m in sent if m["type"] == "http.response.body")


def hinted(inner, base: str = "") -> ServerAddressHint:
    return ServerAddressHint(inner, page_paths=["", "tasks", "review", "settings", "guest"], base_url_path=lambda: base)


def headers_of(start: dict) -> dict[bytes, bytes]:
    return {key.lower(): value for key, value in start["headers"]}


@pytest.mark.parametrize("path", ["/review", "/tasks", "/settings/", "/guest"])
def test_a_page_below_the_root_gets_the_script_first_in_its_head(path):
    start, body = call(hinted(inner_app()), path)
    assert body == with_script(PAGE)
    assert body.index(SCRIPT.encode()) == PAGE.index(b"<head>") + len(b"<head>")
    assert headers_of(start)[b"content-length"] == str(len(body)).encode()
    assert headers_of(start)[b"etag"] == b'"abc"'  # the same script for every page: the tag stays valid


def test_a_browser_that_takes_gzip_gets_the_page_compressed_again():
    inner = inner_app(chunks=3)
    start, body = call(hinted(inner), "/review", gzip_ok=True)
    assert b"accept-encoding" not in inner.seen[0]  # Streamlit was asked for the page uncompressed
    headers = headers_of(start)
    assert headers[b"content-encoding"] == b"gzip"
    assert headers[b"content-length"] == str(len(body)).encode()
    assert gzip.decompress(body) == with_script(PAGE)


@pytest.mark.parametrize("path", ["/", "/review/_stcore/health", "/_stcore/host-config", "/static/js/index.js",
                                  "/media/abc.mp4", "/nowhere", "/review/more"])
def test_other_addresses_pass_untouched(path):
    inner = inner_app()
    start, body = call(hinted(inner), path, gzip_ok=True)
    assert gzip.decompress(body) == PAGE  # Streamlit's own (compressed) answer, byte for byte
    assert inner.seen[0][b"accept-encoding"] == b"gzip, deflate, br"


def test_a_post_and_a_non_html_answer_pass_untouched():
    _, body = call(hinted(inner_app()), "/review", method="POST")
    assert body == PAGE
    start, body = call(hinted(inner_app(b'{"a": 1}', content_type=b"application/json")), "/review")
    assert body == b'{"a": 1}' and headers_of(start)[b"content-length"] == b"8"


def test_a_not_modified_answer_passes_untouched():
    start, body = call(hinted(inner_app(b"", content_type=b"", status=304)), "/review")
    assert start["status"] == 304 and body == b""


def test_pages_are_found_below_the_base_url_path_and_the_mount_point():
    assert page_path("/dailies/review", "", "dailies") == "review"
    assert page_path("/dailies/review/", "", "/dailies/") == "review"
    assert page_path("/dailies", "", "dailies") == ""
    assert page_path("/st/review", "/st", "") == "review"
    assert page_path("/review", "", "dailies") == "review"  # not below the base: as the server saw it
    # Under a base URL path, the base itself is the root page, even where it shares a page's name.
    _, body = call(hinted(inner_app(), base="review"), "/review")
    assert body == PAGE
    _, body = call(hinted(inner_app(), base="review"), "/review/tasks")
    assert body == with_script(PAGE)


def test_a_page_without_a_head_is_left_as_it_is():
    assert with_script(b"<html><body>plain</body></html>") == b"<html><body>plain</body></html>"
