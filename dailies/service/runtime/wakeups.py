"""Waking idle render slots and callback deliverers when there is work, instead of a tight poll.

A change that makes work (a task queued, a callback event stored) calls `announce` inside its
transaction. On PostgreSQL that is a `NOTIFY`, which the database delivers at commit to every
process listening on the channel, this one included: one listening connection per process turns
each notification into a wake-up of its waiters. On SQLite there is nobody to notify across
processes, so `announce` wakes this process's waiters directly (their claim then waits for the
write lock the announcing transaction holds, and so sees its row) and other processes find the
work at their next poll.

Waiters still poll, every `Settings.notified_poll_interval` with notifications and every
`Settings.poll_interval` without: a notification sent while the listening connection was down
is lost, and the poll bounds how long that can leave work waiting. Without notifications only one
idle waiter of a kind (the lookout) polls that often; the others rest until a waiter that found
work wakes them (`wait_idle`), so an idle process looks once per interval, not once per thread.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable

from sqlalchemy import Connection, Engine, text

from dailies.service.db.engine import is_postgres
from dailies.service.settings import Settings

log = logging.getLogger("dailies.wakeups")

TASKS_CHANNEL = "dailies_tasks"
CALLBACKS_CHANNEL = "dailies_callbacks"
# A gateway's upstream called back about a task (payload: its upstream id): the process following it wakes.
UPSTREAM_CHANNEL = "dailies_upstream"
_NOTIFY = text("SELECT pg_notify(:channel, '')")
_NOTIFY_WITH = text("SELECT pg_notify(:channel, :payload)")


class Wakeup:
    """A wake-up that is never lost between looking for work and starting to wait: a waiter takes
    `generation()` before it looks, and `wait` returns at once if anything was announced since."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._generation = 0
        self._lookout_taken = False

    def generation(self) -> int:
        with self._cond:
            return self._generation

    def notify(self) -> None:
        with self._cond:
            self._generation += 1
            self._cond.notify_all()

    def wait(self, since: int, timeout: float) -> bool:
        """Wait until something is announced after generation `since`, at most `timeout` s."""
        with self._cond:
            return self._cond.wait_for(lambda: self._generation != since, timeout)

    def wait_idle(self, since: int, poll: float, rest: float | None) -> bool:
        """An idle waiter's `wait`: the first to come (the lookout) waits at most `poll` s, the others
        at most `rest` s (None: `poll`, every waiter its own). A waiter that finds work calls `notify`,
        so the resting ones look then: each piece of work found wakes the others to look for more."""
        with self._cond:
            lookout = not self._lookout_taken
            self._lookout_taken = True
            try:
                timeout = poll if lookout or rest is None else max(poll, rest)
                return self._cond.wait_for(lambda: self._generation != since, timeout)
            finally:
                if lookout:
                    self._lookout_taken = False


class Wakeups:
    """The wake-ups of one process (one `Services`): tasks and callbacks."""

    def __init__(self, engine: Engine, settings: Settings,
                 on_upstream: Callable[[str], object] | None = None) -> None:
        self.engine = engine
        self.notifies = is_postgres(engine)
        self.tasks = Wakeup()
        self.callbacks = Wakeup()
        self.poll_interval = settings.notified_poll_interval if self.notifies else settings.poll_interval
        # How long an idle waiter that is not the lookout waits unless woken. With notifications each
        # waits its own time: a deliverer's is until the retry it knows of, which a lookout may not.
        self.rest_interval = None if self.notifies else settings.notified_poll_interval
        self._by_channel = {TASKS_CHANNEL: self.tasks, CALLBACKS_CHANNEL: self.callbacks}
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        # Told of an upstream task's callback (its upstream id): a gateway's generator wakes its follower.
        self.on_upstream: Callable[[str], object] = on_upstream or (lambda upstream_id: None)

    def announce(self, conn: Connection, channel: str) -> None:
        """Called inside the transaction that made the work."""
        if self.notifies:
            conn.execute(_NOTIFY, {"channel": channel})  # delivered at commit, deduplicated per transaction
        else:
            self._by_channel[channel].notify()

    def signal_upstream(self, conn: Connection, upstream_id: str) -> None:
        """The upstream called back about `upstream_id`: wake whichever process follows it (on SQLite
        only this one can be told; another finds the change at its next poll)."""
        if self.notifies:
            conn.execute(_NOTIFY_WITH, {"channel": UPSTREAM_CHANNEL, "payload": upstream_id})
        else:
            self.on_upstream(upstream_id)

    def wake_all(self) -> None:
        for wakeup in self._by_channel.values():
            wakeup.notify()

    # ---------- listening (PostgreSQL) ----------

    def start(self) -> None:
        if not self.notifies or self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._listen, name="dailies-listen", daemon=True)
        self._thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            self._thread = None
        self.wake_all()  # waiters on the way out need not sit out their poll interval

    def _listen(self) -> None:
        import psycopg

        from dailies.service.runtime.loops import Streak

        args, kwargs = self.engine.dialect.create_connect_args(self.engine.url)
        kwargs.setdefault("connect_timeout", 5)
        streak = Streak(log, "listening for notifications", first_delay=0.5, max_delay=5.0)
        while not self._stop.is_set():
            # Any error (a database restart, a network cut, anything else): reconnect and LISTEN
            # again. Never end: the process's waiters would fall back on their slow poll for good.
            try:
                with psycopg.connect(*args, **kwargs, autocommit=True) as conn:
                    for channel in (*self._by_channel, UPSTREAM_CHANNEL):
                        conn.execute(f"LISTEN {channel}")
                    streak.ok()
                    # Anything announced while we were not listening is unknown: look now.
                    self.wake_all()
                    while not self._stop.is_set():
                        for note in conn.notifies(timeout=0.5):
                            if note.channel == UPSTREAM_CHANNEL:
                                self.on_upstream(note.payload)
                                continue
                            wakeup = self._by_channel.get(note.channel)
                            if wakeup is not None:
                                wakeup.notify()
            except Exception as exc:
                self._stop.wait(streak.failed(exc))
