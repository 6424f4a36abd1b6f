"""Where a team dashboard's server may send requests on a visitor's behalf.

A visitor of a team dashboard may type any base URL in Settings, and the dashboard's server then
lists, creates and downloads results from there: a service the visitor runs could answer with a
result URL on an address only the server reaches (a cloud's metadata service, an internal host),
and the server would fetch it and hand the bytes back as a kept copy. So on a team dashboard:

- the operator's service (the configured base URL) and hosts named in `DAILIES_DASHBOARD_TRUSTED_HOSTS`
  (its bucket's endpoint on a private network, say) are trusted, with whatever their results link to;
- any other base URL must be a public host, and every request of its connection (each redirect
  too) goes through a transport that refuses loopback, private, link-local and reserved addresses.

A single-user dashboard is its operator's own: nothing is refused there.
"""

from __future__ import annotations

import os

import httpx

from dailies.client import environment_defaults
from dailies.netguard import NetguardError, check_public_host

TRUSTED_HOSTS_ENV = "DAILIES_DASHBOARD_TRUSTED_HOSTS"


def _host(url: str) -> str:
    try:
        return (httpx.URL(url).host or "").lower()
    except httpx.InvalidURL:
        return ""


def trusted_hosts() -> frozenset[str]:
    """The configured service's host and the operator's list (comma-separated host names)."""
    configured = _host(environment_defaults(os.environ)[0])
    listed = (h.strip().lower() for h in os.environ.get(TRUSTED_HOSTS_ENV, "").split(","))
    return frozenset(h for h in (configured, *listed) if h)


def is_trusted(url: str) -> bool:
    return _host(url) in trusted_hosts()


def address_problem(url: str) -> str | None:
    """Why a team dashboard's server will not contact `url` for a visitor, or None."""
    if is_trusted(url):
        return None
    try:
        check_public_host(url, allow_loopback=False, allow_private=False)
    except NetguardError as exc:
        return (f"{exc}: a team dashboard contacts only public hosts, its own service and the hosts in "
                f"{TRUSTED_HOSTS_ENV}")
    return None


class PublicOnlyTransport(httpx.BaseTransport):
    """Checks every request's host before `inner` sends it (redirects included: httpx sends each
    hop through the transport)."""

    def __init__(self, inner: httpx.BaseTransport | None = None) -> None:
        self.inner = inner or httpx.HTTPTransport()

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        problem = address_problem(str(request.url))
        if problem is not None:
            raise httpx.ConnectError(f"refused: {problem}", request=request)
        return self.inner.handle_request(request)

    def close(self) -> None:
        self.inner.close()


def transport_for(base_url: str, team: bool) -> httpx.BaseTransport | None:
    """The transport of a connection's client: None (httpx's own) unless a team dashboard's visitor
    chose a base URL the operator did not."""
    if not team or is_trusted(base_url):
        return None
    return PublicOnlyTransport()
