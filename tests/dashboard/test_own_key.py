"""The dashboard's own key (`ARK_API_KEY`) goes to the base URL it came with (`ARK_BASE_URL`, or the
default) and nowhere else: a visitor of a dashboard without team mode who saves another address in
Settings, without a key, gets no key there (the pages ask `/dailies/v1/service` and `/dailies/v1/me` of
that address at once, and with sign-in but no team mode anyone the provider accepts could save theirs)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from streamlit.testing.v1 import AppTest

from dailies.api_keys import mask
from tests.support.live_service import free_port

ROOT = Path(__file__).resolve().parents[2]
OWN_KEY = "dk-the-operators-own-key-0123456789"


@contextmanager
def recording_service() -> Iterator[tuple[str, list[str]]]:
    """A service on 127.0.0.1 that answers 404 to everything; its base URL and each request's
    path and Authorization header."""
    seen: list[str] = []

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - http.server's name
            seen.append(f"{self.path} {self.headers.get('Authorization') or '-'}")
            self.send_response(404)
            self.send_header("content-type", "application/json")
            self.send_header("content-length", "2")
            self.end_headers()
            self.wfile.write(b"{}")

        do_POST = do_GET

        def log_message(self, *args) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/api/v3", seen
    finally:
        server.shutdown()
        server.server_close()


def text(at: AppTest) -> str:
    return "\n".join(str(e.value) for kind in (at.markdown, at.success, at.warning, at.error) for e in kind)


def test_a_visitors_address_never_gets_the_dashboards_own_key(monkeypatch, tmp_path):
    own = f"http://127.0.0.1:{free_port()}/api/v3"  # the dashboard's own service (not running here)
    monkeypatch.setenv("ARK_BASE_URL", own)
    monkeypatch.setenv("ARK_API_KEY", OWN_KEY)
    monkeypatch.setenv("DAILIES_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("DAILIES_DASHBOARD_TEAM", raising=False)
    with recording_service() as (visitor, seen):
        at = AppTest.from_file(str(ROOT / "dashboard" / "views" / "settings.py"), default_timeout=30).run()
        assert f"`{mask(OWN_KEY)}`" in text(at)  # the dashboard's own connection
        at.text_input[0].input(visitor)
        at.button[0].click()  # Save, with the key field left empty
        at.run()
        assert not at.exception
        assert not [request for request in seen if OWN_KEY in request], seen
        assert "Saved, with no key for this address" in text(at)
        assert f"`{mask(OWN_KEY)}`" not in text(at)
        at.button(key="settings.forget").click().run()  # back to the dashboard's own address: its key again
        assert f"`{mask(OWN_KEY)}`" in text(at)
