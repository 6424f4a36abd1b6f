"""Is the database up, is the bucket up: what one process knows, and what it does about it.

Each dependency has a circuit breaker (`Breaker`). Whoever meets an error that says it is down
(faults.py) opens it: render slots then stop claiming (a claim would render a task only to fail to
store it, and an outage would drain the queue into failures). While a breaker is open, one watch
thread per process probes the dependency with backoff (0.5 s doubling to `PROBE_MAX_INTERVAL`), and
closes it at the first answer; waiters resume at once. State changes are logged once each (down,
back up after N s), never once per failed attempt.

`check` is the readiness probe of `/readyz`: both dependencies asked now, and answered within
`READINESS_TIMEOUT` whatever they do. A probe runs in a thread of its own and is waited for with that
deadline (a database whose host froze leaves a statement waiting until TCP gives up, db.py); one that
is still waiting is not started again, so a dependency that stays silent holds one thread, not one
per `/readyz`.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass
from typing import Generic, TypeVar

from dailies.service.runtime.faults import Dependency, describe

log = logging.getLogger("dailies.health")

# The longest wait between two probes of a dependency that is down: recovery is noticed at most
# this long after it comes back.
PROBE_MAX_INTERVAL = 4.0
PROBE_FIRST_INTERVAL = 0.5
# How long `/readyz` waits for the dependencies' answers: well within an orchestrator's probe
# timeout, and past the database's connect_timeout (5 s, db.py), so a refused or timed-out
# connection is reported with its own reason.
READINESS_TIMEOUT = 6.0

T = TypeVar("T")


class NoAnswer(TimeoutError):
    """A call waited for with a deadline had not returned by then (it goes on in its thread)."""


class OneAtATime(Generic[T]):
    """Calls of `fn`, each in a thread of its own, at most one at a time: whoever asks while one
    runs waits for that one's outcome. A dependency that never answers then holds one thread
    however often it is asked, and each asker can give up at its own deadline."""

    def __init__(self, fn: Callable[[], T], name: str) -> None:
        self._fn = fn
        self._name = name
        self._lock = threading.Lock()
        self._running: Future[T] | None = None

    def start(self) -> Future[T]:
        """The call under way, or a new one."""
        with self._lock:
            if self._running is None:
                self._running = Future()
                threading.Thread(target=self._run, args=(self._running,), name=self._name, daemon=True).start()
            return self._running

    def call(self, timeout: float) -> T:
        """The outcome of the call under way (or a new one): its result or its exception, or
        `NoAnswer` when it has not returned within `timeout` seconds."""
        return answer(self.start(), timeout)

    def _run(self, future: Future[T]) -> None:
        try:
            result = self._fn()
        except BaseException as exc:  # handed to whoever waits, as the call's own outcome
            self._finished()
            future.set_exception(exc)
        else:
            self._finished()
            future.set_result(result)

    def _finished(self) -> None:
        # Before the outcome is handed over: whoever asks after it gets a fresh call, not this one.
        with self._lock:
            self._running = None


def answer(future: Future[T], timeout: float) -> T:
    """The future's result (or its exception) if it has one within `timeout` seconds, else `NoAnswer`."""
    try:
        return future.result(max(0.0, timeout))
    except TimeoutError:
        if future.done():
            raise  # the call itself timed out: its own error says more
        raise NoAnswer(f"no answer within {timeout:g} s") from None


class Breaker:
    """Up or down, for one dependency of this process."""

    def __init__(self, dependency: Dependency, probe: Callable[[], None],
                 on_change: Callable[[Dependency, bool], None] | None = None,
                 on_error: Callable[[Dependency], None] | None = None) -> None:
        self.dependency = dependency
        self.probe = probe
        self._on_change = on_change
        self._on_error = on_error
        self._cond = threading.Condition()
        self._up = True
        self._down_since = 0.0
        self._up_since = float("-inf")  # never seen down
        self.last_error = ""
        # Readiness probes; `self.probe` is looked up at each call (tests replace it).
        self.probes = OneAtATime(lambda: self.probe(), f"dailies-probe-{dependency}")

    @property
    def up(self) -> bool:
        return self._up

    def failed(self, exc: BaseException) -> None:
        """An operation met `exc`, which says this dependency is down."""
        if self._on_error is not None:
            self._on_error(self.dependency)
        with self._cond:
            self.last_error = describe(exc)
            if not self._up:
                return
            self._up = False
            self._down_since = time.monotonic()
        log.warning("%s unreachable (%s): render slots stop claiming until it answers again",
                    self.dependency, self.last_error)
        self._changed(False)

    def succeeded(self) -> None:
        """An operation (or a probe) on this dependency worked."""
        with self._cond:
            if self._up:
                return
            self._up = True
            self._up_since = time.monotonic()
            down_for = self._up_since - self._down_since
            self._cond.notify_all()
        log.warning("%s answers again after %.1f s: render slots resume claiming", self.dependency, down_for)
        self._changed(True)

    def up_for(self) -> float:
        """Seconds since it came back (infinite if never seen down), 0 while down."""
        with self._cond:
            return time.monotonic() - self._up_since if self._up else 0.0

    def wait_up(self, timeout: float) -> bool:
        with self._cond:
            return self._cond.wait_for(lambda: self._up, timeout)

    def _changed(self, up: bool) -> None:
        if self._on_change is not None:
            self._on_change(self.dependency, up)


@dataclass(frozen=True)
class Readiness:
    """What `/readyz` answers: each dependency's state, and why for those that are down."""

    problems: dict[str, str]

    @property
    def ready(self) -> bool:
        return not self.problems


class Health:
    """The breakers of one process and the thread that probes those that are open."""

    def __init__(self, probes: dict[Dependency, Callable[[], None]],
                 on_change: Callable[[Dependency, bool], None] | None = None,
                 on_error: Callable[[Dependency], None] | None = None) -> None:
        self.breakers = {dep: Breaker(dep, probe, on_change, on_error) for dep, probe in probes.items()}
        self._stop = threading.Event()
        self._kick = threading.Event()
        self._thread: threading.Thread | None = None

    def __getitem__(self, dependency: Dependency) -> Breaker:
        return self.breakers[dependency]

    def failed(self, dependency: Dependency, exc: BaseException) -> None:
        self.breakers[dependency].failed(exc)
        self._kick.set()

    def succeeded(self, dependency: Dependency) -> None:
        self.breakers[dependency].succeeded()

    @property
    def all_up(self) -> bool:
        return all(b.up for b in self.breakers.values())

    def down(self) -> list[Dependency]:
        return [dep for dep, b in self.breakers.items() if not b.up]

    def wait_all_up(self, timeout: float) -> bool:
        """Wait until every breaker is closed, at most `timeout` seconds; whether they are."""
        deadline = time.monotonic() + timeout
        for breaker in self.breakers.values():
            if not breaker.wait_up(max(0.0, deadline - time.monotonic())):
                return False
        return True

    def check(self, timeout: float = READINESS_TIMEOUT) -> Readiness:
        """Ask every dependency now (the readiness probe), all at once, and wait at most `timeout`
        seconds for their answers. A dependency that answers closes its breaker; one that fails or
        does not answer in time is reported with the reason, and opens it."""
        deadline = time.monotonic() + timeout
        asked = {dep: breaker.probes.start() for dep, breaker in self.breakers.items()}
        problems = {}
        for dep, probe in asked.items():
            # What the probe found is this process's view too: /readyz saying "down" while the breaker
            # (dailies_dependency_up, claims) said up misled whoever read the metrics.
            try:
                answer(probe, deadline - time.monotonic())
            except NoAnswer as exc:
                problems[str(dep)] = f"no answer within {timeout:g} s"
                self.failed(dep, exc)
            except Exception as exc:
                problems[str(dep)] = describe(exc)
                self.failed(dep, exc)
            else:
                self.breakers[dep].succeeded()
        return Readiness(problems)

    # ---------- the watch thread ----------

    def start(self) -> None:
        if self._thread is not None:
            return
        self._stop.clear()
        self._thread = threading.Thread(target=self._watch, name="dailies-health", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._kick.set()
        if self._thread is not None:
            self._thread.join(5)
            self._thread = None

    def _watch(self) -> None:
        interval = PROBE_FIRST_INTERVAL
        while not self._stop.is_set():
            down = [b for b in self.breakers.values() if not b.up]
            if not down:
                interval = PROBE_FIRST_INTERVAL
                self._kick.wait()
                self._kick.clear()
                continue
            if self._stop.wait(interval):
                return
            for breaker in down:
                try:
                    breaker.probe()
                except Exception as exc:  # still down: the breaker keeps its first error's log line
                    breaker.last_error = describe(exc)
                else:
                    breaker.succeeded()
            interval = min(interval * 2, PROBE_MAX_INTERVAL)
