"""The address guard. Only IP literals are resolved (getaddrinfo answers those without DNS); host
names are tested through a stand-in resolver."""

from __future__ import annotations

import socket

import pytest

from dailies.netguard import BlockedAddress, HostLookupError, check_public_host


@pytest.mark.parametrize(
    ("url", "kind"),
    [
        ("http://10.0.0.1/a.png", "private"),
        ("http://192.168.1.1/", "private"),
        ("https://172.16.5.4:8443/x", "private"),
        ("http://[fd00::1]/", "private"),
        ("http://169.254.1.1/", "link-local"),
        ("http://169.254.169.254/latest/meta-data/", "link-local"),
        ("http://[fe80::1]/", "link-local"),
        ("http://127.0.0.1/", "loopback"),
        ("http://127.8.9.10:9000/", "loopback"),
        ("http://[::1]:8080/", "loopback"),
        ("http://224.0.0.1/", "multicast"),
        ("http://0.0.0.0/", "unspecified"),
        ("http://[::]/", "unspecified"),
        ("http://240.0.0.1/", "reserved"),
        ("http://100.64.0.1/", "not globally routable"),
        ("http://[::ffff:10.0.0.1]/", "private"),
    ],
)
def test_non_public_addresses_are_blocked(url: str, kind: str) -> None:
    with pytest.raises(BlockedAddress, match=kind):
        check_public_host(url, allow_loopback=False)


def test_blocked_address_is_a_value_error_with_a_clear_message() -> None:
    # An address literal is judged before any DNS lookup, so the message names it as such.
    with pytest.raises(ValueError, match=r"host '10\.0\.0\.1' is a private address, which is not allowed"):
        check_public_host("http://10.0.0.1/", allow_loopback=False)


@pytest.mark.parametrize("url", ["http://127.0.0.1:8000/x", "http://[::1]/"])
def test_loopback_passes_only_when_allowed(url: str) -> None:
    check_public_host(url, allow_loopback=True)
    with pytest.raises(BlockedAddress):
        check_public_host(url, allow_loopback=False)


def test_private_passes_only_when_allowed_but_link_local_never() -> None:
    check_public_host("http://10.0.0.1/", allow_loopback=False, allow_private=True)
    with pytest.raises(BlockedAddress, match="link-local"):
        check_public_host("http://169.254.169.254/", allow_loopback=True, allow_private=True)
    with pytest.raises(BlockedAddress, match="loopback"):
        check_public_host("http://127.0.0.1/", allow_loopback=False, allow_private=True)


@pytest.mark.parametrize("url", ["http://93.184.216.34/a.png", "https://8.8.8.8:443/", "http://[2001:4860:4860::8888]/"])
def test_public_literals_pass(url: str) -> None:
    check_public_host(url, allow_loopback=False)


def test_every_resolved_address_is_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    def resolve(host, port, *args, **kwargs):
        assert host == "images.example"
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("93.184.216.34", port)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.1.2.3", port)),
        ]

    monkeypatch.setattr(socket, "getaddrinfo", resolve)
    with pytest.raises(BlockedAddress, match=r"'images\.example' resolves to a private address \(10\.1\.2\.3\)"):
        check_public_host("https://images.example/cat.png", allow_loopback=False)


def test_unresolvable_host_and_missing_host(monkeypatch: pytest.MonkeyPatch) -> None:
    def fail(*args, **kwargs):
        raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")

    monkeypatch.setattr(socket, "getaddrinfo", fail)
    with pytest.raises(HostLookupError, match="does not resolve"):
        check_public_host("http://no-such-host.example/", allow_loopback=False)
    with pytest.raises(HostLookupError, match="no host"):
        check_public_host("file:///etc/passwd", allow_loopback=True)
