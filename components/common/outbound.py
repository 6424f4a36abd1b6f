"""Where a shared dashboard's server may send requests on a visitor's behalf.

A visitor of a shared dashboard (team mode, or sign-in) may type any base URL in Settings, and the
dashboard's server then lists, creates and downloads results from there: a service the visitor runs
could answer with a result URL on an address only the server reaches (a cloud's metadata service, an
internal host, another port of this machine), and the server would fetch it and hand the bytes back
as a kept copy. So on a shared dashboard:

- trusted are exact origins (scheme, host and port), never a host on any port: the operator's service
  (the configured base URL's origin) and the origins in `DAILIES_DASHBOARD_TRUSTED_HOSTS` (its bucket's
  endpoint on a private network, say), with whatever their results link to;
- any other base URL must be a public host, and every request of its connection (each redirect too)
  goes through a transport that resolves the host once, refuses loopback, private, link-local and
  reserved addresses, and connects to the very address it checked (`netguard.pinned`): a name that
  answers otherwise on a second lookup (DNS rebinding) cannot turn the connection inward.

`DAILIES_DASHBOARD_TRUSTED_HOSTS` is a comma-separated list of origins: `https://minio.internal:9000`
is that scheme, host and port; a scheme without a port means its default port; a bare host
(`minio.internal`) means http on 80 and https on 443; a host with a port and no scheme
(`minio.internal:9000`) means http and https on that port.

A single-user dashboard is its operator's own: nothing is refused there.
"""

from __future__ import annotations

import os

import httpx

from dailies.client import environment_defaults
from dailies.config import current
from dailies.netguard import NetguardError, check_public_host, pinned

TRUSTED_HOSTS_ENV = "DAILIES_DASHBOARD_TRUSTED_HOSTS"

_DEFAULT_PORTS = {"http": 80, "https": 443}

# (scheme, host, port), lower-case, the port always given.
Origin = tuple[str, str, int]


def origin_of(url: str) -> Origin | None:
    """The origin of an http(s) URL, its default port filled in; None for anything else."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, TypeError, ValueError):
        return None
    scheme, host = parsed.scheme.lower(), (parsed.host or "").lower()
    if scheme not in _DEFAULT_PORTS or not host:
        return None
    return scheme, host, parsed.port or _DEFAULT_PORTS[scheme]


def _listed(entry: str) -> list[Origin]:
    """The origins one entry of the operator's list stands for (none when it does not parse)."""
    entry = entry.strip()
    if not entry:
        return []
    if "://" in entry:
        found = origin_of(entry)
        return [found] if found is not None else []
    found = origin_of(f"http://{entry}")
    if found is None:
        return []
    _, host, _ = found
    explicit = httpx.URL(f"http://{entry}").port
    if explicit is None:
        return [("http", host, 80), ("https", host, 443)]
    return [("http", host, explicit), ("https", host, explicit)]


def trusted_origins() -> frozenset[Origin]:
    """The configured service's origin and the operator's list."""
    configured = origin_of(environment_defaults(os.environ)[0])
    listed = [o for entry in current().dailies_dashboard_trusted_hosts.split(",") for o in _listed(entry)]
    return frozenset(o for o in (configured, *listed) if o is not None)


def is_trusted(url: str) -> bool:
    found = origin_of(url)
    return found is not None and found in trusted_origins()


def _refusal(exc: NetguardError) -> str:
    return (f"{exc}: a shared dashboard contacts only public hosts, its own service's origin and the origins "
            f"in {TRUSTED_HOSTS_ENV}")


def address_problem(url: str) -> str | None:
    """Why a shared dashboard's server will not contact `url` for a visitor, or None."""
    if is_trusted(url):
        return None
    try:
        check_public_host(url, allow_loopback=False, allow_private=False)
    except NetguardError as exc:
        return _refusal(exc)
    return None


class PublicOnlyTransport(httpx.BaseTransport):
    """Checks every request's host and sends it to the address checked (redirects included: httpx
    sends each hop through the transport)."""

    def __init__(self, inner: httpx.BaseTransport | None = None) -> None:
        self.inner = inner or httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if is_trusted(str(request.url)):
            return self.inner.handle_request(request)
        timeout = (request.extensions.get("timeout") or {}).get("connect")
        try:
            target = pinned(str(request.url), allow_loopback=False, allow_private=False, lookup_timeout=timeout)
        except NetguardError as exc:
            raise httpx.ConnectError(f"refused: {_refusal(exc)}", request=request) from exc
        headers = request.headers.copy()
        headers.update(target.headers)  # the host's name for the Host header; the URL names the address
        sent = httpx.Request(request.method, target.url, headers=headers, stream=request.stream,
                             extensions={**request.extensions, **target.extensions})
        # httpx sets the response's request back to the original: redirects are resolved against the name.
        return self.inner.handle_request(sent)

    def close(self) -> None:
        self.inner.close()


def transport_for(base_url: str, shared: bool) -> httpx.BaseTransport | None:
    """The transport of a connection's client: None (httpx's own) unless a shared dashboard's visitor
    chose a base URL outside the trusted origins. (httpx takes no proxy from the environment for a
    client given a transport, so a guarded connection goes where the guard checked.)"""
    if not shared or is_trusted(base_url):
        return None
    return PublicOnlyTransport()


def browser_url(url: str | None, data: bool = False) -> str | None:
    """`url` when it is an absolute http(s) URL (`data`: or a data: URL), else None. Streamlit's
    `st.video` and `st.image` read any other string as a path on the server and serve that file, so a
    URL a service handed out is drawn only through this."""
    if not url:
        return None
    scheme = url.split(":", 1)[0].lower() if ":" in url else ""
    if scheme in _DEFAULT_PORTS and url[len(scheme):].startswith("://") and origin_of(url) is not None:
        return url
    if data and scheme == "data":
        return url
    return None
