"""The pace of a gateway's upstream creates (upstream_pacing.py), on SQLite and on PostgreSQL: at most
`limit` per upstream key and model in ANY window of `window` seconds, not per calendar minute;
concurrent admissions (threads with connections of their own, as worker processes have) never let
more through; old rows are dropped. Windows of a few seconds or less keep these tests fast (the
service's window is 60 s, `upstream_rpm_window`)."""

from __future__ import annotations

import itertools
import os
import threading
import time
from pathlib import Path

import pytest
from sqlalchemy import func, select

from dailies.service.db.engine import make_engine
from dailies.service.db.tables import upstream_creates
from dailies.service.db.writer import writer
from dailies.service.gateway import pacing as upstream_pacing

MODEL = "doubao-seedance-1-0-pro-250528"
_names = itertools.count(1)


@pytest.fixture(params=["sqlite", "postgresql"])
def engine(request, tmp_path):
    """A fresh database with the service's schema: a SQLite file, or a database of the session's
    throwaway PostgreSQL cluster."""
    if request.param == "sqlite":
        made = make_engine(tmp_path / "dailies.sqlite3")
        yield made
        made.dispose()
        return
    server = request.getfixturevalue("postgres_server")
    name = f"pacing_{os.getpid()}_{next(_names)}"
    made = make_engine(server.create_database(name))
    try:
        yield made
    finally:
        made.dispose()
        server.drop_database(name)


def admitter(engine, limit: int, window: float, key: str = "main", model: str = MODEL):
    """What `Services._admit_upstream_create` does: one write transaction per admission."""
    write = writer(engine)

    def admit(now: float, key: str = key, model: str = model) -> float:
        with write.begin() as conn:
            return upstream_pacing.admit(conn, key, model, limit, window, now)

    return admit


def rows(engine) -> int:
    with engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(upstream_creates)).scalar()


def test_the_limit_holds_over_any_window_not_per_calendar_minute(engine):
    admit = admitter(engine, limit=3, window=60.0)
    # Three at the end of a minute...
    assert [admit(t) for t in (1_790_000_039.0, 1_790_000_059.0, 1_790_000_059.5)] == [0.0, 0.0, 0.0]
    # ... and the next minute does not start afresh: each waits for the oldest create to leave the window.
    assert admit(1_790_000_060.5) == pytest.approx(38.5)
    assert admit(1_790_000_098.9) == pytest.approx(0.1)
    assert admit(1_790_000_099.0) == 0.0  # the create of :39 left exactly now (the window is (now - 60, now])
    assert admit(1_790_000_100.0) == pytest.approx(19.0)  # next: the create of :59
    assert rows(engine) == 4  # refusals record nothing (and :39 is dropped two windows after it)


def test_each_upstream_key_and_model_has_its_own_window(engine):
    admit = admitter(engine, limit=1, window=60.0)
    now = 1_790_000_000.0
    assert admit(now) == 0.0
    assert admit(now) == 60.0
    assert admit(now, model="doubao-seedance-2-0-260128") == 0.0
    assert admit(now, key="second") == 0.0
    assert admit(now + 1, key="second") == pytest.approx(59.0)


def test_two_engines_on_one_database_share_the_window(engine):
    """Two processes of one gateway: each has its own engine, the database is the one counter."""
    other = make_engine(engine.url.render_as_string(hide_password=False)
                        if engine.dialect.name == "postgresql" else Path(engine.url.database))
    try:
        here, there = admitter(engine, 2, 10.0), admitter(other, 2, 10.0)
        assert [here(100.0), there(101.0), here(102.0), there(103.0)] == [0.0, 0.0, pytest.approx(8.0),
                                                                          pytest.approx(7.0)]
    finally:
        other.dispose()


def test_rows_out_of_the_window_are_dropped_by_the_admission_and_the_housekeeper(engine):
    admit = admitter(engine, limit=5, window=10.0)
    for n in range(5):
        assert admit(1000.0 + n) == 0.0
    assert admit(1025.0) == 0.0  # the pair's rows older than two windows go with it
    assert rows(engine) == 1
    assert admit(1025.0, key="other") == 0.0
    with writer(engine).begin() as conn:
        upstream_pacing.forget_before(conn, 1025.0 + upstream_pacing.KEPT_SECONDS)
    assert rows(engine) == 2  # kept: not older than the housekeeper's horizon
    with writer(engine).begin() as conn:
        upstream_pacing.forget_before(conn, 1025.5 + upstream_pacing.KEPT_SECONDS)
    assert rows(engine) == 0


def test_concurrent_admissions_at_one_moment_let_exactly_the_limit_through(engine):
    """Sixteen workers, each with its own connection, all asking at once for the same key and model:
    on PostgreSQL two transactions that both read 9 and both inserted would let 11 through."""
    limit, threads, asks = 10, 16, 3
    admit = admitter(engine, limit=limit, window=60.0)
    start = threading.Barrier(threads)
    answers: list[float] = []
    lock = threading.Lock()

    def worker() -> None:
        start.wait()
        for _ in range(asks):
            answer = admit(5000.0)
            with lock:
                answers.append(answer)

    workers = [threading.Thread(target=worker) for _ in range(threads)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join(60)
    assert len(answers) == threads * asks
    assert answers.count(0.0) == limit
    assert all(a == 60.0 for a in answers if a)
    assert rows(engine) == limit


def test_racing_workers_on_the_real_clock_never_exceed_the_limit_in_any_window(engine):
    """Eight workers creating as fast as they are let until five windows' worth went through, against a
    window of 0.4 s: sorted, any create and the `limit`-th after it are at least a window apart. (Until
    a count, not for a time: on a loaded machine two seconds held as few as one window's worth.)"""
    limit, window, threads = 4, 0.4, 8
    admitted: list[float] = []
    lock = threading.Lock()
    enough = limit * 5
    give_up = time.monotonic() + 120  # a guard against a hang, not the test's measure

    write = writer(engine)

    def admit_now() -> tuple[float, float]:
        """As `Pacer.admit`: timed in the transaction (a time taken before waiting for the writer was
        older than rows another admission pruned meanwhile, and a CI run admitted a fifth in 0.27 s)."""
        with write.begin() as conn:
            now = time.time()
            return upstream_pacing.admit(conn, "main", MODEL, limit, window, now), now

    def worker() -> None:
        while len(admitted) < enough and time.monotonic() < give_up:
            wait, now = admit_now()
            if wait == 0.0:
                with lock:
                    admitted.append(now)

    workers = [threading.Thread(target=worker) for _ in range(threads)]
    for thread in workers:
        thread.start()
    for thread in workers:
        thread.join(60)
    admitted.sort()
    assert len(admitted) >= limit * 3  # it did go on admitting, window after window
    tightest = min(admitted[i + limit] - admitted[i] for i in range(len(admitted) - limit))
    assert tightest >= window, (tightest, len(admitted))
