"""When to retry a request and how long to wait first. Pure functions, no I/O, no clock reads.

Retried: no response at all (connection refused or reset, timeouts), 408, 429 and every 5xx.
Not retried: other 4xx, whose cause (a bad body, a wrong key, a conflict) a retry cannot change.
A retried create is safe because it carries the same Idempotency-Key (DESIGN.md section 3).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import httpx

from ..retry_after import parse_retry_after  # the product's one parser, still importable from here

_RETRYABLE_STATUSES = frozenset({408, 429})


@dataclass(frozen=True)
class RetryPolicy:
    """How many times to retry and how long to back off.

    The n-th retry (n from 0) waits a uniformly random time in [0, min(cap, base * 2**n)]
    ("full jitter": clients that failed together do not retry together), unless the response said
    `Retry-After`, which is obeyed up to `retry_after_cap`.
    """

    max_retries: int = 2
    backoff_base: float = 0.5
    backoff_cap: float = 8.0
    # A longer Retry-After is clamped to this: a caller frozen for many minutes by one header is
    # worse than an early retry that may fail again (and then raises the error).
    retry_after_cap: float = 60.0

    def __post_init__(self) -> None:
        if self.max_retries < 0:
            raise ValueError("max_retries must be >= 0")


def is_retryable_status(status_code: int) -> bool:
    return status_code in _RETRYABLE_STATUSES or status_code >= 500


def backoff_delay(retry_index: int, policy: RetryPolicy, rng: Callable[[], float]) -> float:
    """Full-jitter exponential backoff for the `retry_index`-th retry (0 for the first)."""
    ceiling = min(policy.backoff_cap, policy.backoff_base * 2.0 ** min(retry_index, 62))
    return rng() * ceiling


def retry_delay(
    attempt: int,
    policy: RetryPolicy,
    rng: Callable[[], float],
    now: float,
    *,
    response: httpx.Response | None = None,
) -> float | None:
    """Seconds to wait before the next attempt, or None when attempt `attempt` (0 = the first
    send) was the last one. `response` is None when the attempt got no response at all."""
    if attempt >= policy.max_retries:
        return None
    if response is not None:
        if not is_retryable_status(response.status_code):
            return None
        asked = parse_retry_after(response.headers, now)
        if asked is not None:
            return min(asked, policy.retry_after_cap)
    return backoff_delay(attempt, policy, rng)


@dataclass
class Attempts:
    """What a call's failed attempts tell about its effect: whether one that was retried may have
    been carried out by the server (its answer lost) rather than refused before it did anything."""

    maybe_applied: bool = False

    def failed(self, error: httpx.TransportError | None = None, response: httpx.Response | None = None) -> None:
        if error is not None:
            # No connection, nothing sent; any other failure may come after the server acted.
            self.maybe_applied |= not isinstance(error, httpx.ConnectError | httpx.ConnectTimeout)
        elif response is not None:
            # A 5xx may come from a proxy after the server acted; a 429 is a refusal before it.
            self.maybe_applied |= response.status_code == 408 or response.status_code >= 500


def done_by_earlier_attempt(attempts: Attempts, status_code: int, code: str | None) -> bool:
    """A DELETE retried after an attempt that may have been carried out: its "already cancelled"
    (409) or "no such task" (404) is the earlier attempt's work, not a failure."""
    return attempts.maybe_applied and (
        status_code == 404 or (status_code == 409 and code == "InvalidAction.CancelledTaskDeletion"))
