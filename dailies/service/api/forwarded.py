"""The whole address a client used, when a proxy stands between it and `dailies serve`.

Result URLs (and every other absolute URL of an answer) are made from the request's own address
(`routes.base_url`: scheme, Host, path). Behind a proxy, that is the proxy's connection to us:
`http://` and the proxy's idea of our host. A proxy says what the client used in X-Forwarded-Proto,
X-Forwarded-For and X-Forwarded-Host; they are believed only from the addresses `dailies serve
--forwarded-allow-ips` names (DAILIES_FORWARDED_ALLOW_IPS; else uvicorn's FORWARDED_ALLOW_IPS, else
127.0.0.1 and ::1), since anyone else could send them too.

uvicorn's ProxyHeadersMiddleware applies X-Forwarded-Proto (the scheme) and X-Forwarded-For (the
client), and not X-Forwarded-Host; `ForwardedHost` does, for the same addresses, and runs outside
uvicorn's middleware (which replaces the peer's address with the client's it was told about).
"""

from __future__ import annotations

import ipaddress
import re

from starlette.types import ASGIApp, Receive, Scope, Send

# A host name, an IPv4 address or a bracketed IPv6 address, and a port: nothing a URL would read
# as more than its authority (no user info, path, query, spaces or control characters).
_HOST = re.compile(rb"(?:[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?|\[[0-9A-Fa-f:.]+\])(?::[0-9]{1,5})?")


class TrustedProxies:
    """The addresses of --forwarded-allow-ips: "*" (any), or a comma-separated list of IP addresses
    and networks (10.0.0.0/8); anything else is compared as it is written (a Unix socket's name)."""

    def __init__(self, allowed: str | list[str]) -> None:
        items = [item.strip() for item in (allowed.split(",") if isinstance(allowed, str) else allowed)]
        self.any = "*" in items
        self.literals: set[str] = set()
        self.networks: list[ipaddress.IPv4Network | ipaddress.IPv6Network] = []
        for item in filter(None, items):
            try:
                self.networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                self.literals.add(item)

    def __contains__(self, host: object) -> bool:
        if self.any:
            return True
        if not isinstance(host, str):
            return False
        if host in self.literals:
            return True
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(address in network for network in self.networks)


def forwarded_host(headers: list[tuple[bytes, bytes]]) -> bytes | None:
    """The host[:port] a trusted proxy gives in X-Forwarded-Host: of several (a list, or the header
    repeated), the last, the one the nearest proxy set; None when there is none or it is not a host."""
    values = [value for name, value in headers if name == b"x-forwarded-host"]
    if not values:
        return None
    last = values[-1].split(b",")[-1].strip()
    return last if _HOST.fullmatch(last) else None


class ForwardedHost:
    """An ASGI middleware: a request from a trusted proxy with a valid X-Forwarded-Host has that as its
    Host header. Put outside uvicorn's ProxyHeadersMiddleware (see the module's docstring)."""

    def __init__(self, app: ASGIApp, allowed: str | list[str]) -> None:
        self.app = app
        self.trusted = TrustedProxies(allowed)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] in ("http", "websocket"):
            client = scope.get("client")
            if client and client[0] in self.trusted:
                host = forwarded_host(scope["headers"])
                if host is not None:
                    headers = [(name, value) for name, value in scope["headers"] if name != b"host"]
                    scope = {**scope, "headers": [(b"host", host), *headers]}
        await self.app(scope, receive, send)
