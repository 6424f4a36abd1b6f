"""A team deployment on one machine: 2 API nodes (`dailies serve --workers 0`) and 3 render
workers (`dailies worker`) sharing one PostgreSQL database and one bucket, nothing else.

30 tasks go in through both API nodes, each with a callback to a loopback receiver. One worker is
SIGKILLed while it renders. Then: every task succeeded; each ran exactly once, except those the
killed worker held, which ran exactly twice and were finished by another worker; every callback
event was delivered exactly once; every result is in the bucket behind a presigned URL.
"""

from __future__ import annotations

import os
import re
import signal
import time
from collections import Counter

import httpx
import pytest
from sqlalchemy import create_engine, select

from dailies.service.db.tables import callback_events, tasks
from tests.service.callbacks.receiver import Receiver
from tests.support.processes import Serve, Worker, stop_all
from tests.support.waiting import wait_for

from ..conftest import TEST_BUCKET

pytestmark = pytest.mark.slow

KEY = "cluster-key-0001"
TASK_COUNT = 30
STALE_AFTER = 3.0
TERMINAL = ("succeeded", "failed", "expired", "cancelled")
# Small renders, so 30 of them stay quick on 2 cores: 480p, 2 s, no audio (30 of 4 s took as long as the
# rest of the team tests together; the kill, the requeue and the spread over workers need no more).
BODY = {"model": "doubao-seedance-1-0-pro-250528", "resolution": "480p", "duration": 2}


def worker_pid(worker_id: str) -> int:
    """The process of a render slot's worker id (`<host>-<pid>-<tag>-<slot>`)."""
    return int(re.fullmatch(r".*-(\d+)-[0-9a-f]{6}-\d+", worker_id).group(1))


@pytest.fixture
def cluster_database(postgres_server):
    name = f"dailies_cluster_{os.getpid()}"
    yield postgres_server.create_database(name)
    postgres_server.drop_database(name)


def test_two_api_nodes_and_three_workers_share_only_the_database_and_the_bucket(
        tmp_path, cluster_database, s3_server):
    storage = f"s3://{TEST_BUCKET}/cluster-{os.getpid()}/"
    env = {**s3_server.aws_environment(), "DAILIES_DATABASE_URL": cluster_database, "DAILIES_STORAGE": storage}
    engine = create_engine(cluster_database.replace("postgresql://", "postgresql+psycopg://"))
    receiver = Receiver()
    processes = []
    try:
        api_nodes = [Serve(tmp_path / f"api-{n}", workers=0, stale_after=STALE_AFTER, env=env,
                           api_keys=f"team:{KEY}") for n in range(2)]
        processes += api_nodes
        workers = [Worker(tmp_path / f"worker-{n}", slots=1, stale_after=STALE_AFTER, env=env) for n in range(3)]
        processes += workers

        def states() -> dict:
            with engine.connect() as conn:
                return {r.id: r for r in conn.execute(select(tasks.c.id, tasks.c.status, tasks.c.attempts,
                                                             tasks.c.worker_id))}

        ids = []
        for n in range(TASK_COUNT):
            node = api_nodes[n % 2]
            response = httpx.post(f"{node.base_url}/contents/generations/tasks",
                                  headers={"Authorization": f"Bearer {KEY}"},
                                  json={**BODY, "content": [{"type": "text", "text": f"take {n}"}],
                                        "callback_url": receiver.url(f"/cb/{n}")})
            assert response.status_code == 200, response.text
            ids.append(response.json()["id"])

        # Kill a worker mid-render. It is frozen (SIGSTOP) before its tasks are read, so the task it holds
        # cannot finish between the read and the kill (on a busy machine it did, and nothing was requeued).
        victim, held = None, []
        deadline = time.monotonic() + 120
        while not held:
            assert time.monotonic() < deadline, "no worker was found holding a running task"
            running = wait_for(lambda: [r for r in states().values() if r.status == "running"],
                               "a task to start rendering", 120)
            victim = next(w for w in workers if w.pid == worker_pid(running[0].worker_id))
            victim.proc.send_signal(signal.SIGSTOP)
            held = [r.id for r in states().values()
                    if r.status == "running" and worker_pid(r.worker_id) == victim.pid]
            if not held:
                victim.proc.send_signal(signal.SIGCONT)
        victim.kill()

        final = wait_for(lambda: (s := states()) and all(s[t].status in TERMINAL for t in ids) and s,
                         "every task to finish", 240)
        assert Counter(final[t].status for t in ids) == {"succeeded": TASK_COUNT}
        for task_id in ids:
            expected_runs = 2 if task_id in held else 1
            assert final[task_id].attempts == expected_runs, (task_id, final[task_id])
            assert worker_pid(final[task_id].worker_id) != victim.pid or task_id not in held
        live = {w.pid for w in workers if w is not victim}
        finished_by = Counter(worker_pid(final[t].worker_id) for t in ids)
        assert set(finished_by) - {victim.pid} <= live and len(set(finished_by) & live) == 2, finished_by
        # Each start of a render is logged once, by the worker that claimed it.
        logs = "".join(w.output() for w in workers)
        for task_id in ids:
            assert logs.count(f"task {task_id} -> running") == final[task_id].attempts, task_id

        # Every callback event delivered, each exactly once, in each task's order.
        def settled():
            with engine.connect() as conn:
                events = conn.execute(select(callback_events).order_by(callback_events.c.seq)).all()
            return events if events and all(e.state != "pending" for e in events) else None

        events = wait_for(settled, "every callback event to be delivered", 120)
        assert {e.state for e in events} == {"delivered"}
        deliveries = receiver.deliveries()
        assert sorted(d.webhook_id for d in deliveries) == sorted(e.webhook_id for e in events)
        for n, task_id in enumerate(ids):
            statuses = [d.status for d in receiver.deliveries(f"/cb/{n}")]
            requeued = ["queued", "running"] if task_id in held else []
            assert statuses == ["queued", "running", *requeued, "succeeded"], (task_id, statuses)

        # Results are objects in the bucket, handed out as presigned URLs of the bucket.
        listed = httpx.get(f"{api_nodes[1].base_url}/contents/generations/tasks",
                           params={"page_size": 100}, headers={"Authorization": f"Bearer {KEY}"}).json()
        assert listed["total"] == TASK_COUNT
        endpoint = s3_server.aws_environment()["AWS_ENDPOINT_URL"]
        for item in listed["items"][:5]:
            assert item["content"]["video_url"].startswith(f"{endpoint}/{TEST_BUCKET}/cluster-")
            video = httpx.get(item["content"]["video_url"])
            assert video.status_code == 200 and video.content[4:8] == b"ftyp"
        stored = s3_server.keys(TEST_BUCKET, storage.removeprefix(f"s3://{TEST_BUCKET}/"))
        assert {key.rsplit("/", 2)[1] for key in stored} == set(ids)
    finally:
        stop_all(processes)
        receiver.close()
        engine.dispose()
