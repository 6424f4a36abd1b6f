"""The one seam through which the client reads time and sleeps.

Retries, `wait()` deadlines and Retry-After dates all go through a `Clock`, so tests pass a fake
one and never sleep for real, and never depend on how fast the machine is.
"""

from __future__ import annotations

import time
from typing import Protocol

import anyio


class Clock(Protocol):
    """Time as the client sees it."""

    def now(self) -> float:
        """Monotonic seconds, for deadlines (never jumps when the wall clock is set)."""
        ...

    def time(self) -> float:
        """Wall-clock Unix seconds, only to read HTTP dates (`Retry-After: <date>`)."""
        ...

    def sleep(self, seconds: float) -> None:
        """Block the calling thread for `seconds`."""
        ...

    async def asleep(self, seconds: float) -> None:
        """Suspend the calling task for `seconds`."""
        ...


class SystemClock:
    """The real clock."""

    def now(self) -> float:
        return time.monotonic()

    def time(self) -> float:
        return time.time()

    def sleep(self, seconds: float) -> None:
        time.sleep(seconds)

    async def asleep(self, seconds: float) -> None:
        # anyio (a dependency of httpx) so AsyncClient works under asyncio and trio alike.
        await anyio.sleep(seconds)
