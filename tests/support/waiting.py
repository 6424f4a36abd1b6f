"""Waiting for a condition, never for a fixed time: a bound on how long to wait, not a measurement."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest


def wait_until(condition: Callable[[], object], what: str, timeout: float = 30.0, interval: float = 0.01) -> None:
    """Poll until `condition()` holds; fail naming `what` if it never does within `timeout` s."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting: {what}")
        time.sleep(interval)


def wait_for(probe: Callable[[], object], what: str, timeout: float = 180.0, interval: float = 0.1):
    """Poll until `probe()` returns something truthy and return it; fail naming `what` and the last
    value if it never does within `timeout` s."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}; last value: {value!r}")
        time.sleep(interval)


def wait_past_second(moment: float) -> None:
    """Until the wall clock is in a later second than `moment`. The list window is [T - 7 days, T) to
    the second (spec 4.2): from then on, a list shows everything created by `moment`, so a count
    that should NOT have grown can be checked (a task that should show is waited for by listing)."""
    wait_until(lambda: int(time.time()) > int(moment), "the clock to reach the next second", timeout=5.0)
