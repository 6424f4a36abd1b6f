"""Requests per minute per key: creates (`rpm`) and reads (`read_rpm`: list, get, and cancel or delete).

One fixed window per key, kind and UTC minute, counted in the database by one guarded upsert: the
count goes up only while it is under the limit, and the statement returns the new count, or nothing
when the window is full. Every API node counts in the same rows, so the limit holds across nodes.
A refused request answers 429 in the error shape with an Ark-style code, `Retry-After` (seconds to
the next window) and `x-ratelimit-limit`, `-remaining`, `-reset`; an allowed one carries the same
headers.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from sqlalchemy import Connection, bindparam, delete
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from dailies.service.callers import KeyOptions
from dailies.service.db.tables import rate_windows
from dailies.service.errors import ApiError

WINDOW_SECONDS = 60
CODES = {"create": "RateLimitExceeded.APIKeyRPMExceeded", "read": "RateLimitExceeded.APIKeyReadRPMExceeded",
         # A gateway's own count of creates per upstream key and model: never answered to a member.
         "upstream-create": "RateLimitExceeded.UpstreamRPM"}
WHAT = {"create": "task creations", "read": "reads (list, get, cancel or delete)",
        "upstream-create": "upstream creates"}


@dataclass(frozen=True)
class Allowance:
    limit: int
    remaining: int
    reset: int  # seconds until the window ends

    def headers(self) -> dict[str, str]:
        return {"x-ratelimit-limit": str(self.limit), "x-ratelimit-remaining": str(self.remaining),
                "x-ratelimit-reset": str(self.reset)}


class RateLimited(ApiError):
    def __init__(self, kind: str, allowance: Allowance) -> None:
        super().__init__(429, CODES[kind], f"This API key's limit of {allowance.limit} {WHAT[kind]} per minute is "
                         f"reached; retry after {allowance.reset} s.", "Authorization")
        self.allowance = allowance

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.allowance.reset), **self.allowance.headers()}


def limit_of(options: KeyOptions, kind: str) -> int | None:
    """The key's limit per minute for requests of `kind` (create, read); None: no limit."""
    return options.rpm if kind == "create" else options.read_rpm


@functools.cache
def _count_statement(dialect_name: str):
    insert = pg_insert if dialect_name == "postgresql" else sqlite_insert
    stmt = insert(rate_windows).values(key_id=bindparam("key_id"), kind=bindparam("kind"),
                                       window=bindparam("window"), n=1)
    return stmt.on_conflict_do_update(
        index_elements=[rate_windows.c.key_id, rate_windows.c.kind, rate_windows.c.window],
        set_={"n": rate_windows.c.n + 1},
        where=rate_windows.c.n < bindparam("limit"),
    ).returning(rate_windows.c.n)


def take(conn: Connection, key_id: str, kind: str, limit: int, now: float) -> Allowance:
    """Count one request of `kind` for the key, or raise `RateLimited` when its window is full."""
    window = int(now) // WINDOW_SECONDS * WINDOW_SECONDS
    reset = max(1, window + WINDOW_SECONDS - int(now))
    counted = conn.execute(_count_statement(conn.dialect.name),
                           {"key_id": key_id, "kind": kind, "window": window, "limit": limit}).scalar()
    if counted is None:
        raise RateLimited(kind, Allowance(limit, 0, reset))
    return Allowance(limit, max(0, limit - counted), reset)


def forget_before(conn: Connection, now: float) -> None:
    """Drop windows that ended (the housekeeper's purge)."""
    conn.execute(delete(rate_windows).where(rate_windows.c.window < int(now) - 2 * WINDOW_SECONDS))
