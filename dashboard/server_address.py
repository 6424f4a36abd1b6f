"""Tell a page below the dashboard's root where its server is, so it connects at once.

Streamlit's page does not know the address of its server: it tries the page's own path first
(`/review/_stcore/health`, a 404), waits 100 ms, then tries the parent (`/_stcore/health`), and only
then opens its WebSocket. Every new session opened on Tasks, Review, Settings or a deep link paid that
round trip and wait (bench/dashboard.py: the WebSocket opened ~110 ms later than on the root page).
Streamlit reads the address from `window.__streamlit.BACKEND_BASE_URL` when a page sets it, so this
middleware adds a line of script that sets it to the page's parent path, on the HTML of the
dashboard's own page addresses only.

The parent is taken in the browser from the address the person sees, so a reverse proxy that adds a
prefix (`/team/review`) keeps it; which addresses are pages is decided here from the path the server
sees, below `server.baseUrlPath` (the root page, and any address that is not one of the pages, keep
Streamlit's own way, which finds them on the first try).
"""

from __future__ import annotations

import gzip
from collections.abc import Callable, Iterable

# The parent of the page's path, as the browser sees it; kept beside anything else set there.
SCRIPT = ('<script>(function(){var p=location.pathname.replace(/\\/+$/,"");'
          'window.__streamlit=Object.assign({},window.__streamlit,'
          '{BACKEND_BASE_URL:location.origin+p.slice(0,p.lastIndexOf("/")+1)});})();</script>')
HEAD = b"<head>"


def page_path(path: str, root_path: str, base_url_path: str) -> str:
    """The path below the app's mount point and `server.baseUrlPath`, without slashes at its ends."""
    if root_path and path.startswith(root_path):
        path = path[len(root_path):]
    path = path.strip("/")
    base = base_url_path.strip("/")
    if base and (path == base or path.startswith(base + "/")):
        path = path[len(base):].strip("/")
    return path


def with_script(html: bytes) -> bytes:
    """`html` with the script as the first thing in its head (before Streamlit's own scripts run)."""
    at = html.find(HEAD)
    if at < 0:
        return html
    at += len(HEAD)
    return html[:at] + SCRIPT.encode() + html[at:]


def _header(headers: Iterable[tuple[bytes, bytes]], name: bytes) -> bytes:
    return next((value for key, value in headers if key.lower() == name), b"")


class ServerAddressHint:
    """ASGI middleware (outermost, so it sees Streamlit's responses before they are compressed)."""

    def __init__(self, app, page_paths: Iterable[str], base_url_path: Callable[[], str]):
        self.app = app
        self.page_paths = frozenset(path.strip("/") for path in page_paths if path.strip("/"))
        self.base_url_path = base_url_path  # read per request: Streamlit's config is set after import

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or scope["method"] != "GET" or not self._is_page(scope):
            await self.app(scope, receive, send)
            return
        accepts_gzip = b"gzip" in _header(scope["headers"], b"accept-encoding")
        # Ask Streamlit for the page uncompressed, so the script can go in; compressed again below.
        inner = dict(scope, headers=[(k, v) for k, v in scope["headers"] if k.lower() != b"accept-encoding"])
        start: dict = {}
        body = bytearray()

        async def capture(message):
            if message["type"] == "http.response.start":
                start.update(message)
                if not _header(message["headers"], b"content-type").startswith(b"text/html"):
                    start["passthrough"] = True
                    await send(message)
                return
            if start.get("passthrough"):
                await send(message)
                return
            body.extend(message.get("body", b""))
            if not message.get("more_body", False):
                await self._send_page(send, start, bytes(body), accepts_gzip)

        await self.app(inner, receive, capture)

    def _is_page(self, scope) -> bool:
        return page_path(scope["path"], scope.get("root_path", ""), self.base_url_path()) in self.page_paths

    @staticmethod
    async def _send_page(send, start: dict, html: bytes, accepts_gzip: bool) -> None:
        content = with_script(html) if html else html
        headers = [(k, v) for k, v in start["headers"] if k.lower() not in (b"content-length", b"content-encoding")]
        if accepts_gzip and content:
            content = gzip.compress(content, compresslevel=6)
            headers.append((b"content-encoding", b"gzip"))
            if not _header(headers, b"vary"):
                headers.append((b"vary", b"Accept-Encoding"))
        headers.append((b"content-length", str(len(content)).encode()))
        await send({"type": "http.response.start", "status": start["status"], "headers": headers})
        await send({"type": "http.response.body", "body": content})

