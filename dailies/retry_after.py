"""`Retry-After`: how long an answer asks to be left alone. The one parser of the product: the client's
retries (dailies/client/_retry.py) and the gateway's upstream keys (dailies/service/gateway/forwarding.py).

A header is a peer's text, so it is read defensively: delta-seconds or an HTTP date (RFC 9110 10.2.3),
anything else (garbage, NaN, infinity, a number too large for a float) is None, and a negative wait or
a date in the past is 0. Callers cap what they obey; a caller treating 0 as "no wait asked" backs off
as it would without the header. Pure: the caller gives the time an HTTP date is measured from.
"""

from __future__ import annotations

import email.utils
import math
import re
from collections.abc import Mapping
from datetime import UTC

# A number as a person would write delta-seconds (RFC 9110 asks for digits; a fraction or a sign is
# read too): never Python's other float spellings, "nan", "inf", "1_0".
_NUMBER = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")


def parse_retry_after(headers: Mapping[str, str], now: float) -> float | None:
    """Seconds to wait according to `Retry-After` (delta-seconds or HTTP date), or None.

    An HTTP date is measured against the response's own `Date` header when there is one, so a
    client whose clock is off still waits the intended time; otherwise against `now` (Unix s).
    `headers` is looked up as `httpx.Headers` is, case-insensitively by a lower-case name.
    """
    value = headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    if _NUMBER.fullmatch(value):
        seconds = float(value)  # inf when too large for a float: refused below
    else:
        target = http_date(value)
        if target is None:
            return None
        reference = http_date(headers.get("date", "")) or now
        seconds = target - reference
    if not math.isfinite(seconds):
        return None
    return max(seconds, 0.0)


def http_date(value: str) -> float | None:
    """An HTTP date as Unix seconds, or None when it is not one."""
    try:
        parsed = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError, OverflowError):
        return None
    if parsed is None:
        return None
    if parsed.tzinfo is None:  # "-0000" means UTC without a stated zone (RFC 5322)
        parsed = parsed.replace(tzinfo=UTC)
    try:
        return parsed.timestamp()
    except (OverflowError, OSError, ValueError):  # a year the platform's clock cannot hold
        return None
