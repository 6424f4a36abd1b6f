"""One writer at a time per SQLite database in a process: a lock of ours instead of SQLite's sleeping
busy handler (PostgreSQL takes row locks and needs none)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Connection, Engine


class Writer:
    """Write transactions on an engine: `with writer.begin() as conn: ...`.

    SQLite has one writer at a time. Left to itself, a thread that finds the database locked
    sleeps in SQLite's busy handler (1, 2, 5, 10 ... 100 ms) and tries again, so under concurrent
    creates most threads sleep while the lock is free, and the slowest wait close to a second.
    The threads of one process therefore queue on a lock of their own (woken the moment it is
    released) and only another process is left to the busy handler. PostgreSQL takes row locks
    and needs none of this.
    """

    def __init__(self, engine: Engine) -> None:
        self.engine = engine.execution_options(write=True)  # BEGIN IMMEDIATE on SQLite
        self._lock = _sqlite_write_lock(engine) if engine.dialect.name == "sqlite" else None

    @contextmanager
    def begin(self) -> Iterator[Connection]:
        if self._lock is None:
            with self.engine.begin() as conn:
                yield conn
            return
        with self._lock, self.engine.begin() as conn:
            yield conn

    @contextmanager
    def held_if_free(self) -> Iterator[bool]:
        """Hold this process's write lock for a block if no other thread holds it (True); else hold
        nothing (False), at once. The lock is re-entrant: `begin` inside the block does not wait.
        Always False on PostgreSQL, which has no such lock."""
        if self._lock is None:
            yield False
            return
        held = self._lock.acquire(blocking=False)
        try:
            yield held
        finally:
            if held:
                self._lock.release()


_sqlite_write_locks: dict[str, threading.RLock] = {}
_sqlite_write_locks_guard = threading.Lock()


def _sqlite_write_lock(engine: Engine) -> threading.RLock:
    """One lock per database file in this process, whichever engine writes to it."""
    with _sqlite_write_locks_guard:
        return _sqlite_write_locks.setdefault(str(engine.url.database), threading.RLock())


def writer(engine: Engine) -> Writer:
    """Write transactions on `engine` (see `Writer`)."""
    return Writer(engine)
