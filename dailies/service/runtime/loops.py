"""Background loops that never die, and never flood the log.

Every loop of a service process (render slots, heartbeats, the housekeeper, callback deliverers,
the LISTEN connection) runs for the life of the process; an exception that escaped one used to end
its thread silently, leaving the process running one slot short. Each loop now catches everything
per pass and reports it through a `Streak`: the first failure of a run of failures is logged with
its traceback, the next ones only counted, and the first success after them is logged once with
how many there were. Between failures the loop backs off (doubling, capped), so a database that
is down is not hammered by every thread of every process.
"""

from __future__ import annotations

import logging

from dailies.service.runtime.faults import dependency_down, describe


class Streak:
    """Failures of one loop since its last success."""

    def __init__(self, log: logging.Logger, what: str, first_delay: float = 0.2, max_delay: float = 5.0) -> None:
        self.log = log
        self.what = what
        self.first_delay = first_delay
        self.max_delay = max_delay
        self.failures = 0

    def failed(self, exc: BaseException) -> float:
        """Record a failure; returns how long to wait before the next try."""
        self.failures += 1
        if self.failures == 1:
            down = dependency_down(exc)
            if down is not None:  # expected now and then: one line, no traceback
                self.log.warning("%s: the %s does not answer (%s); retrying with backoff", self.what, down,
                                 describe(exc))
            else:
                self.log.error("%s failed; it keeps running and retries with backoff", self.what, exc_info=exc)
        return min(self.first_delay * 2 ** (self.failures - 1), self.max_delay)

    def ok(self) -> None:
        if self.failures:
            self.log.warning("%s works again after %d failed attempt(s)", self.what, self.failures)
            self.failures = 0
