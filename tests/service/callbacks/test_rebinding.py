"""A callback URL whose name answers a public address to the guard and loopback after it (DNS
rebinding, a TTL-0 name): the signed POST goes to the address the guard checked, so the loopback
service behind the later answer is never reached (`allow_loopback_callbacks` is off)."""

from __future__ import annotations

from dailies.service.api.app import create_app
from dailies.service.settings import Settings
from tests.support.rebinding import rebinding_name
from tests.support.waiting import wait_for

MODEL = "doubao-seedance-2-0-260128"


def test_a_name_that_answers_inward_after_the_check_never_gets_the_callback(tmp_path, monkeypatch):
    # The create's check and the delivery's check get the public address; a connection's own
    # lookup would get loopback.
    with rebinding_name(monkeypatch, "hooks.rebind.example", public_lookups=2) as inside:
        app = create_app(Settings(data_dir=tmp_path, api_keys={"k": "alpha"}, workers=0, log_requests=False,
                                  allow_loopback_callbacks=False, callback_timeout=2, poll_interval=0.02),
                         start_background=False)
        services = app.state.services
        try:
            row = services.tasks.create("alpha", {
                "model": MODEL, "content": [{"type": "text", "text": "a fox"}],
                "callback_url": f"http://hooks.rebind.example:{inside.port}/admin"})
            services.callbacks.start()
            [attempt] = wait_for(lambda: [e for e in services.callbacks.log_for(row.id) if not e.get("pending")],
                                 "the first delivery attempt", 60)
        finally:
            services.stop()
    # Sent to the public address checked (unreachable here), never looked up again.
    assert inside.reached == [] and attempt["status_code"] is None
    assert attempt["error"].startswith(("ConnectError", "timed out")), attempt["error"]
    assert len(inside.lookups) == 2
