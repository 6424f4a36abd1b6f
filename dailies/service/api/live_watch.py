"""Followers waiting for a live session's next state, in one API process: one look at the database per
session every POLL_S however many wait (a post on this node wakes them at once; another node's post is
seen at the next look), and at most MAX_WAITERS waiting per session at a time: a link anyone may hold
must not keep a node's loop and database busy (one more is a 429 with Retry-After, and its player asks
again a second later).
"""

from __future__ import annotations

import asyncio
import logging
from collections import Counter
from collections.abc import Callable
from typing import Any

from fastapi import Request
from prometheus_client import Gauge

from dailies.service.errors import ApiError

log = logging.getLogger("dailies.live")

POLL_S = 0.1
MAX_WAITERS = 200


class TooManyFollowers(ApiError):
    def __init__(self, most: int) -> None:
        super().__init__(429, "RateLimitExceeded.LiveFollowers",
                         f"{most} players already wait on this session here; ask again in a second.", "session_id")

    def headers(self) -> dict[str, str]:
        return {"Retry-After": "1", "Access-Control-Allow-Origin": "*"}


class LiveWatch:
    def __init__(self, seq_of: Callable[[str], int | None], poll_s: float = POLL_S,
                 max_waiters: int = MAX_WAITERS, gauge: Gauge | None = None) -> None:
        self.seq_of = seq_of  # a session's seq from the database (blocking: run in a thread)
        self.gauge = gauge  # how many wait, on /metrics
        self.poll_s = poll_s
        self.max_waiters = max_waiters
        self.waiting: Counter[str] = Counter()
        self.seen: dict[str, int] = {}  # the latest seq this process knows, for sessions waited on
        self.changed: dict[str, asyncio.Event] = {}
        self.pollers: dict[str, asyncio.Task] = {}
        self.loop: asyncio.AbstractEventLoop | None = None
        self.stopping = False  # the node is shutting down: nobody waits any more

    def release_all(self) -> None:
        """Answer every waiter now and let none wait again: a node stopping would otherwise wait for each
        long poll (up to 25 s) before its shutdown could go on. Safe from a signal handler."""
        self.stopping = True
        if self.loop is not None and not self.loop.is_closed():
            self.loop.call_soon_threadsafe(self._wake_all)

    def _wake_all(self) -> None:
        for session_id in list(self.changed):
            self._wake(session_id)

    def posted(self, session_id: str, seq: int | None = None) -> None:
        """A change made on this node: its waiters are answered now."""
        if seq is not None and session_id in self.waiting:
            self.seen[session_id] = max(self.seen.get(session_id, -1), seq)
        self._wake(session_id)

    def _wake(self, session_id: str) -> None:
        event = self.changed.pop(session_id, None)
        if event is not None:
            event.set()

    async def wait_past(self, session_id: str, after: int, seconds: float) -> None:
        """Return once the session's seq is past `after`, or `seconds` later."""
        if self.waiting[session_id] >= self.max_waiters:
            raise TooManyFollowers(self.max_waiters)
        self.loop = asyncio.get_running_loop()
        self.waiting[session_id] += 1
        if self.gauge is not None:
            self.gauge.inc()
        try:
            poller = self.pollers.get(session_id)
            if poller is None or poller.done():
                self.pollers[session_id] = asyncio.create_task(self._poll(session_id))
            loop = asyncio.get_running_loop()
            deadline = loop.time() + seconds
            while self.seen.get(session_id, -1) <= after and not self.stopping:
                left = deadline - loop.time()
                if left <= 0:
                    return
                event = self.changed.setdefault(session_id, asyncio.Event())
                try:
                    await asyncio.wait_for(event.wait(), left)
                except TimeoutError:
                    return
        finally:
            if self.gauge is not None:
                self.gauge.dec()
            self.waiting[session_id] -= 1
            if self.waiting[session_id] <= 0:
                del self.waiting[session_id]

    async def _poll(self, session_id: str) -> None:
        try:
            while self.waiting.get(session_id, 0) > 0:
                try:
                    seq = await asyncio.to_thread(self.seq_of, session_id)
                except Exception as exc:  # the database does not answer: the waiters time out, the next asks again
                    log.warning("reading live session %s failed: %s", session_id, exc)
                    seq = None
                if seq is not None and seq > self.seen.get(session_id, -1):
                    self.seen[session_id] = seq
                    self._wake(session_id)
                await asyncio.sleep(self.poll_s)
        finally:
            self.pollers.pop(session_id, None)
            self.seen.pop(session_id, None)


def release_waiters(app: Any) -> None:
    """The app's followers answered at once (the node is stopping)."""
    watch = getattr(app.state, "live_watch", None)
    if watch is not None:
        watch.release_all()


def watch_of(request: Request) -> LiveWatch:
    """The app's watch (one per app: each has its own event loop)."""
    watch = getattr(request.app.state, "live_watch", None)
    if watch is None:
        services = request.app.state.services
        watch = request.app.state.live_watch = LiveWatch(services.live.seq,
                                                         gauge=services.metrics.live_followers_waiting)
    return watch
