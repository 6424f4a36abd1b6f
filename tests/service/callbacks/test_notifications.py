"""Notifications out, end to end: targets set over HTTP, happenings told or seen by a live service, and
what reaches a real SMTP server (STARTTLS and a login) and real HTTP receivers (Slack's format, a signed
webhook retried after a 500). The service's clock is moved past the gathering window to send: what was
told before the move is one message per target."""

from __future__ import annotations

import time
from decimal import Decimal

import httpx
import pytest

from dailies.service.billing import budgets
from dailies.service.callers import KeyOptions
from dailies.webhooks import verify
from tests.service.callbacks.receiver import Receiver, Reply
from tests.support.live_service import start_live_service
from tests.support.smtp_server import smtp_server
from tests.support.waiting import wait_for

ANA, BO, CY, HOST = "key-ana-0001", "key-bo-0001", "key-cy-0001", "key-studio-host"
WINDOW = 3600.0
SMALL = {"model": "doubao-seedance-1-0-pro-fast-251015", "resolution": "480p", "duration": 2, "ratio": "16:9"}


class Stack:
    def __init__(self, service, mail, receiver: Receiver, moved: list[float]) -> None:
        self.service, self.mail, self.receiver, self.moved = service, mail, receiver, moved
        self.root = service.base_url.removesuffix("/api/v3")

    def call(self, key: str, method: str, path: str, **kwargs) -> httpx.Response:
        return httpx.request(method, f"{self.root}/dailies/v1/notifications{path}", timeout=30,
                             headers={"Authorization": f"Bearer {key}"}, **kwargs)

    def add(self, key: str, **target) -> dict:
        answer = self.call(key, "POST", "/targets", json=target)
        assert answer.status_code == 201, answer.text
        return answer.json()

    def tell(self, key: str, **happening) -> int:
        answer = self.call(key, "POST", "/events", json=happening)
        assert answer.status_code == 200, answer.text
        return answer.json()["reached"]

    def send_now(self) -> None:
        """Past the gathering window: what waits is due, and the deliverers look at once."""
        self.moved[0] += WINDOW + 1
        self.service.app.state.services.wakeups.callbacks.notify()

    def clear(self, *paths: str) -> None:
        for target in self.call(HOST, "GET", "/targets").json()["targets"]:
            self.call(HOST, "DELETE", f"/targets/{target['id']}")


@pytest.fixture(scope="module")
def stack(tmp_path_factory):
    folder = tmp_path_factory.mktemp("notifications")
    moved = [0.0]
    receiver = Receiver()
    with smtp_server(folder) as mail:
        service = start_live_service(
            folder / "service", workers=1,
            api_keys={HOST: "studio", ANA: "studio", BO: "studio", CY: "other"},
            key_options={ANA: KeyOptions(name="Ana"), BO: KeyOptions(name="Bo"), CY: KeyOptions(name="Cy")},
            clock=lambda: time.time() + moved[0], notification_window=WINDOW, callback_retry_delays=(0.2, 0.2, 0.2),
            smtp_url=f"smtp://{mail.username}:{mail.password}@{mail.host}:{mail.port}", smtp_ca_file=str(mail.ca_file),
            smtp_from="Dailies <dailies@studio.example>", dashboard_url="http://dailies.studio.example")
        try:
            yield Stack(service, mail, receiver, moved)
        finally:
            service.stop()
            receiver.close()


@pytest.fixture
def fresh(stack):
    stack.clear()
    yield stack
    stack.clear()


def test_a_mention_arrives_as_an_email_through_starttls_and_a_login(fresh):
    fresh.add(ANA, kind="email", address="ana@studio.example", events=["mention"], owner="Ana")
    queued = fresh.tell(BO, kind="comment", task_id="cgt-0001", shot="A fox at dawn", text="@Ana the tail at frame 48?",
                        actor="somebody else")  # a member's key speaks for its member
    assert queued == 1
    fresh.send_now()
    [message] = fresh.mail.wait_for_messages(1)
    assert message["To"] == "ana@studio.example" and "dailies@studio.example" in message["From"]
    assert "Bo mentioned you" in message["Subject"]
    body = message.get_content()
    assert "Bo mentioned you on A fox at dawn (http://dailies.studio.example/review?task=cgt-0001)" in body
    assert "@Ana the tail at frame 48?" in body
    assert fresh.mail.logins[-1] == "dailies"


def test_slack_gets_its_format_and_a_signed_webhook_is_sent_again_after_a_500(fresh):
    slack = fresh.add(HOST, kind="slack", address=fresh.receiver.url("/slack"), events=["comment"])
    hook = fresh.add(HOST, kind="webhook", address=fresh.receiver.script(
        "/hook", lambda d: Reply(500) if d.attempt == 1 else Reply(200)), events=["comment", "status"])
    assert fresh.tell(BO, kind="comment", task_id="cgt-0002", shot="Rain <on> glass & steel", text="Lovely") == 2
    fresh.send_now()
    [posted] = wait_for(lambda: fresh.receiver.deliveries("/slack"), "the Slack message", 60)
    assert posted.json == {"text": "*Dailies · studio*\n• Bo commented on "
                                   "<http://dailies.studio.example/review?task=cgt-0002|Rain &lt;on&gt; glass &amp; "
                                   "steel>: Lovely"}
    hooked = lambda: fresh.receiver.deliveries("/hook")  # noqa: E731
    first, second = wait_for(lambda: len(hooked()) >= 2 and hooked(), "the webhook's second attempt", 60)
    assert first.webhook_id == second.webhook_id and (first.attempt, second.attempt) == (1, 2)
    secret = fresh.service.app.state.services.webhook_secret("studio")
    verify(secret, second.headers, second.body, now=time.time() + fresh.moved[0])
    assert second.json["type"] == "dailies.notifications" and second.json["target"] == hook["id"]
    [event] = second.json["events"]
    assert (event["as"], event["actor"], event["task_id"], event["text"]) == ("comment", "Bo", "cgt-0002", "Lovely")
    log = wait_for(lambda: [a for a in fresh.call(HOST, "GET", f"/targets/{hook['id']}/log").json()["items"]
                            if not a.get("pending")] or None, "the target's log", 30)
    assert [(a["attempt"], a["status_code"]) for a in log][:2] == [(1, 500), (2, 200)]
    assert slack["events"] == ["comment"]


def test_a_burst_of_comments_is_one_message(fresh):
    fresh.add(HOST, kind="mattermost", address=fresh.receiver.url("/mattermost"), events=["comment"])
    for n in range(12):
        fresh.tell(BO, kind="comment", task_id="cgt-0003", shot="Burst", text=f"note {n}")
    fresh.send_now()
    [posted] = wait_for(lambda: fresh.receiver.deliveries("/mattermost"), "the Mattermost message", 60)
    lines = posted.json["text"].splitlines()
    assert lines[0] == "**Dailies · studio**" and len(lines) == 13
    assert lines[1] == "- Bo commented on [Burst](http://dailies.studio.example/review?task=cgt-0003): note 0"
    fresh.moved[0] += 5  # nothing else is sent
    assert len(fresh.receiver.deliveries("/mattermost")) == 1


def test_no_notification_crosses_projects(fresh):
    fresh.add(CY, kind="webhook", address=fresh.receiver.url("/other"), events=list(("comment", "mention")))
    studio = fresh.add(HOST, kind="webhook", address=fresh.receiver.url("/studio"), events=["comment"])
    assert fresh.tell(BO, kind="comment", task_id="cgt-0004", text="@Cy see this") == 1  # Cy is not in studio
    assert [t["id"] for t in fresh.call(CY, "GET", "/targets").json()["targets"]] != [studio["id"]]
    assert fresh.call(CY, "DELETE", f"/targets/{studio['id']}").status_code == 404
    assert fresh.call(CY, "GET", f"/targets/{studio['id']}/log").status_code == 404
    fresh.send_now()
    wait_for(lambda: fresh.receiver.deliveries("/studio"), "studio's message", 60)
    assert fresh.receiver.deliveries("/other") == []
    for target in fresh.call(CY, "GET", "/targets").json()["targets"]:
        fresh.call(CY, "DELETE", f"/targets/{target['id']}")


def test_a_members_finished_task_and_budget_reach_their_own_target_only(fresh):
    services = fresh.service.app.state.services
    # The task is estimated at ¥0.0833: within the budget, past its 80%.
    budgets.set_budget(services.engine, "studio", "Ana", Decimal("0.1"), "CNY", "month", time.time())
    try:
        fresh.add(ANA, kind="webhook", address=fresh.receiver.url("/ana"), events=["task_succeeded", "budget"],
                  owner="Ana")
        fresh.add(BO, kind="webhook", address=fresh.receiver.url("/bo"), events=["task_succeeded", "budget"],
                  owner="Bo")
        created = httpx.post(f"{fresh.service.base_url}/contents/generations/tasks", timeout=30,
                             headers={"Authorization": f"Bearer {ANA}"},
                             json={**SMALL, "content": [{"type": "text", "text": "A lantern in the snow"}]})
        assert created.status_code == 200, created.text
        task_id = created.json()["id"]
        wait_for(lambda: httpx.get(f"{fresh.service.base_url}/contents/generations/tasks/{task_id}", timeout=30,
                                   headers={"Authorization": f"Bearer {ANA}"}).json()["status"] == "succeeded",
                 "the task to succeed", 120)
        fresh.send_now()
        [posted] = wait_for(lambda: fresh.receiver.deliveries("/ana"), "Ana's message", 60)
        kinds = [(e["as"], e.get("task_id")) for e in posted.json["events"]]
        assert kinds == [("budget", None), ("task_succeeded", task_id)]
        assert "Ana's budget" in posted.json["events"][0]["text"] and "80%" in posted.json["events"][0]["text"]
        assert posted.json["events"][1]["shot"] == "A lantern in the snow"
        assert fresh.receiver.deliveries("/bo") == []
    finally:
        budgets.remove_budget(services.engine, "studio", "Ana")


@pytest.mark.parametrize(("body", "param"), [
    ({"kind": "pager", "address": "https://example.com/x", "events": ["comment"]}, "kind"),
    ({"kind": "email", "address": "not an address", "events": ["comment"]}, "address"),
    ({"kind": "slack", "address": "ftp://example.com/x", "events": ["comment"]}, "address"),
    ({"kind": "webhook", "address": "http://10.1.2.3/hook", "events": ["comment"]}, "address"),  # private
    ({"kind": "slack", "address": "https://example.com/x", "events": ["comments"]}, "events[0]"),
    ({"kind": "slack", "address": "https://example.com/x", "events": []}, "events"),
    ({"kind": "slack", "address": "https://example.com/x"}, "events"),
    ({"kind": "slack", "events": ["comment"]}, "address"),
    ([1, 2], ""),
])
def test_a_bad_target_is_a_400_naming_its_field(stack, body, param):
    answer = stack.call(ANA, "POST", "/targets", json=body)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["param"] == param


def test_a_members_key_adds_no_target_for_another_person_and_removes_none_of_theirs(fresh):
    refused = fresh.call(ANA, "POST", "/targets", json={"kind": "slack", "address": "https://example.com/x",
                                                          "events": ["mention"], "owner": "Bo"})
    assert refused.status_code == 403 and refused.json()["error"]["param"] == "owner"
    bos = fresh.add(BO, kind="slack", address="https://example.com/bo", events=["mention"], owner="Bo")
    assert bos["owner"] == "Bo"
    assert fresh.call(ANA, "DELETE", f"/targets/{bos['id']}").status_code == 403
    assert fresh.call(BO, "DELETE", f"/targets/{bos['id']}").status_code == 200


@pytest.mark.parametrize(("body", "param"), [
    ({"kind": "comment", "text": "no version"}, "task_id"),
    ({"kind": "task_succeeded", "task_id": "cgt-1"}, "kind"),
    ({"kind": "status", "task_id": "cgt-1"}, "status"),
    ({"kind": "comment", "task_id": "cgt-1", "link": "javascript:alert(1)"}, "link"),
    ({"kind": "comment", "task_id": "cgt-1", "text": 5}, "text"),
])
def test_a_bad_happening_is_a_400_naming_its_field(stack, body, param):
    answer = stack.call(BO, "POST", "/events", json=body)
    assert answer.status_code == 400, answer.text
    assert answer.json()["error"]["param"] == param


def test_a_status_on_a_members_shot_reaches_them_and_their_own_does_not(fresh):
    fresh.add(ANA, kind="webhook", address=fresh.receiver.url("/ana-status"), events=["status"], owner="Ana")
    assert fresh.tell(ANA, kind="status", task_id="cgt-0005", shot="Fox", maker="Ana", status="approved") == 0
    assert fresh.tell(BO, kind="status", task_id="cgt-0005", shot="Fox", maker="Ana", status="changes_requested") == 1
    fresh.send_now()
    [posted] = wait_for(lambda: fresh.receiver.deliveries("/ana-status"), "Ana's message", 60)
    [event] = posted.json["events"]
    assert (event["as"], event["actor"], event["status"]) == ("status", "Bo", "changes_requested")


def guest_call(stack: Stack, grant: str, **happening) -> httpx.Response:
    return httpx.post(f"{stack.root}/dailies/v1/notifications/guest-events", json=happening, timeout=30,
                      headers={"Authorization": f"Bearer {grant}"})


def grant_of(stack: Stack, key: str, task_ids: list[str], lifetime: float = 3600) -> str:
    expires = int(time.time() + stack.moved[0] + lifetime)
    answer = stack.call(key, "POST", "/guest-grants", json={"task_ids": task_ids, "expires_at": expires})
    assert answer.status_code == 201, answer.text
    assert answer.json()["task_ids"] == task_ids and answer.json()["expires_at"] == expires
    return answer.json()["grant"]


def test_a_guests_comment_told_with_a_shares_grant_reaches_the_project_signed_as_a_guest(fresh):
    slack = fresh.receiver.url("/guest-slack")
    fresh.add(HOST, kind="slack", address=slack, events=["comment"])
    fresh.add(ANA, kind="webhook", address=fresh.receiver.url("/ana-own"), events=["comment"], owner="Ana")
    grant = grant_of(fresh, ANA, ["cgt-0101", "cgt-0102"])
    assert grant.startswith("dgg1.") and ANA not in grant
    # The guest names themself "Ana": still a guest, never the member; Ana's own target hears of her shot.
    answer = guest_call(fresh, grant, kind="comment", task_id="cgt-0101", shot="A kite", maker="Ana",
                        actor="Ana", text="the string is too thin")
    assert answer.status_code == 200 and answer.json() == {"reached": 2}, answer.text
    fresh.send_now()
    [posted] = wait_for(lambda: fresh.receiver.deliveries("/guest-slack"), "the Slack message", 60)
    assert posted.json == {"text": "*Dailies · studio*\n• Ana (guest) commented on <http://dailies.studio.example"
                                   "/review?task=cgt-0101|A kite>: the string is too thin"}
    [own] = wait_for(lambda: fresh.receiver.deliveries("/ana-own"), "Ana's own message", 60)
    [event] = own.json["events"]
    assert (event["actor"], event["task_id"]) == ("Ana (guest)", "cgt-0101")


def test_a_grant_tells_only_of_its_versions_while_it_is_good_and_is_no_key(fresh):
    grant = grant_of(fresh, ANA, ["cgt-0201"], lifetime=60)
    other = guest_call(fresh, grant, kind="comment", task_id="cgt-0202", text="hi")
    assert other.status_code == 403 and other.json()["error"]["param"] == "task_id", other.text
    body = grant[:-2] + ("00" if not grant.endswith("00") else "11")
    for token in (body, ANA, "dgg1.", "dgg1.x.1.y", grant.replace("dgg1.", "dgg1.e30", 1)):
        refused = guest_call(fresh, token, kind="comment", task_id="cgt-0201", text="hi")
        assert refused.status_code == 401, (token[:20], refused.text)
        assert refused.json()["error"]["code"] == "AuthenticationError"
    # Not a key: the member endpoints do not take it.
    assert fresh.call(grant, "POST", "/events", json={"kind": "comment", "task_id": "cgt-0201"}).status_code == 401
    assert fresh.call(grant, "GET", "/targets").status_code == 401
    bad = guest_call(fresh, grant, kind="mention", task_id="cgt-0201")
    assert bad.status_code == 400 and bad.json()["error"]["param"] == "kind"
    assert guest_call(fresh, grant, kind="comment", task_id="cgt-0201", text="ok").status_code == 200
    fresh.moved[0] += 61  # past its end
    expired = guest_call(fresh, grant, kind="comment", task_id="cgt-0201", text="late")
    assert expired.status_code == 401 and "expires" in expired.json()["error"]["message"]


def test_a_grant_is_asked_with_a_key_and_checked(fresh):
    now = int(time.time() + fresh.moved[0])
    for body, field in (({"expires_at": now + 60}, "task_ids"), ({"task_ids": [], "expires_at": now + 60}, "task_ids"),
                        ({"task_ids": ["t"] * 201, "expires_at": now + 60}, "task_ids"),
                        ({"task_ids": ["t"]}, "expires_at"), ({"task_ids": ["t"], "expires_at": now - 1}, "expires_at"),
                        ({"task_ids": ["t"], "expires_at": now + 400 * 86_400}, "expires_at"),
                        ({"task_ids": ["t"], "expires_at": "soon"}, "expires_at")):
        answer = fresh.call(ANA, "POST", "/guest-grants", json=body)
        assert answer.status_code == 400 and answer.json()["error"]["param"] == field, (body, answer.text)
    no_key = httpx.post(f"{fresh.root}/dailies/v1/notifications/guest-grants", json={"task_ids": ["t"],
                        "expires_at": now + 60}, timeout=30)
    assert no_key.status_code == 401


def test_a_grants_events_share_one_allowance_a_minute(fresh):
    grant = grant_of(fresh, ANA, ["cgt-0301"])
    answers = []
    # At most two minute windows are crossed: a 429 comes within twice the allowance and one more.
    for _ in range(2 * 30 + 1):
        answers.append(guest_call(fresh, grant, kind="status", task_id="cgt-0301", status="approved", actor="Dee"))
        if answers[-1].status_code == 429:
            break
    assert answers[-1].status_code == 429 and "Retry-After" in answers[-1].headers, answers[-1].text
    assert {a.status_code for a in answers[:-1]} == {200}
