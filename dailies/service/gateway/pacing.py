"""A gateway's pace of upstream creates: at most `limit` per upstream key and model in ANY window of
`window` seconds (sliding), counted in the database so every worker process shares it.

Why not the fixed windows of rate_limits.py: those count per calendar minute, so 20 creates at 0:59
and 20 at 1:00 both pass, and the upstream sees 40 within two seconds. Ark counts what it receives,
whatever minute boundary it uses; only a sliding window keeps any minute at the limit.

Each admitted create is one row (key, model, time). An admission, in one write transaction:

1. is serialized with every other admission of the same key and model: on PostgreSQL an advisory
   transaction lock on (namespace, hash of key and model), so two workers cannot both read 19 and
   both insert the 20th (each statement after the lock reads what the last holder committed, READ
   COMMITTED); on SQLite the write transaction itself (`BEGIN IMMEDIATE`: one writer at a time,
   across processes too);
2. reads the `limit`-th newest create of the pair inside the window: none means fewer than `limit`
   in the window, so the create is recorded and goes (0 s to wait); otherwise the answer is the
   seconds until that create leaves the window, when the next one may go;
3. drops the pair's rows that left the window long ago (the housekeeper drops every pair's, for
   pairs no longer used: `forget_before`).

Times are the callers' clocks (the service's `clock`), as everywhere else in Dailies: nodes that
share a database must keep their clocks in step (NTP). A create counts from the moment it is let go,
then, once the upstream has answered it, from that answer (`answered`): an upper bound of when the
upstream received it, so a later create goes a whole window after the earlier one arrived, whatever
the transit times. (Only while a create waits for its answer does it count from its earlier time.)
"""

from __future__ import annotations

import functools
import logging
import threading
from collections.abc import Callable

from sqlalchemy import Connection, bindparam, delete, insert, select, update

from dailies.service.db import locks
from dailies.service.db.tables import upstream_creates
from dailies.service.db.writer import Writer
from dailies.service.settings import UPSTREAM_RPM_WINDOW_MAX

# Rows older than this are dropped by the housekeeper whatever their window (settings.py keeps
# `upstream_rpm_window` under it).
KEPT_SECONDS = UPSTREAM_RPM_WINDOW_MAX

log = logging.getLogger("dailies.service")

_c = upstream_creates.c


@functools.cache
def _statements():
    pair = (_c.upstream_key == bindparam("key"), _c.model == bindparam("model"))
    # The limit-th newest create in the window: while it exists, the window holds `limit` or more.
    blocking = (select(_c.at).where(*pair, _c.at > bindparam("since"))
                .order_by(_c.at.desc()).limit(1).offset(bindparam("skip")))
    record = insert(upstream_creates).values(upstream_key=bindparam("key"), model=bindparam("model"),
                                             at=bindparam("now"))
    # Rows of this pair well out of the window (twice its length: a node whose clock runs a little
    # ahead must not drop what another still counts).
    prune = delete(upstream_creates).where(*pair, _c.at <= bindparam("stale"))
    return blocking, record, prune


def admit(conn: Connection, key: str, model: str, limit: int, window: float, now: float) -> float:
    """Record one create of `model` with the upstream key named `key` if fewer than `limit` were
    recorded in the `window` seconds up to `now`, and return 0.0; else record nothing and return the
    seconds until the oldest of the window's last `limit` leaves it (always more than 0).

    Run it in a write transaction of its own (`TaskStore.write.begin()`): the serialization holds
    until that transaction ends."""
    if limit < 1:
        raise ValueError("limit must be 1 or more")
    blocking, record, prune = _statements()
    if conn.dialect.name == "postgresql":
        locks.hold(conn, locks.Namespace.UPSTREAM_PACE, f"{key}\n{model}")
    conn.execute(prune, {"key": key, "model": model, "stale": now - 2 * window})
    oldest = conn.execute(blocking, {"key": key, "model": model, "since": now - window, "skip": limit - 1}).scalar()
    if oldest is not None:
        # It leaves when `now - window` reaches it. Never 0 (0 means go), never more than a window
        # (a row from a clock that runs ahead).
        return min(window, max(oldest + window - now, 0.001))
    conn.execute(record, {"key": key, "model": model, "now": now})
    return 0.0


def answered(conn: Connection, key: str, model: str, admitted_at: float, now: float) -> None:
    """The create admitted at `admitted_at` was answered at `now`: it counts from then, an upper bound of
    when the upstream received it. A later create is then let go only a whole window after this one
    arrived, whatever the transit times, so the upstream's own count never passes the limit."""
    conn.execute(update(upstream_creates).where(_c.upstream_key == key, _c.model == model, _c.at == admitted_at)
                 .values(at=max(admitted_at, now)))


def forget_before(conn: Connection, now: float) -> None:
    """Drop creates older than any window counts (the housekeeper's purge)."""
    conn.execute(delete(upstream_creates).where(_c.at < now - KEPT_SECONDS))


class _Admitted(threading.local):
    """Per render thread: when its admitted create counts from, until the upstream answers it."""

    at: float | None = None


class Pacer:
    """A gateway's `GatewayHooks.admit` and `answered`, in one service process: each admission in a
    write transaction of its own (`writer`), and the render thread's admitted create remembered
    until its answer moves it."""

    def __init__(self, writer: Writer, limit: int, window: float, clock: Callable[[], float]) -> None:
        self.writer = writer
        self.limit = limit
        self.window = window
        self.clock = clock
        self._admitted = _Admitted()

    def admit(self, key_name: str, model: str) -> float:
        """One upstream create of this key and model counted against `limit` in any `window`: 0 to
        go, else the seconds to wait."""
        with self.writer.begin() as conn:
            # Timed once it is this create's turn: a time taken before waiting for the writer could be
            # older than rows another admission has pruned meanwhile, and the window would miss them.
            now = self.clock()
            wait = admit(conn, key_name, model, self.limit, self.window, now)
        if wait == 0:
            self._admitted.at = now  # this render thread's create: `answered` moves it
        return wait

    def answered(self, key_name: str, model: str) -> None:
        """The upstream answered the create this thread was admitted for: it counts from now."""
        admitted_at = self._admitted.at
        if admitted_at is None:
            return
        self._admitted.at = None
        try:
            with self.writer.begin() as conn:
                answered(conn, key_name, model, admitted_at, self.clock())
        except Exception as exc:  # the create went; its row keeps the earlier time
            log.warning("recording when the upstream answered a create failed: %s", exc)
