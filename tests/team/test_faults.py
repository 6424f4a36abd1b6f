"""Faults a team deployment meets, with real servers killed and restarted under load: the bucket goes
away, PostgreSQL restarts, workers start while creates go on, a worker is stopped mid-render.

The PostgreSQL cluster and the SeaweedFS server here are this module's own (they are killed and
restarted, which other tests must not see), started once and shared by its tests; each test has a
database and a key prefix of its own. No test waits for a fixed time: each waits for a condition,
bounded. Each fault test prints its figures (tasks created, succeeded, failed, run twice; how long
recovery took after the dependency came back) on one line starting with `FAULT`.
"""

from __future__ import annotations

import itertools
import os
import re
import threading
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine, inspect, select, text

from dailies.service.db import migrate
from dailies.service.db.schema import SERVICE
from dailies.service.db.tables import tasks
from tests.service.callbacks.receiver import Receiver
from tests.support.legacy_schema import undo_after_0001
from tests.support.metrics import scrape
from tests.support.processes import Serve, Worker, stop_all
from tests.support.servers import free_port
from tests.support.waiting import wait_for

from ..conftest import started_postgres, started_s3

pytestmark = pytest.mark.slow

KEY = "faults-key-0001"
BUCKET = "dailies-faults"
TERMINAL = {"succeeded", "failed", "expired", "cancelled"}
# Small clips, so a few dozen stay quick on 2 cores: 1.0 Pro at 480p, 2 s, no audio.
SMALL = {"model": "doubao-seedance-1-0-pro-250528", "resolution": "480p", "duration": 2}
# Long enough that a signal reliably lands while it renders.
LONG = {**SMALL, "duration": 12}
_names = itertools.count(1)


def worker_pid(worker_id: str) -> int:
    return int(re.fullmatch(r".*-(\d+)-[0-9a-f]{6}-\d+", worker_id).group(1))


@pytest.fixture(scope="module")
def pg():
    with started_postgres() as server:
        yield server


@pytest.fixture(scope="module")
def s3():
    with started_s3(BUCKET) as server:
        yield server


class Deployment:
    """API nodes and workers of one test on one database (PostgreSQL + the bucket, or SQLite +
    a folder shared through one data directory)."""

    def __init__(self, tmp_path: Path, env: dict[str, str], database_url: str) -> None:
        self.tmp_path = tmp_path
        self.env = env
        self.engine = create_engine(database_url)
        self.processes: list = []
        self.closers: list = []  # other things to close with the deployment (callback receivers)
        self.shared_dir = tmp_path / "shared"  # SQLite: every process's data directory

    def data_dir(self, kind: str) -> Path:
        """SQLite: the one data directory every process shares; else one of the process's own."""
        if "DAILIES_DATABASE_URL" not in self.env:
            return self.shared_dir
        return self.tmp_path / f"{kind}-{len(self.processes)}"

    def serve(self, workers: int = 0, extra_args: tuple[str, ...] = ()) -> Serve:
        data_dir = self.data_dir("api")
        node = Serve(data_dir, workers=workers, stale_after=5.0, env=self.env, api_keys=f"team:{KEY}",
                     extra_args=extra_args)
        self.processes.append(node)
        return node

    def worker(self, extra_args: tuple[str, ...] = (), wait: bool = True) -> Worker:
        data_dir = self.data_dir("worker")
        worker = Worker(data_dir, slots=1, stale_after=5.0, env=self.env, extra_args=extra_args, wait=wait)
        self.processes.append(worker)
        return worker

    @staticmethod
    def create(node: Serve, body: dict, n: int = 1, prefix: str = "take") -> list[str]:
        ids = []
        for i in range(n):
            response = httpx.post(f"{node.base_url}/contents/generations/tasks", timeout=30,
                                  headers={"Authorization": f"Bearer {KEY}"},
                                  json={**body, "content": [{"type": "text", "text": f"{prefix} {i}"}]})
            assert response.status_code == 200, response.text
            ids.append(response.json()["id"])
        return ids

    def states(self) -> dict:
        with self.engine.connect() as conn:
            return {r.id: r for r in conn.execute(select(tasks.c.id, tasks.c.status, tasks.c.attempts,
                                                         tasks.c.worker_id, tasks.c.error_code))}

    def finished(self, ids: list[str]) -> dict | None:
        states = self.states()
        return states if all(states[t].status in TERMINAL for t in ids) else None

    def close(self) -> None:
        stop_all(self.processes)
        for close in self.closers:
            close()
        self.engine.dispose()


@pytest.fixture
def team(pg, s3, tmp_path):
    name = f"faults_{os.getpid()}_{next(_names)}"
    url = pg.create_database(name)
    env = {**s3.aws_environment(), "DAILIES_DATABASE_URL": url, "DAILIES_STORAGE": f"s3://{BUCKET}/{name}/"}
    deployment = Deployment(tmp_path, env, url.replace("postgresql://", "postgresql+psycopg://"))
    try:
        yield deployment
    finally:
        deployment.close()
        pg.drop_database(name)


def outcome_line(fault: str, ids: list[str], final: dict, **figures) -> str:
    counts = Counter(final[t].status for t in ids)
    twice = sum(1 for t in ids if final[t].attempts > 1)
    extra = " ".join(f"{k}={v}" for k, v in figures.items())
    line = (f"FAULT {fault}: created={len(ids)} succeeded={counts['succeeded']} failed={counts['failed']} "
            f"run_twice={twice} {extra}")
    print(line)
    return line


def test_a_bucket_outage_while_tasks_render_fails_nothing_and_runs_nothing_twice(team, s3):
    api = team.serve(workers=0)
    ports = [free_port(), free_port()]
    workers = [team.worker(("--metrics-port", str(port))) for port in ports]
    ids = team.create(api, SMALL, 24)
    # The outage begins mid-load: some tasks done, others rendering or waiting.
    wait_for(lambda: Counter(s.status for s in team.states().values())["succeeded"] >= 2, "the first results")
    s3.kill()
    went_down = time.monotonic()

    def paused(port: int) -> bool:
        figures = scrape(f"http://127.0.0.1:{port}/metrics")
        return (figures[("dailies_dependency_up", (("dependency", "storage"),))] == 0
                and figures[("dailies_claims_paused", ())] == 1)

    # Every worker sees it (an upload fails) and stops claiming; readiness says which dependency.
    wait_for(lambda: all(paused(p) for p in ports), "both workers to pause claiming", timeout=120)
    ready = httpx.get(f"{api.root}/readyz", timeout=30)
    assert ready.status_code == 503 and ready.json()["error"]["param"] == "storage", ready.text
    # Nothing failed, and while claims are paused the queue holds still: the API node's metric
    # is the number of queued tasks in the database.
    states = team.states()
    assert not [t for t in ids if states[t].status == "failed"]
    queued = sum(1 for s in states.values() if s.status == "queued")
    figures = scrape(f"{api.root}/metrics")
    assert figures[("dailies_queue_depth", (("status", "queued"), ("tier", "default")))] == queued
    assert queued > 0  # the outage held work back, it did not drain it into failures

    s3.restart()
    came_back = time.monotonic()
    wait_for(lambda: not any(paused(p) for p in ports), "the workers to resume", timeout=60)
    resumed = time.monotonic() - came_back
    final = wait_for(lambda: team.finished(ids), "every task to finish", timeout=300)
    drained = time.monotonic() - came_back
    assert Counter(final[t].status for t in ids) == {"succeeded": len(ids)}, Counter(final[t].status for t in ids)
    assert all(final[t].attempts == 1 for t in ids)  # no task rendered twice: nothing was killed
    assert wait_for(lambda: httpx.get(f"{api.root}/readyz", timeout=30).status_code == 200, "readiness")
    storage_errors = ("dailies_dependency_errors_total", (("dependency", "storage"),))
    errors = [scrape(f"http://127.0.0.1:{p}/metrics")[storage_errors] for p in ports]
    assert all(e > 0 for e in errors), errors
    for task_id in ids[:3]:  # the results are in the bucket and play
        record = httpx.get(f"{api.base_url}/contents/generations/tasks/{task_id}",
                           headers={"Authorization": f"Bearer {KEY}"}).json()
        assert httpx.get(record["content"]["video_url"]).content[4:8] == b"ftyp"
    assert all(w.alive() for w in workers)
    outcome_line("bucket outage", ids, final, outage_s=f"{came_back - went_down:.1f}",
                 claims_resumed_after_s=f"{resumed:.1f}", queue_drained_after_s=f"{drained:.1f}",
                 storage_errors=sum(errors))


def test_a_postgres_restart_mid_load_loses_nothing_and_every_process_goes_on(team, pg):
    api = team.serve(workers=0)
    workers = [team.worker() for _ in range(2)]
    receiver = Receiver()
    team.closers.append(receiver.close)
    # Each task with a callback: the API node's deliverers go on through the restart too.
    ids = team.create(api, {**SMALL, "callback_url": receiver.url("/hook")}, 16)
    wait_for(lambda: (c := Counter(s.status for s in team.states().values()))["succeeded"] >= 2 and c["running"],
             "renders under way")
    restarted_at = time.monotonic()
    pg.restart()
    came_back = time.monotonic()
    final = wait_for(lambda: _quietly(lambda: team.finished(ids)), "every task to finish", timeout=300)
    drained = time.monotonic() - came_back
    assert Counter(final[t].status for t in ids) == {"succeeded": len(ids)}, Counter(final[t].status for t in ids)
    assert all(p.alive() for p in [api, *workers])
    # Each process still works: new tasks go in through the API node and finish on every worker.
    pids = {w.pid for w in workers}
    after: list[str] = []

    def every_worker_rendered_again() -> bool:
        after.extend(team.create(api, SMALL, 2, prefix="after"))
        states = wait_for(lambda: team.finished(after), "the new tasks to finish", timeout=120)
        return {worker_pid(states[t].worker_id) for t in after} == pids

    wait_for(every_worker_rendered_again, "a new task finished on each worker", timeout=240)
    assert {team.states()[t].status for t in after} == {"succeeded"}

    def succeeded_callbacks() -> set[str]:
        return {d.json["id"] for d in receiver.deliveries("/hook") if d.status == "succeeded"}

    wait_for(lambda: succeeded_callbacks() >= set(ids), "a succeeded callback for every task", timeout=120)
    outcome_line("postgres restart", ids, final, restart_s=f"{came_back - restarted_at:.1f}",
                 queue_drained_after_s=f"{drained:.1f}")


def _quietly(probe):
    """A probe through a database that may be restarting: not yet, rather than an error."""
    try:
        return probe()
    except Exception:
        return None


# An outdated schema only: at the head a start reads one version row and does nothing more (no DDL, no
# lock: tests/service/db/test_schema.py), so five starts on it asked nothing of this test the upgrade does not.
@pytest.mark.parametrize("backend", ["pg", "sqlite"])
def test_five_workers_started_at_once_while_tasks_are_created_all_run(team, tmp_path, backend):
    if backend == "sqlite":
        team.env = {}
        team.engine.dispose()
        team.shared_dir.mkdir(parents=True, exist_ok=True)
        team.engine = create_engine(f"sqlite:///{team.shared_dir / 'dailies.sqlite3'}")
    # As the last release before versioned migrations left it (its fingerprint, no version table, none of
    # the later revisions' tables), and the team's processes started on it at once, as a `compose up`
    # after an upgrade starts them: the API node and five workers race to adopt and upgrade it, and
    # creates go in as soon as the API answers, while the workers are still starting.
    team.serve(workers=0).stop()  # makes the database, then leaves it to the test
    with team.engine.begin() as conn:
        conn.execute(text(next(s for s in migrate.baseline(SERVICE, conn.dialect.name)
                               if s.startswith("CREATE TABLE schema_version"))))
        conn.execute(text("INSERT INTO schema_version VALUES ('service', 'an older fingerprint', 0)"))
        conn.execute(text(f"DROP TABLE {SERVICE.version_table}"))
        undo_after_0001(conn)
    workers = [team.worker(wait=False) for _ in range(5)]
    api = team.serve(workers=0)
    created: list[str] = []
    refused: list[str] = []
    stop = threading.Event()

    def keep_creating() -> None:
        n = 0
        while not stop.is_set():
            response = httpx.post(f"{api.base_url}/contents/generations/tasks", timeout=60,
                                  headers={"Authorization": f"Bearer {KEY}"},
                                  json={**SMALL, "content": [{"type": "text", "text": f"load {n}"}]})
            (created if response.status_code == 200 else refused).append(
                response.json().get("id") if response.status_code == 200 else response.text)
            n += 1
            # Creates all through the starts, a few a second: unpaced, ~50 tasks a run were rendered after.
            stop.wait(0.2)

    creator = threading.Thread(target=keep_creating)
    creator.start()
    try:
        wait_for(lambda: len(created) >= 3, "creates under way")
        for worker in workers:
            worker.wait_started(timeout=120)
        started_with = len(created)
        wait_for(lambda: len(created) >= started_with + 5, "creates after every worker started")
    finally:
        stop.set()
        creator.join(60)
    assert refused == []
    assert all(w.alive() for w in workers)
    logs = "".join(w.output() for w in workers) + api.output()
    assert "Deadlock" not in logs and "Traceback" not in logs, logs[-3000:]
    final = wait_for(lambda: team.finished(created), "every created task to finish", timeout=300)
    assert Counter(final[t].status for t in created) == {"succeeded": len(created)}
    with team.engine.connect() as conn:
        # Upgraded once, to the head: one version row, the fingerprint's table dropped by 0002.
        assert conn.execute(text(f"SELECT version_num FROM {SERVICE.version_table}")).scalars().all() \
            == [migrate.head(SERVICE)]
        assert "schema_version" not in inspect(conn).get_table_names()
    outcome_line(f"five workers started under load ({backend}, outdated schema)", created, final,
                 created_while_starting=len(created) - 3, workers_alive=sum(w.alive() for w in workers))


@pytest.mark.parametrize("process,grace", [("worker", "60"), ("worker", "0"), ("serve", "60")])
def test_sigterm_mid_render_finishes_or_requeues_the_task_and_exits_0(team, process, grace):
    if process == "worker":
        api = team.serve(workers=0)
        stopping = team.worker(("--grace-period", grace))
    else:
        api = stopping = team.serve(workers=1, extra_args=("--grace-period", grace))
    [task_id] = team.create(api, LONG)
    wait_for(lambda: team.states()[task_id].status == "running", "the render to start")
    stopped_at = time.monotonic()
    assert stopping.terminate() == 0
    stop_s = time.monotonic() - stopped_at
    row = team.states()[task_id]
    if grace == "0":
        # Put back at once, and the run does not count against the task's attempts.
        assert (row.status, row.attempts, row.worker_id) == ("queued", 0, None)
        after = team.worker()
        wait_for(lambda: team.states()[task_id].status in TERMINAL, "another worker to finish it")
        assert team.states()[task_id].status == "succeeded"
        assert after.alive()
    else:
        assert row.status == "succeeded", row
    assert "Traceback" not in stopping.output()
    final = team.states()
    outcome_line(f"SIGTERM on {process} mid-render, grace {grace} s", [task_id], final,
                 stopped_after_s=f"{stop_s:.1f}", status_at_exit=row.status)
