"""A new session on a page below the root connects to the server on its first try (the server-address
hint, dashboard/server_address.py): no request to `/<page>/_stcore/...`, which Streamlit alone makes
first and answers with a 404 and a 100 ms wait; and the hint's script names the parent of whatever
address the browser shows, so a proxy's prefix is kept."""

from __future__ import annotations

import pytest

from dailies.launcher import dashboard_env, streamlit_command
from dashboard.server_address import SCRIPT
from tests.support.servers import free_port

from .conftest import running_process
from .ui import open_page

pytestmark = [pytest.mark.browser]


def server_requests(tab) -> list[str]:
    """Paths of the page's requests to Streamlit's server endpoints and its WebSocket, in order."""
    seen: list[str] = []
    tab.on("request", lambda request: "/_stcore/" in request.url and seen.append(request.url.split("/", 3)[3]))
    tab.on("websocket", lambda socket: seen.append(socket.url.split("/", 3)[3]))
    return seen


@pytest.mark.parametrize("path", ["/review", "/settings", "/tasks?task=cgt-20260101000000-nope1", "/"])
def test_a_new_session_probes_the_server_once_at_its_root(page, product, path):
    seen = server_requests(page)
    open_page(page, product, path)
    assert page.locator("[data-testid=stHeading]").first.is_visible()
    assert [p for p in seen if p.startswith("_stcore/")] == seen, seen  # nothing below the page's path
    assert seen[:3] == ["_stcore/health", "_stcore/host-config", "_stcore/stream"], seen
    assert seen.count("_stcore/health") == 1, seen


def test_below_a_base_url_path_a_page_probes_the_base_once(page, product, tmp_path, monkeypatch):
    port = free_port()
    for name, value in dashboard_env({}, product.api_url, product.api_key, tmp_path, team=False).items():
        monkeypatch.setenv(name, value)
    command = [*streamlit_command(port), "--server.baseUrlPath", "team"]
    with running_process(command, tmp_path / "dashboard.log", f"http://127.0.0.1:{port}/team/_stcore/health"):
        seen = server_requests(page)
        page.goto(f"http://127.0.0.1:{port}/team/review")
        page.locator("[data-testid=stHeading]").filter(has_text="Review").wait_for()
    assert seen[:3] == ["team/_stcore/health", "team/_stcore/host-config", "team/_stcore/stream"], seen
    assert not [p for p in seen if p.startswith("team/review/")], seen


@pytest.mark.parametrize(("address", "base"), [("http://dailies.test/review", "http://dailies.test/"),
                                               ("http://dailies.test/team/review/", "http://dailies.test/team/"),
                                               ("http://dailies.test/team/tasks?task=x", "http://dailies.test/team/")])
def test_the_hint_names_the_parent_of_the_address_shown(page, address, base):
    page.route("http://dailies.test/**", lambda route: route.fulfill(
        content_type="text/html", body=f"<html><head>{SCRIPT}</head><body></body></html>"))
    page.goto(address)
    assert page.evaluate("window.__streamlit.BACKEND_BASE_URL") == base
