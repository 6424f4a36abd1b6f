"""The dashboard's notices wait for a service that does not answer (components/common/notice_outbox.py):
asked again with growing pauses for up to an hour, in order per destination, a refusal dropped at once.
Then the same with a real service stopped and started again on its port: the Slack message arrives."""

from __future__ import annotations

import logging

import httpx
import pytest

from components.common.notice_outbox import NoticeOutbox, next_try_in
from dailies.client import (
    APIConnectionError,
    BadRequestError,
    Client,
    InternalServerError,
    UnsupportedEndpointError,
)
from dailies.service.callers import KeyOptions
from tests.service.callbacks.receiver import Receiver
from tests.support.live_service import start_live_service
from tests.support.waiting import wait_for


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def status_error(cls, status: int):
    request = httpx.Request("POST", "http://service.test/dailies/v1/notifications/events")
    return cls("no", response=httpx.Response(status, request=request), body=None)


class Place:
    """A destination whose service fails the first `failing` tries with `error`, then takes notices."""

    def __init__(self, failing: int = 0, error: Exception | None = None) -> None:
        self.failing, self.error, self.tries, self.told = failing, error, 0, []

    def sender(self, notice: str):
        def send() -> None:
            self.tries += 1
            if self.tries <= self.failing:
                raise self.error or APIConnectionError("refused")
            self.told.append(notice)
        return send


@pytest.fixture
def outbox() -> NoticeOutbox:
    return NoticeOutbox(clock=Clock(), first_retry_s=10, retry_cap_s=300, keep_trying_s=3600, background=False)


def test_the_pause_doubles_from_the_first_retry_up_to_its_cap():
    assert [next_try_in(n, 10, 300) for n in range(1, 8)] == [10, 20, 40, 80, 160, 300, 300]


def test_a_service_that_does_not_answer_gets_its_notices_later_in_order(outbox):
    down = Place(failing=3)
    outbox.put("studio", down.sender("first"), "a comment")
    outbox.put("studio", down.sender("second"), "a status")
    pauses = []
    while (wait := outbox.send_due()) is not None:
        pauses.append(wait)
        outbox.clock.now += wait
    assert down.told == ["first", "second"]  # the second waited behind the first, never before it
    assert pauses == [10, 20, 40, 0]  # three failures, backing off; then both went one after the other
    assert down.tries == 5


def test_one_place_down_does_not_hold_another(outbox):
    down, up = Place(failing=100), Place()
    outbox.put("down", down.sender("a"), "a comment")
    outbox.put("up", up.sender("b"), "a comment")
    outbox.send_due()
    assert up.told == ["b"] and down.told == [] and list(outbox.queues) == ["down"]


def test_after_an_hour_of_failures_a_notice_is_given_up_and_said_in_the_log(outbox, caplog):
    down = Place(failing=10_000, error=status_error(InternalServerError, 503))
    outbox.put("studio", down.sender("a"), "a comment on cgt-1")
    with caplog.at_level(logging.WARNING, "dailies.dashboard.notices"):
        while (wait := outbox.send_due()) is not None:
            outbox.clock.now += wait
    assert outbox.queues == {} and down.told == []
    assert 12 <= down.tries <= 20  # 10 + 20 + ... + 300 s pauses fill the hour
    [given_up] = [r for r in caplog.records if r.levelno == logging.ERROR]
    assert "a comment on cgt-1, given up after" in given_up.getMessage()


def test_a_refusal_is_not_asked_again_and_the_next_notice_goes(outbox, caplog):
    refusing = Place(failing=1, error=status_error(BadRequestError, 400))
    outbox.put("studio", refusing.sender("bad"), "a comment")
    outbox.put("studio", refusing.sender("good"), "a status")
    with caplog.at_level(logging.WARNING, "dailies.dashboard.notices"):
        assert outbox.send_due() == 0  # the next one is due at once
        assert outbox.send_due() is None
    assert refusing.told == ["good"] and refusing.tries == 2
    assert "given up after 1 tries" in caplog.text


def test_a_service_without_notifications_is_not_asked_again(outbox):
    ark = Place(failing=1, error=status_error(UnsupportedEndpointError, 404))
    outbox.put("ark", ark.sender("a"), "a comment")
    outbox.put("ark", ark.sender("b"), "a comment")
    assert outbox.send_due() is None
    outbox.put("ark", ark.sender("c"), "a comment")
    assert outbox.send_due() is None and ark.tries == 1 and ark.told == []


def test_a_service_down_for_long_keeps_at_most_max_waiting_notices(caplog):
    outbox = NoticeOutbox(clock=Clock(), max_waiting=3, background=False)
    down = Place(failing=1)
    with caplog.at_level(logging.ERROR, "dailies.dashboard.notices"):
        for n in range(5):
            outbox.put("studio", down.sender(str(n)), f"comment {n}")
    assert len(outbox.queues["studio"]) == 3
    assert "comment 3: 3 notices already wait" in caplog.text and "comment 4" in caplog.text
    while (wait := outbox.send_due()) is not None:
        outbox.clock.now += wait
    assert down.told == ["0", "1", "2"]  # the first ones, in order


KEY = "key-outbox-ana"


def test_a_comment_made_while_the_service_is_down_is_told_once_it_is_back(tmp_path):
    receiver = Receiver()
    settings = {"api_keys": {KEY: "studio"}, "key_options": {KEY: KeyOptions(name="Ana")},
                "notification_window": 0.2}
    service = start_live_service(tmp_path, workers=0, **settings)
    outbox = NoticeOutbox(first_retry_s=0.2, retry_cap_s=0.5)
    try:
        with Client(base_url=service.base_url, api_key=KEY, max_retries=0, timeout=5) as client:
            client.add_notification_target("slack", receiver.url("/slack"), ["comment"])
            port = int(service.root.rsplit(":", 1)[1])
            service.stop()
            notice = {"kind": "comment", "task_id": "cgt-outbox-1", "text": "the tide is too high", "actor": "Ana",
                      "maker": "Bo", "shot": "a harbour"}
            outbox.put("studio", lambda: client.notify(notice), "a comment on cgt-outbox-1")
            wait_for(lambda: outbox.queues and outbox.queues["studio"][0].failures >= 2,
                     "the notice to fail while the service is down")
            service = start_live_service(tmp_path, workers=0, port=port, **settings)
            [delivery] = wait_for(lambda: receiver.deliveries("/slack"), "the Slack message", 60)
        assert "the tide is too high" in delivery.json["text"]
        assert outbox.queues == {}
    finally:
        service.stop()
        receiver.close()
