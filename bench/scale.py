"""Team scale: render throughput with 1, 2 and 3 worker processes, create and list latency on
PostgreSQL against SQLite, and a list page out of 1,000,000 stored tasks on PostgreSQL.

    python bench/scale.py                      # everything, a few minutes on 2 cores
    python bench/scale.py --tasks 30 --rows 200000

It starts its own servers in temporary directories, on loopback only (tests/support/servers.py): a
throwaway PostgreSQL cluster (Debian's postgresql-15) and SeaweedFS's S3 gateway, and stops them
and every `dailies` process it started at the end.

1. Throughput: one API node (`dailies serve --workers 0`) and N render workers (`dailies worker
   --slots 1`) on one database and one bucket; `--tasks` small renders (480p, 4 s, no audio) created
   at once; tasks finished per minute from the first create to the last success. On 2 cores a
   render uses about one core, so expect less than N times one worker's rate.
2. Create and list p50 over HTTP, sequential requests from this process, against `dailies serve
   --workers 0` on SQLite (data directory) and on PostgreSQL + S3, in the same run.
3. A page of 100 (newest first, with the total) out of `--rows` tasks of one project spread over
   the last 7 days, bulk-loaded with `INSERT ... SELECT FROM generate_series` (not through the API):
   HTTP p50 and the SQL alone (`TaskStore.list` in this process).

Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import math
import shutil
import sys
import tempfile
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dailies.generator.protocol import RenderedOutput  # noqa: E402
from tests.support.processes import Serve, Worker  # noqa: E402
from tests.support.servers import PostgresServer, SeaweedServer  # noqa: E402

TASKS = "/contents/generations/tasks"
KEY = "scale-bench-key"
BUCKET = "dailies-bench"
SMALL_RENDER = {"model": "doubao-seedance-2-0-260128", "resolution": "480p", "duration": 4, "generate_audio": False}
TEXT_BODY = {"model": "doubao-seedance-2-0-260128", "content": [{"type": "text", "text": "a cat"}]}
# A project may hold 120 queued tasks: the create-latency run moves to the next key every 100.
LATENCY_KEYS = 10
PER_KEY = 100


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    if not ordered:
        return math.nan
    return ordered[min(len(ordered) - 1, max(0, math.ceil(q * len(ordered)) - 1))]


def timed(call) -> float:
    started = time.perf_counter()
    call()
    return (time.perf_counter() - started) * 1000


class Team:
    """The servers and a fresh database + bucket prefix per scenario."""

    def __init__(self, workdir: Path) -> None:
        self.workdir = workdir
        self.postgres = PostgresServer().start()
        self.s3 = SeaweedServer().start()
        self.s3.create_bucket(BUCKET)

    def environment(self, name: str) -> dict[str, str]:
        return {**self.s3.aws_environment(), "DAILIES_DATABASE_URL": self.postgres.create_database(name),
                "DAILIES_STORAGE": f"s3://{BUCKET}/{name}/"}

    def stop(self) -> None:
        self.s3.stop()
        self.postgres.stop()


def throughput(team: Team, workers: int, count: int) -> tuple[float, float]:
    """(tasks per minute, seconds) for `count` small renders on `workers` worker processes."""
    env = team.environment(f"throughput_{workers}")
    api = Serve(team.workdir / f"tp{workers}-api", workers=0, env=env, api_keys=f"bench:{KEY}")
    pool = [Worker(team.workdir / f"tp{workers}-worker-{n}", slots=1, env=env) for n in range(workers)]
    try:
        with httpx.Client(base_url=api.base_url, headers={"Authorization": f"Bearer {KEY}"}, timeout=30) as client:
            started = time.perf_counter()
            ids = []
            for n in range(count):
                body = {**SMALL_RENDER, "content": [{"type": "text", "text": f"take {n}"}]}
                ids.append(client.post(TASKS, json=body).raise_for_status().json()["id"])
            pending = set(ids)
            while pending:
                time.sleep(0.1)
                done = client.get(TASKS, params={"page_size": 500, "filter.status": "succeeded"}).json()["items"]
                pending -= {item["id"] for item in done}
                failed = client.get(TASKS, params={"filter.status": "failed"}).json()["total"]
                if failed:
                    raise RuntimeError(f"{failed} task(s) failed")
            elapsed = time.perf_counter() - started
    finally:
        for process in [*pool, api]:
            process.stop()
    return count / elapsed * 60, elapsed


def latency(api: Serve, creates: int, lists: int) -> tuple[float, float]:
    """(create p50, list p50) in ms, sequential requests."""
    create_ms, list_ms = [], []
    with httpx.Client(base_url=api.base_url, timeout=30) as client:
        for n in range(creates + 10):
            headers = {"Authorization": f"Bearer {KEY}-{(n // PER_KEY) % LATENCY_KEYS}"}
            ms = timed(lambda h=headers: client.post(TASKS, json=TEXT_BODY, headers=h).raise_for_status())
            if n >= 10:
                create_ms.append(ms)
        time.sleep(1.1)  # the list window ends at the current second
        headers = {"Authorization": f"Bearer {KEY}-0"}
        for n in range(lists + 10):
            ms = timed(lambda: client.get(TASKS, params={"page_size": 20}, headers=headers).raise_for_status())
            if n >= 10:
                list_ms.append(ms)
    return percentile(create_ms, 0.5), percentile(list_ms, 0.5)


def latency_keys() -> str:
    return ",".join(f"p{n}:{KEY}-{n}" for n in range(LATENCY_KEYS))


BULK_REQUEST = '{"model":"doubao-seedance-2-0-260128","content":[{"type":"text","text":"a bulk-loaded shot"}]}'
# What a worker stores for a 720p 16:9 5 s render (the service reads it back with RenderedOutput.from_json).
BULK_RESULT = RenderedOutput(width=1280, height=720, resolution="720p", ratio="16:9", duration=5, frames=None,
                             frame_count=121, fps=24, seed=1, generate_audio=True, completion_tokens=108900).to_json()
BULK_LOAD = """
INSERT INTO tasks (id, project, model, endpoint, status, service_tier, tier_rank, request, seed, draft,
                   execution_expires_after, deadline_at, created_at, updated_at, started_at, finished_at,
                   worker_id, heartbeat_at, attempts, result, video_file)
SELECT 'cgt-' || to_char(to_timestamp(created), 'YYYYMMDDHH24MISS') || '-' || lpad(to_hex(g), 5, '0'),
       'bench', 'doubao-seedance-2-0-260128',
       CASE WHEN g % 3 = 0 THEN 'ep-local-seedance-2-0-260128' ELSE 'doubao-seedance-2-0-260128' END,
       CASE WHEN g % 20 = 7 THEN 'failed' WHEN g % 50 = 1 THEN 'cancelled' ELSE 'succeeded' END,
       CASE WHEN g % 10 = 0 THEN 'flex' ELSE 'default' END, CASE WHEN g % 10 = 0 THEN 1 ELSE 0 END,
       :request, g, false, 172800, created + 172800, created, created + 60, created + 5, created + 60,
       'bulk-host-1-abcdef-0', created + 60, 1, :result, 'video.mp4'
FROM generate_series(1, :rows) AS g,
     LATERAL (SELECT (:now - 604000 + (g::bigint * 604000) / :rows)::bigint AS created) AS t
"""


def million(team: Team, rows: int, requests: int) -> list[tuple[str, float, float, int]]:
    """[(query, HTTP p50 ms, SQL p50 ms, total)] for pages of 100 out of `rows` tasks."""
    from sqlalchemy import text

    from dailies.service.db.engine import make_engine
    from dailies.service.tasks.store import TaskStore
    from dailies.spec.models import ListTasksQuery

    env = team.environment("million")
    engine = make_engine(env["DAILIES_DATABASE_URL"])
    results = []
    try:
        started = time.perf_counter()
        with engine.begin() as conn:
            conn.execute(text(BULK_LOAD), {"rows": rows, "now": int(time.time()), "request": BULK_REQUEST,
                                           "result": BULK_RESULT})
        # A million counter updates in one transaction leave a million dead row versions behind;
        # autovacuum clears them within a minute in steady use, as this does at once.
        with engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
            conn.execute(text("VACUUM ANALYZE tasks"))
            conn.execute(text("VACUUM ANALYZE task_counts"))
        loaded = time.perf_counter() - started
        print(f"   bulk load of {rows:,} rows (generate_series) + VACUUM ANALYZE of tasks and counters: "
              f"{loaded:.1f} s")
        api = Serve(team.workdir / "million-api", workers=0, env=env, api_keys=f"bench:{KEY}")
        store = TaskStore(engine)
        with engine.connect() as conn:
            some_ids = list(conn.execute(text("SELECT id FROM tasks WHERE service_tier = 'default' "
                                              "ORDER BY seq DESC LIMIT 5 OFFSET 1000")).scalars())
        cases = [("no filter", {}), ("filter.status=failed", {"filter.status": "failed"}),
                 ("filter.task_ids (5 ids)", {"filter.task_ids": some_ids}), ("page_num=100", {"page_num": "100"})]
        try:
            with httpx.Client(base_url=api.base_url, headers={"Authorization": f"Bearer {KEY}"}, timeout=60) as client:
                for name, params in cases:
                    params = {"page_size": "100", **params}
                    query = ListTasksQuery.model_validate(params)
                    http_ms, sql_ms = [], []
                    total = client.get(TASKS, params=params).raise_for_status().json()["total"]
                    for n in range(requests + 3):
                        h = timed(lambda p=params: client.get(TASKS, params=p).raise_for_status())
                        s = timed(lambda q=query: store.list("bench", q, int(time.time())))
                        if n >= 3:
                            http_ms.append(h)
                            sql_ms.append(s)
                    results.append((name, percentile(http_ms, 0.5), percentile(sql_ms, 0.5), total))
        finally:
            api.stop()
    finally:
        engine.dispose()
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--tasks", type=int, default=60, help="renders per throughput run")
    parser.add_argument("--rows", type=int, default=1_000_000, help="stored tasks for the list page")
    parser.add_argument("--requests", type=int, default=200, help="sequential requests per latency figure")
    parser.add_argument("--skip-throughput", action="store_true", help="leave out section 1 (the renders)")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="dailies-scale-"))
    team = Team(workdir)
    try:
        print(f"1. throughput: {args.tasks} renders (480p, 4 s, no audio), one API node, N workers of 1 slot")
        rates = {}
        for workers in () if args.skip_throughput else (1, 2, 3):
            rate, seconds = throughput(team, workers, args.tasks)
            rates[workers] = rate
            print(f"   {workers} worker(s): {rate:6.1f} tasks/min ({seconds:.1f} s)")

        print(f"2. create and list (page_size=20) p50, {args.requests} sequential requests each")
        sqlite_api = Serve(workdir / "latency-sqlite", workers=0, api_keys=latency_keys())
        try:
            sqlite = latency(sqlite_api, args.requests, args.requests)
        finally:
            sqlite_api.stop()
        pg_api = Serve(workdir / "latency-pg", workers=0, env=team.environment("latency"), api_keys=latency_keys())
        try:
            postgres = latency(pg_api, args.requests, args.requests)
        finally:
            pg_api.stop()
        print(f"   create p50: SQLite {sqlite[0]:.2f} ms, PostgreSQL {postgres[0]:.2f} ms; "
              f"list p50: SQLite {sqlite[1]:.2f} ms, PostgreSQL {postgres[1]:.2f} ms")

        print(f"3. a page of 100 out of {args.rows:,} tasks on PostgreSQL")
        pages = million(team, args.rows, min(args.requests, 50))
    finally:
        team.stop()
        shutil.rmtree(workdir, ignore_errors=True)

    print()
    print(f"{'figure':<72}{'SQLite':>10}{'PostgreSQL':>12}")
    for workers, rate in rates.items():
        print(f"{f'tasks finished per minute, {workers} worker process(es)':<72}{'':>10}{rate:>12.1f}")
    print(f"{'create p50 (ms)':<72}{sqlite[0]:>10.2f}{postgres[0]:>12.2f}")
    print(f"{'list of 20 p50 (ms)':<72}{sqlite[1]:>10.2f}{postgres[1]:>12.2f}")
    for name, http_p50, sql_p50, total in pages:
        label = f"list of 100 from {args.rows:,}, {name} (total {total:,})"
        print(f"{label:<72}{'':>10}{http_p50:>12.2f}   (SQL alone {sql_p50:.2f})")
    print("throughput: first create to last success; latency: one client, sequential, over loopback HTTP")


if __name__ == "__main__":
    main()
