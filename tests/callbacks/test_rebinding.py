"""A callback URL whose name answers a public address to the guard and loopback after it (DNS
rebinding, a TTL-0 name): the signed POST goes to the address the guard checked, so the loopback
service behind the second answer is never reached (`allow_loopback_callbacks` is off)."""

from __future__ import annotations

import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from dailies.service.app import create_app
from dailies.service.settings import Settings

from ..waiting import wait_for

MODEL = "doubao-seedance-2-0-260128"


def test_a_name_that_answers_inward_after_the_check_never_gets_the_callback(tmp_path, monkeypatch):
    reached: list[str] = []

    class Inside(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            reached.append(self.path)
            self.rfile.read(int(self.headers["content-length"]))
            self.send_response(200)
            self.send_header("content-length", "0")
            self.end_headers()

        def log_message(self, *args) -> None:
            pass

    inside = ThreadingHTTPServer(("127.0.0.1", 0), Inside)
    threading.Thread(target=inside.serve_forever, daemon=True).start()
    port = inside.server_address[1]
    real, lookups = socket.getaddrinfo, []

    def rebinding(host, *args, **kwargs):
        if host != "hooks.rebind.example":
            return real(host, *args, **kwargs)
        lookups.append(host)
        # The create's check and the delivery's check get a public address; any later lookup (a
        # connection's own), loopback.
        address = "93.184.216.34" if len(lookups) <= 2 else "127.0.0.1"
        return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    app = create_app(Settings(data_dir=tmp_path, api_keys={"k": "alpha"}, workers=0, log_requests=False,
                              allow_loopback_callbacks=False, callback_timeout=2, poll_interval=0.02),
                     start_background=False)
    services = app.state.services
    try:
        row = services.tasks.create("alpha", {"model": MODEL, "content": [{"type": "text", "text": "a fox"}],
                                              "callback_url": f"http://hooks.rebind.example:{port}/admin"})
        services.callbacks.start()
        [attempt] = wait_for(lambda: [e for e in services.callbacks.log_for(row.id) if not e.get("pending")],
                             "the first delivery attempt", 60)
    finally:
        services.stop()
        inside.shutdown()
        inside.server_close()
    # Sent to the public address checked (unreachable here), never looked up again.
    assert reached == [] and attempt["status_code"] is None
    assert attempt["error"].startswith(("ConnectError", "timed out")), attempt["error"]
    assert len(lookups) == 2
