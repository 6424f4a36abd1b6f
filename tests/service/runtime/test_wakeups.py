"""Idle waiters (render slots, callback deliverers) without notifications: one of them, the lookout,
polls; the others rest until a waiter that found work wakes them (dailies/service/runtime/wakeups.py)."""

from __future__ import annotations

import threading
from collections import Counter

from dailies.service.runtime.wakeups import Wakeup
from tests.support.waiting import wait_until

POLL = 0.01
REST = 3600.0  # longer than any test: a resting waiter looks again only when woken


class Waiters:
    """Threads that look for work (counted) and, finding none, wait as the service's idle loops do."""

    def __init__(self, wakeup: Wakeup, count: int) -> None:
        self.wakeup = wakeup
        self.looks: Counter[int] = Counter()
        self.work = 0
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.threads = [threading.Thread(target=self._run, args=(n,)) for n in range(count)]
        for thread in self.threads:
            thread.start()

    def _run(self, n: int) -> None:
        while not self.stop.is_set():
            seen = self.wakeup.generation()
            with self.lock:
                self.looks[n] += 1
                found = self.work > 0
                self.work -= found
            if found:
                self.wakeup.notify()  # as a slot that claimed a task does
                continue
            self.wakeup.wait_idle(seen, POLL, REST)

    def close(self) -> None:
        self.stop.set()
        self.wakeup.notify()
        for thread in self.threads:
            thread.join(10)

    def counts(self) -> list[int]:
        with self.lock:
            return sorted(self.looks.values())


def test_only_the_lookout_polls_while_there_is_no_work():
    waiters = Waiters(Wakeup(), 4)
    try:
        wait_until(lambda: max(waiters.counts(), default=0) >= 50, "the lookout to poll fifty times")
        counts = waiters.counts()
        # One waiter polled; the three others looked once and rest.
        assert len(counts) == 4 and counts[:3] == [1, 1, 1], counts
    finally:
        waiters.close()


def test_work_found_by_the_lookout_wakes_the_resting_waiters():
    waiters = Waiters(Wakeup(), 4)
    try:
        wait_until(lambda: len(waiters.counts()) == 4 and max(waiters.counts()) >= 5, "every waiter idle")
        with waiters.lock:
            waiters.work = 3  # made elsewhere (another process): nobody announces it
        # The lookout finds the first piece; its notify sends every waiter looking; all of it is taken.
        wait_until(lambda: waiters.work == 0 and min(waiters.counts()) >= 2, "the work taken by the waiters")
    finally:
        waiters.close()


def test_an_announcement_wakes_a_resting_waiter_at_once():
    wakeup = Wakeup()
    ended = threading.Event()
    lookout_in = threading.Event()

    def lookout() -> None:
        lookout_in.set()
        wakeup.wait_idle(wakeup.generation(), REST, REST)  # holds the lookout's place

    since = wakeup.generation()  # taken before the notify below, whenever the thread gets to wait

    def rester() -> None:
        wakeup.wait_idle(since, POLL, REST)
        ended.set()

    first = threading.Thread(target=lookout)
    first.start()
    lookout_in.wait(10)
    wait_until(lambda: wakeup._lookout_taken, "the lookout to wait")
    second = threading.Thread(target=rester)
    second.start()
    wakeup.notify()  # resting for an hour unless woken: only this ends its wait within the test
    assert ended.wait(10)
    first.join(10)
    second.join(10)
