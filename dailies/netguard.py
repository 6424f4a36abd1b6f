"""Refuse URLs whose host resolves to an address the service must not reach.

The service fetches URLs that strangers give it (content items) and posts to URLs they name
(callbacks). Without a guard, `http://169.254.169.254/` or `http://10.0.0.5/admin` turns the
service into a proxy into its own network (server-side request forgery). Every resolved address
of the host is checked, since a name may resolve to several and the connection may use any.

Error tree:

    ValueError
     +-- NetguardError
          +-- BlockedAddress    a resolved address is loopback, private, link-local, ...
          +-- HostLookupError   the URL has no host, or the host does not resolve

A check alone and a later connection would resolve the name twice, and a DNS server that answers
differently the second time (DNS rebinding) would send the connection elsewhere: `pinned` checks a
URL and says how to send the request to the very address checked (the host's name kept for the
`Host` header and the TLS certificate).
"""

from __future__ import annotations

import ipaddress
import socket
from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from dataclasses import dataclass, field
from urllib.parse import urlsplit

import httpx

# The classification of addresses is a rule of the contract, shared with the checks at create
# that need no DNS (`dailies.spec.urls`); this module adds the resolving.
from .spec.urls import IPAddress, blocked_reason, canonical_host, host_reason, literal_address

__all__ = ["BlockedAddress", "HostLookupError", "NetguardError", "Pinned", "blocked_reason", "check_public_host",
           "pinned", "resolve"]

_DEFAULT_PORTS = {"http": 80, "https": 443}


class NetguardError(ValueError):
    """A URL the guard refuses."""


class BlockedAddress(NetguardError):
    """The host resolves to an address that is not allowed (loopback, private, link-local, ...)."""


class HostLookupError(NetguardError):
    """The URL has no host, or its host name does not resolve."""


class HostLookupTimeout(HostLookupError):
    """The host's name servers did not answer within the time given: nothing is known of the host yet."""


# Lookups with a time limit run here: getaddrinfo cannot be interrupted, and a name server that does
# not answer holds its caller for the resolver's own timeouts and retries (tens of seconds). A caller
# with a deadline waits no longer than it; the lookup ends in its thread by itself.
_lookups = ThreadPoolExecutor(max_workers=4, thread_name_prefix="dailies-lookup")


def resolve(host: str, port: int | None = None, timeout: float | None = None) -> list[IPAddress]:
    """Every address `host` resolves to (an IP literal resolves to itself, without DNS); within
    `timeout` seconds when given, else `HostLookupError`."""
    try:
        if timeout is None:
            infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
        else:
            lookup = _lookups.submit(socket.getaddrinfo, host, port, type=socket.SOCK_STREAM)
            try:
                infos = lookup.result(timeout=max(timeout, 0.0))
            except FutureTimeout:
                raise HostLookupTimeout(f"host {host!r} did not resolve within {timeout:g} s") from None
    except (socket.gaierror, UnicodeError) as exc:
        raise HostLookupError(f"host {host!r} does not resolve: {exc}") from exc
    addresses: list[IPAddress] = []
    for _family, _type, _proto, _canonname, sockaddr in infos:
        # Strip an IPv6 zone ("fe80::1%eth0") which ip_address does not parse.
        address = ipaddress.ip_address(str(sockaddr[0]).split("%", 1)[0])
        if address not in addresses:
            addresses.append(address)
    return addresses


def check_public_host(url: str, allow_loopback: bool, allow_private: bool = False,
                      lookup_timeout: float | None = None) -> list[IPAddress]:
    """Raise `BlockedAddress` unless every address the URL's host resolves to may be reached; return
    those addresses.

    Loopback passes only with `allow_loopback`, private ranges only with `allow_private`;
    link-local, multicast, reserved and unspecified addresses never pass. Raises
    `HostLookupError` when the URL has no host or the host does not resolve.
    """
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError as exc:  # an unclosed IPv6 bracket
        raise HostLookupError(f"URL cannot be parsed: {exc}") from exc
    if not host:
        raise HostLookupError(f"URL has no host: {url!r}")
    try:
        port = parts.port or _DEFAULT_PORTS.get(parts.scheme.lower())
    except ValueError as exc:
        raise HostLookupError(f"URL has an invalid port: {url!r}") from exc
    # Names that always mean a refused place (localhost, *.internal) are refused before any DNS.
    canonical = canonical_host(url)
    named = host_reason(canonical, allow_loopback, allow_private) if canonical else None
    if canonical and named is not None:
        kind = "name" if literal_address(canonical) is None else "address"
        article = "an" if named[0] in "aeiou" else "a"
        raise BlockedAddress(f"host {host!r} is {article} {named} {kind}, which is not allowed")
    addresses = resolve(host, port, lookup_timeout)
    for address in addresses:
        reason = blocked_reason(address, allow_loopback=allow_loopback, allow_private=allow_private)
        if reason is not None:
            raise BlockedAddress(f"host {host!r} resolves to a {reason} address ({address}), which is not allowed")
    return addresses


@dataclass(frozen=True)
class Pinned:
    """A request to send to a checked address: `url` names the address instead of the host, the
    `Host` header and (https) the TLS server name keep the host's name."""

    url: str
    headers: dict[str, str] = field(default_factory=dict)
    extensions: dict[str, str] = field(default_factory=dict)


def pinned(url: str, allow_loopback: bool, allow_private: bool = False,
           lookup_timeout: float | None = None) -> Pinned:
    """`check_public_host`, and the request to the first address checked (httpx sends an
    `sni_hostname` extension's name in TLS and checks the certificate against it)."""
    addresses = check_public_host(url, allow_loopback, allow_private, lookup_timeout)
    target = httpx.URL(url)
    if literal_address(target.host) is not None:
        return Pinned(url)
    headers = {"Host": target.netloc.decode("ascii")}
    extensions = {"sni_hostname": target.host} if target.scheme == "https" else {}
    return Pinned(str(target.copy_with(host=str(addresses[0]))), headers, extensions)
