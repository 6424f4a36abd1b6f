"""The client's notification calls: targets typed, a happening told, and a service without
notifications (the real Ark) an `UnsupportedEndpointError`, never a "not found" of a target."""

from __future__ import annotations

import json

import pytest

from dailies.client import NotFoundError, UnsupportedEndpointError
from dailies.spec.models import NotificationTarget

from .client_fakes import ScriptedServer, error_body, reply

OWN = "http://127.0.0.1:8000/dailies/v1/notifications"
TARGET = {"id": "nt-1", "kind": "email", "address": "ana@studio.example", "events": ["mention"], "owner": "Ana"}


def test_targets_are_listed_added_and_removed_typed(make_client):
    server = ScriptedServer(reply(200, {"targets": [TARGET], "email": True, "events": ["mention"], "kinds": ["email"]}),
                            reply(201, TARGET), reply(200, {"id": "nt-1", "deleted": True}))
    client = make_client(server)
    listed = client.notification_targets()
    assert listed.email and listed.targets == [NotificationTarget(**TARGET)]
    added = client.add_notification_target("email", "ana@studio.example", ("mention",), owner="Ana")
    assert added.owner == "Ana"
    client.remove_notification_target("nt-1")
    assert [(r.method, str(r.url)) for r in server.requests] == [
        ("GET", f"{OWN}/targets"), ("POST", f"{OWN}/targets"), ("DELETE", f"{OWN}/targets/nt-1")]
    assert json.loads(server.requests[1].content) == {"kind": "email", "address": "ana@studio.example",
                                                      "events": ["mention"], "owner": "Ana"}


def test_a_happening_is_told_and_a_service_without_notifications_is_unsupported(make_client):
    server = ScriptedServer(reply(200, {"reached": 2}), reply(404, error_body("NotFound", "NotFound")))
    client = make_client(server)
    assert client.notify({"kind": "comment", "task_id": "cgt-1", "text": "@Ana"}) == 2
    with pytest.raises(UnsupportedEndpointError) as raised:
        client.notify({"kind": "comment", "task_id": "cgt-1", "text": "@Ana"})
    assert isinstance(raised.value, NotFoundError)


def test_removing_a_target_the_project_does_not_have_is_not_found(make_client):
    server = ScriptedServer(reply(404, error_body("NotFound", "NotFound")))
    with pytest.raises(NotFoundError) as raised:
        make_client(server).remove_notification_target("nt-gone")
    assert not isinstance(raised.value, UnsupportedEndpointError)
