"""Notices waiting to be told to a service (components/common/notices.py), sent in order by one thread.

A service that does not answer (down, restarting, 5xx, 429) is asked again later, backing off from
FIRST_RETRY_S to RETRY_CAP_S between tries, for up to KEEP_TRYING_S: an outage of minutes loses no
notice. Each destination (a connection's service and key, or a share's grant) keeps its own order: a
notice waits behind an earlier one to the same place, never behind another place's. The notices live
in this process only: a member's key, which sends them, is not written anywhere by the dashboard.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from dailies.client import APIConnectionError, APIStatusError, DailiesError, UnsupportedEndpointError
from dailies.client._retry import is_retryable_status

log = logging.getLogger("dailies.dashboard.notices")

FIRST_RETRY_S = 10.0
RETRY_CAP_S = 300.0
KEEP_TRYING_S = 3600.0
# Notices kept waiting for one destination; beyond, a new one is dropped (and said in the log) rather
# than an outage of an hour growing the dashboard's memory without bound.
MAX_WAITING = 1000


def next_try_in(failures: int, first: float = FIRST_RETRY_S, cap: float = RETRY_CAP_S) -> float:
    """Seconds before the next try after `failures` failed ones (1 for the first failure)."""
    return min(cap, first * 2.0 ** min(max(failures - 1, 0), 30))


def worth_another_try(exc: DailiesError) -> bool:
    """No answer, or an answer that says "later" (408, 429, 5xx); any other refusal stays one."""
    if isinstance(exc, APIConnectionError):
        return True
    return isinstance(exc, APIStatusError) and is_retryable_status(exc.status_code)


@dataclass
class Notice:
    send: Callable[[], None]
    what: str  # for the log: "a comment on cgt-…"
    since: float  # when it was handed over
    failures: int = 0
    due: float = 0.0


@dataclass
class NoticeOutbox:
    clock: Callable[[], float] = time.monotonic
    first_retry_s: float = FIRST_RETRY_S
    retry_cap_s: float = RETRY_CAP_S
    keep_trying_s: float = KEEP_TRYING_S
    max_waiting: int = MAX_WAITING
    background: bool = True  # a thread of its own sends; False: whoever calls send_due (tests)
    queues: dict[str, deque[Notice]] = field(default_factory=dict)
    unsupported: set[str] = field(default_factory=set)  # services without notifications (the real Ark)
    _changed: threading.Condition = field(default_factory=threading.Condition)
    _thread: threading.Thread | None = None

    def put(self, destination: str, send: Callable[[], None], what: str) -> None:
        with self._changed:
            if destination in self.unsupported:
                return
            queue = self.queues.setdefault(destination, deque())
            if len(queue) >= self.max_waiting:
                log.error("the service was not told of %s: %d notices already wait for it", what, len(queue))
                return
            now = self.clock()
            queue.append(Notice(send, what, now, due=now))
            if self.background and (self._thread is None or not self._thread.is_alive()):
                self._thread = threading.Thread(target=self._run, name="dailies-notices", daemon=True)
                self._thread.start()
            self._changed.notify_all()

    def send_due(self) -> float | None:
        """Send the head of every queue that is due, once; seconds until the next is due (None: none left)."""
        with self._changed:
            heads = [(dest, queue[0]) for dest, queue in self.queues.items() if queue]
        for destination, notice in heads:
            if notice.due <= self.clock():
                self._send(destination, notice)
        with self._changed:
            for destination in [d for d, q in self.queues.items() if not q]:
                del self.queues[destination]
            dues = [queue[0].due for queue in self.queues.values()]
            self._changed.notify_all()
        return max(0.0, min(dues) - self.clock()) if dues else None

    def _send(self, destination: str, notice: Notice) -> None:
        try:
            notice.send()
        except UnsupportedEndpointError:
            with self._changed:
                self.unsupported.add(destination)
                self.queues.pop(destination, None)
            return
        except DailiesError as exc:
            notice.failures += 1
            if worth_another_try(exc) and self.clock() - notice.since < self.keep_trying_s:
                notice.due = self.clock() + next_try_in(notice.failures, self.first_retry_s, self.retry_cap_s)
                log.warning("the service was not told of %s (try %d, again in %.0f s): %s", notice.what,
                            notice.failures, notice.due - self.clock(), exc)
                return
            # The comment is kept whatever the notifications do; said in the log.
            level = logging.ERROR if worth_another_try(exc) else logging.WARNING
            log.log(level, "the service was not told of %s, given up after %d tries: %s", notice.what,
                    notice.failures, exc)
        except Exception:  # a bug in one notice must not stop the others behind it
            log.exception("telling the service of %s failed", notice.what)
        with self._changed:
            queue = self.queues.get(destination)
            if queue and queue[0] is notice:
                queue.popleft()

    def _run(self) -> None:
        while True:
            wait = self.send_due()
            with self._changed:
                if wait is None and not any(self.queues.values()):
                    self._thread = None
                    return
                self._changed.wait(timeout=wait if wait is not None else 1.0)

    def settled(self, timeout: float = 10.0) -> bool:
        """Until no notice is on its first try (sent, given up or waiting for a retry): tests."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while any(n.failures == 0 for q in self.queues.values() for n in q):
                left = deadline - time.monotonic()
                if left <= 0:
                    return False
                self._changed.wait(left)
        return True
