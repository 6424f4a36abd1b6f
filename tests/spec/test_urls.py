"""What a URL in a request may be (dailies.spec.urls): the scheme and shape of media and callback
URLs, and hosts judged from their text alone, with no DNS."""

from __future__ import annotations

import ipaddress

import pytest

from dailies.spec import limits as L
from dailies.spec.urls import (
    callback_url_problem,
    canonical_host,
    check_media_hosts,
    host_problem,
    ipv4_any_form,
    literal_address,
    media_url_problem,
)
from dailies.spec.validation import check_create_body

from .builders import V20, audio, body, image, text, video

PNG_DATA = "data:image/png;base64,iVBORw0KGgo="

# ---------- media URLs: scheme and shape ----------


@pytest.mark.parametrize(("kind", "url"), [
    ("image_url", "https://example.com/cat.png"),
    ("image_url", "HTTP://EXAMPLE.COM/CAT.PNG"),
    ("image_url", "http://example.com:8080/a?b=c#d"),
    ("image_url", "https://例え.jp/画像.png"),
    ("image_url", PNG_DATA),
    ("image_url", "data:image/jpeg;name=a.jpg;base64,/9j/4AAQ"),
    ("image_url", "asset://asset-20250101-abcde"),
    ("video_url", "https://example.com/clip.mp4"),
    ("video_url", "data:video/mp4;base64,AAAA"),
    ("video_url", "asset://clip.v2"),
    ("audio_url", "data:audio/wav;base64,UklGRg=="),
    ("audio_url", "https://example.com/voice.mp3"),
])
def test_accepted_media_urls(kind, url):
    assert media_url_problem(url, kind, "content[1].x.url") is None


@pytest.mark.parametrize(("kind", "url", "fragment"), [
    ("image_url", "javascript:alert(1)", "the scheme javascript:"),
    ("image_url", "file:///etc/passwd", "the scheme file:"),
    ("image_url", "ftp://example.com/cat.png", "the scheme ftp:"),
    ("image_url", "gopher://example.com/", "the scheme gopher:"),
    ("image_url", "//example.com/cat.png", "has no scheme"),
    ("image_url", "example.com/cat.png", "has no scheme"),
    ("image_url", " https://example.com/cat.png", "has no scheme"),
    ("image_url", "data:text/html;base64,PHNjcmlwdD4=", "data URL of 'text/html'"),
    ("image_url", "data:text/html,<script>alert(1)</script>", "data URL of 'text/html'"),
    ("image_url", "data:;base64,iVBORw0KGgo=", "data URL of 'no type'"),
    ("image_url", "data:image/png,rawbytes", "without ';base64'"),
    ("image_url", "data:image/png;base64", "not a data URL of the form"),
    ("image_url", "DATA:image/png;base64,iVBORw0KGgo=", "lower case"),
    ("image_url", "data:video/mp4;base64,AAAA", "must hold an image"),
    ("video_url", PNG_DATA, "must hold a video"),
    ("audio_url", "data:video/mp4;base64,AAAA", "must hold an audio"),
    ("image_url", "asset://", "asset id ''"),
    ("image_url", "asset://../../etc/passwd", "asset id"),
    ("image_url", "asset://a/b", "asset id"),
    ("image_url", "ASSET://abc", "asset://<ASSET_ID>"),
    ("image_url", "http://", "has no host"),
    ("image_url", "http:///path", "has no host"),
    ("image_url", "http://example.com:99999/", "not a valid URL"),
    ("image_url", "http://example.com:port/", "not a valid URL"),
    ("image_url", "http://[::1/", "not a valid URL"),
    ("image_url", "http://example.com/a\nb", "control characters"),
    ("image_url", "http://example.com/\x00", "control characters"),
    ("image_url", "https://example.com/" + "a" * L.URL_MAX_CHARS, "characters long"),
])
def test_refused_media_urls_name_the_field(kind, url, fragment):
    problem = media_url_problem(url, kind, "content[1].image_url.url")
    assert problem is not None and problem.path == "content[1].image_url.url"
    assert fragment in problem.message


def test_a_refused_scheme_names_what_is_accepted():
    problem = media_url_problem("javascript:alert(1)", "image_url", "content[0].image_url.url")
    assert "http(s) URL" in problem.message and "data:image/<format>;base64" in problem.message
    assert "asset://<ASSET_ID>" in problem.message


def test_a_huge_data_url_is_judged_by_its_header_only():
    url = "data:image/png;base64," + "A" * (8 * L.MB)
    assert media_url_problem(url, "image_url", "content[0].image_url.url") is None


# ---------- callback URLs ----------


@pytest.mark.parametrize("url", ["https://example.com/hook", "http://127.0.0.1:9/hook", "http://10.0.0.5/hook"])
def test_callback_shape_accepts_http_whatever_the_host(url):
    # Where the host points is the service's to judge, with DNS and its settings.
    assert callback_url_problem(url) is None


@pytest.mark.parametrize(("url", "fragment"), [
    ("ftp://example.com/hook", "the scheme ftp:"),
    ("file:///etc/passwd", "the scheme file:"),
    ("javascript:alert(1)", "the scheme javascript:"),
    ("127.0.0.1:9/hook", "http or https"),
    ("example.com/hook", "has no scheme"),
    ("http://", "has no host"),
    ("http://example.com:0x50/", "not a valid URL"),
    ("http://example.com/\r\nX-Injected: 1", "control characters"),
])
def test_callback_shape_refuses(url, fragment):
    problem = callback_url_problem(url)
    assert problem is not None and problem.path == "callback_url" and fragment in problem.message


# ---------- the rules every client runs ----------


@pytest.mark.parametrize(("content", "fields", "path"), [
    ([text(), image(url="javascript:alert(1)")], {}, "content[1].image_url.url"),
    ([text(), image("reference_image"), video(url="file:///etc/passwd")], {}, "content[2].video_url.url"),
    ([text(), image("reference_image"), audio(url="ftp://h/a.mp3")], {}, "content[2].audio_url.url"),
    ([text()], {"callback_url": "ftp://example.com/hook"}, "callback_url"),
])
def test_check_create_body_runs_the_url_rules(content, fields, path):
    problems = check_create_body(body(V20, content, **fields)).problems
    assert path in [p.path for p in problems]


def test_check_create_body_leaves_hosts_to_the_service():
    checked = check_create_body(body(V20, [text(), image(url="http://169.254.169.254/latest/meta-data")]))
    assert checked.ok


# ---------- hosts, without DNS ----------


@pytest.mark.parametrize(("spelling", "address"), [
    ("127.0.0.1", "127.0.0.1"),
    ("2130706433", "127.0.0.1"),
    ("0x7f000001", "127.0.0.1"),
    ("0x7f.1", "127.0.0.1"),
    ("127.1", "127.0.0.1"),
    ("0177.0.0.01", "127.0.0.1"),
    ("169.254.43518", "169.254.169.254"),
    ("0xa9.0xfe.0xa9.0xfe", "169.254.169.254"),
    ("0", "0.0.0.0"),
    ("10.0.0.5", "10.0.0.5"),
])
def test_every_spelling_of_an_ipv4_address_the_resolver_reads(spelling, address):
    assert ipv4_any_form(spelling) == ipaddress.IPv4Address(address)


@pytest.mark.parametrize("name", ["example.com", "1.2.3.4.5", "256.1.1.1", "09.1.1.1", "0x1.2.3.4.5", "1e3", ""])
def test_names_are_not_addresses(name):
    assert ipv4_any_form(name) is None


def test_literal_address_reads_ipv6_with_a_zone():
    assert literal_address("fe80::1%eth0") == ipaddress.IPv6Address("fe80::1")


@pytest.mark.parametrize(("url", "host"), [
    ("http://EXAMPLE.com./x", "example.com"),
    ("http://user:pw@Example.com:80/", "example.com"),
    ("http://[::1]:8080/", "::1"),
    ("http://①②⑦.0.0.1/", "127.0.0.1"),
    ("http:///x", None),
])
def test_canonical_host(url, host):
    assert canonical_host(url) == host


REFUSED_HOSTS = [
    ("http://127.0.0.1/x.png", "loopback address"),
    ("http://127.8.9.10/x.png", "loopback address"),
    ("http://[::1]/x.png", "loopback address"),
    ("http://2130706433/x.png", "loopback address"),
    ("http://0x7f.1/x.png", "loopback address"),
    ("http://localhost/x.png", "loopback name"),
    ("http://LOCALHOST./x.png", "loopback name"),
    ("http://shop.localhost/x.png", "loopback name"),
    ("http://10.1.2.3/x.png", "private address"),
    ("http://172.16.0.1/x.png", "private address"),
    ("http://192.168.1.1/x.png", "private address"),
    ("http://[fd00::1]/x.png", "private address"),
    ("http://[::ffff:10.0.0.1]/x.png", "private address"),
    ("http://169.254.169.254/latest/meta-data/", "link-local address"),
    ("http://[fe80::1]/x.png", "link-local address"),
    ("http://224.0.0.1/x.png", "multicast address"),
    ("http://0.0.0.0/x.png", "unspecified address"),
    ("http://[::]/x.png", "unspecified address"),
    ("http://240.0.0.1/x.png", "reserved address"),
    ("http://100.64.0.1/x.png", "not globally routable address"),
    ("http://metadata.google.internal/computeMetadata/v1/", "internal name"),
    ("http://metadata/x", "internal name"),
    ("http://printer.local/x.png", "internal name"),
]


@pytest.mark.parametrize(("url", "fragment"), REFUSED_HOSTS)
def test_hosts_refused_from_their_text(url, fragment):
    problem = host_problem(url, "content[1].image_url.url", allow_loopback=False)
    assert problem is not None and problem.path == "content[1].image_url.url"
    assert fragment in problem.message


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/files/x.mp4", "http://localhost/x.png", "http://[::1]/x"])
def test_loopback_passes_when_allowed(url):
    assert host_problem(url, "w", allow_loopback=True) is None


@pytest.mark.parametrize("url", ["http://169.254.169.254/", "http://10.0.0.1/", "http://metadata.google.internal/"])
def test_allowing_loopback_allows_nothing_else(url):
    assert host_problem(url, "w", allow_loopback=True) is not None


@pytest.mark.parametrize("url", [
    "https://example.com/cat.png", "http://93.184.216.34/cat.png", "http://[2606:2800:220:1::1]/x",
    "https://does-not-resolve.invalid/x.png", PNG_DATA, "asset://abc", "javascript:alert(1)",
])
def test_public_names_and_other_schemes_are_not_judged_here(url):
    assert host_problem(url, "w", allow_loopback=False) is None


def _content(*urls: str):
    from dailies.spec.models import CreateTaskRequest

    return CreateTaskRequest.model_validate(body(V20, [text(), *[image("reference_image", u) for u in urls]])).content


def test_check_media_hosts_names_each_refused_item():
    content = _content("https://example.com/a.png", "http://10.0.0.1/b.png", "http://[::1]/c.png")
    problems = check_media_hosts(content, allow_loopback=False)
    assert [p.path for p in problems] == ["content[2].image_url.url", "content[3].image_url.url"]


def test_check_media_hosts_exempts_what_the_caller_trusts():
    own = "http://127.0.0.1:8000/files/cgt-1/video.mp4?expires=1&signature=ab"
    content = _content(own, "http://127.0.0.1:8000/other.png")
    problems = check_media_hosts(content, allow_loopback=False, trusted=lambda url: url == own)
    assert [p.path for p in problems] == ["content[2].image_url.url"]
