"""Is the database up, is the bucket up: what one process knows, and what it does about it.

Each dependency has a circuit breaker (`Breaker`). Whoever meets an error that says it is down
(faults.py) opens it: render slots then stop claiming (a claim would render a task only to fail to
store it, and an outage would drain the queue into failures). While a breaker is open, one watch
thread per process probes the dependency with backoff (0.5 s doubling to `PROBE_MAX_INTERVAL`), and
closes it at the first answer; waiters resume at once. State changes are logged once each (down,
back up after N s), never once per failed attempt.

`check` is the readiness probe of `/readyz`: both dependencies asked now, with short timeouts.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from .faults import Dependency, describe

log = logging.getLogger("dailies.health")

# The longest wait between two probes of a dependency that is down: recovery is noticed at most
# this long after it comes back.
PROBE_MAX_INTERVAL = 4.0
PROBE_FIRST_INTERVAL = 0.5


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

    def check(self) -> Readiness:
        """Ask every dependency now (the readiness probe). A dependency that answers closes its
        breaker; one that does not is reported with the reason."""
        problems = {}
        for dep, breaker in self.breakers.items():
            try:
                breaker.probe()
            except Exception as exc:
                problems[str(dep)] = describe(exc)
            else:
                breaker.succeeded()
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
