"""A guest's comment and status on a share's page reach the project's notifications (issue 39): the
share is made with the service's guest grant, the guest page (AppTest) tells the service with it, and
a Slack receiver gets "Dee (guest) commented" and "Dee (guest) set … to approved" from a live service.
A share made without a grant tells no one."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest

from components.common import notices
from dailies.client import Client
from dailies.journal import Journal, Scope
from dailies.journal.shares import ask_notice_grant
from dailies.service.callers import KeyOptions
from dailies.spec.results import VIDEO_NAME
from tests.service.callbacks.receiver import Receiver
from tests.support.live_service import start_live_service
from tests.support.waiting import wait_for

GUEST_PAGE = str(Path(__file__).resolve().parents[2] / "dashboard" / "views" / "guest.py")
HOST, ANA = "key-guest-host", "key-guest-ana"


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    folder = tmp_path_factory.mktemp("guest-notices")
    receiver = Receiver()
    service = start_live_service(folder / "service", workers=0, api_keys={HOST: "studio", ANA: "studio"},
                                 key_options={ANA: KeyOptions(name="Ana")}, notification_window=0.2,
                                 dashboard_url="http://dailies.studio.example")
    try:
        yield service, receiver
    finally:
        service.stop()
        receiver.close()


@pytest.fixture
def studio(stack, tmp_path, monkeypatch):
    service, receiver = stack
    monkeypatch.setenv("DAILIES_DATA_DIR", str(tmp_path))
    monkeypatch.setenv("DAILIES_DASHBOARD_TEAM", "1")  # guests stay guests: shares open
    monkeypatch.setenv("ARK_BASE_URL", service.base_url)  # the configured service: the dashboard may reach it
    monkeypatch.delenv("DAILIES_DATABASE_URL", raising=False)
    monkeypatch.delenv("DAILIES_STORAGE", raising=False)
    journal = Journal(tmp_path / "dashboard" / "journal.sqlite3", database_url="", storage="")
    ana = journal.scoped(Scope.of_project(service.base_url, "studio", author="Ana"))
    path = ana.keep_path("cgt-guest-1", VIDEO_NAME)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x00" * 64)
    ana.mark_kept("cgt-guest-1", VIDEO_NAME, path)
    with Client(base_url=service.base_url, api_key=HOST) as host:
        for target in host.notification_targets().targets:
            host.remove_notification_target(target.id)
        host.add_notification_target("slack", receiver.url("/studio-slack"), ["comment", "status"])
    yield service, receiver, ana
    journal.close()


def guest_comments_and_approves(token: str) -> None:
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(GUEST_PAGE, default_timeout=60)
    at.query_params["share"] = token
    at.run()
    assert not at.exception and not at.error
    at.text_input(key="guest.name").input("Dee").run()
    at.text_area(key="guest.comment.cgt-guest-1").input("the sky is perfect").run()
    at.button(key="guest.post.cgt-guest-1").click().run()
    at.selectbox(key="guest.status.cgt-guest-1").select("approved").run()
    assert not at.exception and not at.error
    notices.wait_for_sends()


def test_a_guests_comment_and_status_reach_the_projects_notifications(studio):
    service, receiver, ana = studio
    said: list[str] = []
    with Client(base_url=service.base_url, api_key=ANA) as client:
        share, token = ana.create_share(["cgt-guest-1"], 86_400, allow_comments=True, allow_status=True,
                                        prompts={"cgt-guest-1": "paper boats"},
                                        notice_grant=ask_notice_grant(client, said))
    assert said == [] and share.notice_grant and share.notice_grant.startswith("dgg1.")
    assert ana.share(share.id).notice_grant == share.notice_grant  # kept with the share
    guest_comments_and_approves(token)
    [comment] = ana.comments(["cgt-guest-1"])["cgt-guest-1"]
    status = ana.statuses(["cgt-guest-1"])["cgt-guest-1"]
    assert comment.author == status.author == "Dee (guest)" and status.status == "approved"

    def told() -> str | None:
        text = "\n".join(d.json["text"] for d in receiver.deliveries("/studio-slack"))
        return text if "commented" in text and "set" in text else None

    text = wait_for(told, "the Slack messages", 60)
    assert "Dee (guest) commented on " in text and "the sky is perfect" in text
    assert "Dee (guest) set " in text and "to approved" in text
    assert "/review?task=cgt-guest-1" in text  # members open the version on the dashboard
    with Client(base_url=service.base_url, api_key=HOST) as host:
        [target] = host.notification_targets().targets
    assert told_to(service, target.id)  # what the test of a share without a grant finds empty


def told_to(service, target_id: str) -> list[dict]:
    """The target's log: every event queued for it, delivered or waiting."""
    root = service.base_url.removesuffix("/api/v3")
    answer = httpx.get(f"{root}/dailies/v1/notifications/targets/{target_id}/log",
                       headers={"Authorization": f"Bearer {HOST}"}, timeout=30)
    assert answer.status_code == 200, answer.text
    return answer.json()["items"]


def test_a_share_without_a_grant_tells_no_one(studio):
    service, _, ana = studio
    with Client(base_url=service.base_url, api_key=HOST) as host:
        [target] = host.notification_targets().targets
    _, token = ana.create_share(["cgt-guest-1"], 86_400, allow_comments=True, allow_status=True)
    guest_comments_and_approves(token)  # waits until whatever the page handed over is sent
    assert told_to(service, target.id) == []
