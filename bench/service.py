"""Task service speed over real HTTP, measured against a bare FastAPI endpoint in the same run.

    python bench/service.py                   # everything, a few minutes on 2 cores
    python bench/service.py --seconds 5       # shorter load runs
    python bench/service.py --tasks 20000     # fewer stored tasks for the list-latency section
    python bench/service.py --backend sqlite  # load runs on SQLite only (no PostgreSQL needed)

Every server is a separate `uvicorn.run(app, host="127.0.0.1", port=..., log_level="warning")`
process (one event loop, h11 or whatever uvicorn picks, as `dailies up` would run). Load comes
from `wrk` (bench/wrk_load.py: one thread, 16 connections in a closed loop, a Lua script writing
each request), after one second of warm-up: a load generator in C, so the server sets the pace.
Latency is what wrk saw, queueing in the server included. Sections 1-3 run on SQLite + files and
on PostgreSQL + S3 (a throwaway cluster and SeaweedFS, started on loopback) in the same run.

1. Create: POST /api/v3/contents/generations/tasks with a small text body and a bearer key, on the
   real service (`workers=0`, so nothing renders). A project may hold 120 queued tasks (429
   beyond), so the service is given thousands of keys, one project each, and the clients move to
   the next key every 100 creates: every create should be a 200, and non-200s are counted.
2. The same load on a bare FastAPI app on the same uvicorn settings: a POST that parses the JSON
   body and returns {"id": ...}. Target: the service creates at least half as fast as the bare
   endpoint.
3. List: GET ...?page_size=20 on projects holding 100 tasks each, against a bare GET returning a
   small JSON.
4. List latency with many stored tasks (100,000 by default, one project, spread over the last 7
   days, mixed statuses, models, endpoints and tiers, bulk-inserted through `dailies.service.db`):
   up to 200 sequential GETs with page_size=100 per query shape (12 s at most per shape), each
   followed by the same `TaskStore.list` call in-process and by building the page's records and
   JSON, so the SQL time can be told from record building, JSON and HTTP; SQLite's plan of each
   query is printed too. Target (issue 16): a page of 100 under 5 ms at p50 at 1,000,000 tasks
   (`--tasks 1000000`; the default 100,000 fills in seconds).

Besides req/s and latency, each load run shows the server's CPU time per request (from
/proc/<pid>/stat, where there is one) and how busy the load generator was: on 2 cores a client
near 100 % means the client, not the server, set the pace. This script prints figures; it asserts
nothing.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import httpx
from fastapi import FastAPI, Request

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import wrk_load  # noqa: E402

TASKS = "/api/v3/contents/generations/tasks"
MODEL = "doubao-seedance-2-0-260128"
CREATE_BODY = {"model": MODEL, "content": [{"type": "text", "text": "a cat"}]}
CONCURRENCY = 16
WARMUP_SECONDS = 1.0
# Keys of the load runs: one project each; a client moves to the next key every PER_KEY creates,
# which stays under the 120 queued tasks a project may hold.
LOAD_KEYS = 5000
PER_KEY = 100
# Section 4: requests per query shape (HTTP and in-process alike).
SEQUENTIAL_REQUESTS = 200
SEQUENTIAL_WARMUP = 10
# ... or fewer, when a query shape is so slow that they would take longer than this.
CASE_BUDGET_SECONDS = 12.0
LIST_TARGET_MS = 5.0


def load_key(index: int) -> str:
    return f"bench-{index:05d}"


# ---------- servers (run in child processes) ----------


def serve_service(data_dir: Path, port: int, keys: int) -> None:
    import uvicorn

    from dailies.service.api.app import create_app
    from dailies.service.settings import Settings

    api_keys = {load_key(i): f"project-{i:05d}" for i in range(keys)} if keys else {"bench": "bench"}
    # The team backend when the parent set one (see `team_backend`), else SQLite + files in data_dir.
    settings = Settings(data_dir=data_dir, api_keys=api_keys, workers=0, log_requests=False,
                        public_url=f"http://127.0.0.1:{port}",
                        database_url=os.environ.get("DAILIES_DATABASE_URL"),
                        storage=os.environ.get("DAILIES_STORAGE"))
    uvicorn.run(create_app(settings), host="127.0.0.1", port=port, log_level="warning")


def bare_app():
    """The smallest app of the same stack: FastAPI, a JSON body parsed, a small JSON answered."""
    import uuid

    app = FastAPI()

    @app.get("/healthz")
    async def healthz() -> dict:
        return {"status": "ok"}

    @app.post(TASKS)
    async def create(request: Request) -> dict:
        await request.json()
        return {"id": f"cgt-{uuid.uuid4().hex[:20]}"}

    @app.get(TASKS)
    async def list_tasks() -> dict:
        return {"total": 1, "items": [{"id": "cgt-20250101000000-abcde", "status": "queued"}]}

    return app


def serve_bare(port: int) -> None:
    import uvicorn

    uvicorn.run(bare_app(), host="127.0.0.1", port=port, log_level="warning")


# ---------- orchestration ----------


def percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return math.nan
    return sorted_values[min(len(sorted_values) - 1, max(0, math.ceil(q * len(sorted_values)) - 1))]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU time of a process, from /proc (None where there is no /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Server:
    """A server child process on a free loopback port; stopped by `stop` (always called)."""

    def __init__(self, role: str, *extra: str, env: dict[str, str] | None = None) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.process = subprocess.Popen(
            [sys.executable, __file__, "--role", role, "--port", str(self.port), *extra], cwd=ROOT,
            env={**os.environ, **(env or {})},
        )

    def wait_ready(self, timeout: float = 60.0) -> float:
        started = time.perf_counter()
        with httpx.Client(base_url=self.url, trust_env=False, timeout=2.0) as client:
            while time.perf_counter() - started < timeout:
                if self.process.poll() is not None:
                    raise RuntimeError(f"server exited with code {self.process.returncode}")
                try:
                    if client.get("/healthz").status_code == 200:
                        return time.perf_counter() - started
                except httpx.HTTPError:
                    pass
                time.sleep(0.05)
        raise RuntimeError(f"server on port {self.port} did not answer within {timeout:g} s")

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def run_load(server: Server, method: str, seconds: float, list_keys: int = 0) -> dict:
    """A warm-up, then one measured wrk run; creates continue with the keys after the warm-up's,
    so no project passes its quota of queued tasks."""
    server_cpu = lambda: cpu_seconds(server.process.pid)  # noqa: E731
    if method == "POST":
        shape = {"method": "POST", "path": TASKS, "body": json.dumps(CREATE_BODY), "keys": LOAD_KEYS,
                 "per_key": PER_KEY}
    else:
        shape = {"method": "GET", "path": f"{TASKS}?page_size=20", "keys": max(1, list_keys), "per_key": 1}
    warm = wrk_load.run(server.url, seconds=WARMUP_SECONDS, **shape)
    first_key = warm["requests"] // shape["per_key"] + 1 if method == "POST" else 0
    result = wrk_load.run(server.url, seconds=seconds, first_key=first_key, server_cpu=server_cpu, **shape)
    result["sent"] = warm["requests"] + result["requests"]
    return result


def load_header() -> str:
    return (f"{'app':<9}{'requests':>9}{'non-200':>9}{'req/s':>9}{'p50 ms':>9}{'p99 ms':>9}"
            f"{'srv CPU ms/req':>16}{'srv CPU':>9}{'client CPU':>12}")


def load_row(name: str, r: dict) -> str:
    cpu_ms = f"{r['server_cpu_ms']:.2f}" if "server_cpu_ms" in r else "n/a"
    cpu = f"{r['server_cpu']:.0%}" if "server_cpu" in r else "n/a"
    row = (f"{name:<9}{r['requests']:>9}{r['non200']:>9}{r['rps']:>9.0f}{r['p50']:>9.2f}{r['p99']:>9.2f}"
           f"{cpu_ms:>16}{cpu:>9}{r['client_cpu']:>12.0%}")
    if r["non200"] or r["errors"]:
        row += f"   socket errors {r['errors'] or 0}"
    return row


def compare(service: dict, bare: dict, target: float | None) -> None:
    ratio = service["rps"] / bare["rps"]
    verdict = f" (target >= {target:.2f}: {'met' if ratio >= target else 'missed'})" if target else ""
    print(f"service/bare: throughput {ratio:.2f}{verdict}; p50 latency {service['p50'] / bare['p50']:.1f}x", end="")
    if "server_cpu_ms" in service and "server_cpu_ms" in bare:
        print(f"; server CPU per request {service['server_cpu_ms'] / bare['server_cpu_ms']:.1f}x "
              f"(throughput ratio if the server alone set the pace: "
              f"{bare['server_cpu_ms'] / service['server_cpu_ms']:.2f})")
    else:
        print()
    idle = [name for name, r in (("service", service), ("bare", bare))
            if r.get("server_cpu", 1.0) < 0.75 and r["client_cpu"] < 0.75]
    if idle:
        runs = " and ".join(idle) + (" runs" if len(idle) > 1 else " run")
        print(f"  note: in the {runs} neither the server nor the client kept a core busy, so the machine "
              "was busy elsewhere: trust CPU per request over req/s and p99")


def load_average() -> str:
    try:
        return f"load average {os.getloadavg()[0]:.1f}"
    except OSError:
        return "load average n/a"


def start_team_backend(workdir: Path):
    """bench/scale.py's throwaway PostgreSQL cluster and SeaweedFS S3 gateway on loopback, or None,
    said, where they cannot start (no postgresql-15, no dev extra)."""
    from scale import Team

    try:
        return Team(workdir)
    except Exception as exc:  # noqa: BLE001 - any reason it cannot start is reported, not fatal
        print(f"(PostgreSQL + S3 figures left out: {exc}; `apt-get install postgresql-15` and the dev extra "
              "provide them)")
        print()
        return None


def load_sections(seconds: float, workdir: Path, backend: str, env: dict[str, str] | None = None) -> None:
    service = Server("serve-service", "--data-dir", str(workdir / f"load-{backend}"), "--keys", str(LOAD_KEYS),
                     env=env)
    bare = Server("serve-bare")
    try:
        service.wait_ready()
        bare.wait_ready()
        print(f"1-2. create on {backend}: POST {TASKS}, {CONCURRENCY} clients, {seconds:g} s each "
              f"after {WARMUP_SECONDS:g} s warm-up ({load_average()})")
        print(load_header())
        created = run_load(service, "POST", seconds)
        print(load_row("service", created))
        bare_post = run_load(bare, "POST", seconds)
        print(load_row("bare", bare_post))
        compare(created, bare_post, 0.5)
        print()
        # Projects filled to PER_KEY tasks by the create run (one key partly filled between warm-up and run).
        full = max(1, min(LOAD_KEYS, created["sent"] // PER_KEY - 1))
        print(f"3. list on {backend}: GET {TASKS}?page_size=20, {CONCURRENCY} clients, {seconds:g} s each; "
              f"service: {full} projects of {PER_KEY} tasks ({load_average()})")
        print(load_header())
        listed = run_load(service, "GET", seconds, list_keys=full)
        print(load_row("service", listed))
        bare_get = run_load(bare, "GET", seconds)
        print(load_row("bare", bare_get))
        compare(listed, bare_get, 0.5)
        print("srv CPU: the server process's CPU time (all its threads) per request and per second of the run; "
              "client CPU: the load generator's")
        if env:
            print("(PostgreSQL's own CPU is not in srv CPU: it runs in processes of its own)")
        print()
    finally:
        service.stop()
        bare.stop()


# ---------- section 4: many stored tasks ----------

PROMPTS = (
    "a cat", "a quiet harbour at dawn, boats drifting out through the mist",
    "a red kite over a wheat field in the wind", "slow dolly shot along a rainy neon street at night",
    "close-up of hands kneading bread dough on a floured table", "a paper boat sailing down a gutter stream",
    "time-lapse of clouds rolling over a mountain ridge", "a robot watering plants on a balcony",
)
# (weight, model id, what the request named, service tier)
MIX = (
    (40, "doubao-seedance-2-0-260128", "doubao-seedance-2-0-260128", "default"),
    (12, "doubao-seedance-2-0-260128", "ep-local-seedance-2-0-260128", "default"),
    (14, "doubao-seedance-2-0-fast-260128", "doubao-seedance-2-0-fast-260128", "default"),
    (14, "doubao-seedance-1-5-pro-251215", "doubao-seedance-1-5-pro-251215", "default"),
    (8, "doubao-seedance-1-5-pro-251215", "doubao-seedance-1-5-pro-251215", "flex"),
    (8, "doubao-seedance-1-0-pro-250528", "doubao-seedance-1-0-pro-250528", "default"),
    (4, "doubao-seedance-1-0-pro-250528", "doubao-seedance-1-0-pro-250528", "flex"),
)
TERMINAL = (("succeeded", 80), ("failed", 8), ("cancelled", 6), ("expired", 6))
QUEUED_ROWS, RUNNING_ROWS = 100, 20
ID_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789"


def request_templates(rng: random.Random) -> list[tuple[str, str, str, dict, str]]:
    """(model, endpoint, tier, request dict, request JSON) combinations, each checked against
    CreateTaskRequest, drawn with the MIX weights."""
    from dailies.spec.models import CreateTaskRequest

    templates = []
    for weight, model, endpoint, tier in MIX:
        for _ in range(weight):
            request: dict = {"model": endpoint, "content": [{"type": "text", "text": rng.choice(PROMPTS)}]}
            if rng.random() < 0.5:
                request["resolution"] = rng.choice(("480p", "720p"))
            if rng.random() < 0.4:
                request["ratio"] = rng.choice(("16:9", "9:16", "1:1"))
            if rng.random() < 0.3:
                request["duration"] = rng.choice((5, 8, 10))
            if rng.random() < 0.2:
                request["return_last_frame"] = True
            if tier == "flex":
                request["service_tier"] = "flex"
            text = json.dumps(CreateTaskRequest.model_validate(request).to_json_dict(), separators=(",", ":"))
            templates.append((model, endpoint, tier, request, text))
    return templates


def synthetic_rows(count: int, now: int, rng: random.Random) -> list[dict]:
    """`count` task rows of one project ("bench"), oldest first (as inserted over a week): the
    newest are queued or running, the rest terminal with consistent timestamps."""
    from dailies.spec import limits as L
    from dailies.spec.models import DEFAULTS
    from dailies.spec.pixels import dimensions, estimate_tokens

    templates = request_templates(rng)
    # Inside the retention window with an hour to spare, so nothing is purged while measuring.
    oldest, newest = now - L.RECORD_RETENTION_SECONDS + 3600, now - 60
    created = sorted(rng.randint(oldest, newest) for _ in range(count))
    statuses, weights = zip(*TERMINAL, strict=True)
    ids: set[str] = set()
    rows = []
    for index, created_at in enumerate(created):
        model, endpoint, tier, request, request_json = rng.choice(templates)
        task_id = ""
        while not task_id or task_id in ids:
            stamp = time.strftime("%Y%m%d%H%M%S", time.gmtime(created_at))
            task_id = f"cgt-{stamp}-{''.join(rng.choices(ID_CHARS, k=5))}"
        ids.add(task_id)
        from_end = count - index
        if from_end <= QUEUED_ROWS:
            status = "queued"
        elif from_end <= QUEUED_ROWS + RUNNING_ROWS:
            status = "running"
        else:
            status = rng.choices(statuses, weights)[0]
        expires_after = DEFAULTS["execution_expires_after"]
        if status == "expired":
            if created_at + L.EXECUTION_EXPIRES_MIN >= now - 60:
                status = "failed"  # too young to have expired
            else:
                expires_after = min(expires_after, rng.randrange(L.EXECUTION_EXPIRES_MIN, now - 60 - created_at))
        seed = rng.randrange(L.SEED_MAX + 1)
        row = {
            "id": task_id, "project": "bench", "model": model, "endpoint": endpoint, "status": status,
            "service_tier": tier, "tier_rank": 0 if tier == "default" else 1, "priority": None,
            "request": request_json, "seed": seed, "draft": False, "draft_task_id": None,
            "safety_identifier": None, "callback_url": None, "execution_expires_after": expires_after,
            "deadline_at": created_at + expires_after, "created_at": created_at, "updated_at": created_at,
            "started_at": None, "finished_at": None, "worker_id": None, "heartbeat_at": None, "attempts": 0,
            "error_code": None, "error_message": None, "result": None, "video_file": None,
            "last_frame_file": None,
        }
        worker = f"render-host-4242-{index % 7:06x}-0"
        started = min(now - 2, created_at + rng.randint(1, 300))
        finished = min(now - 1, started + rng.randint(15, 120))
        if status == "running":
            # A live worker in another process: its heartbeat is fresh for the whole bench.
            row.update(started_at=started, updated_at=started, worker_id=worker, attempts=1,
                       heartbeat_at=float(now + 3600))
        elif status == "succeeded":
            resolution = request.get("resolution", "720p")
            ratio = request.get("ratio", "16:9")
            duration = request.get("duration", DEFAULTS["duration"])
            width, height = dimensions(model, resolution, ratio)
            audio = not model.startswith("doubao-seedance-1-0")
            used = {"width": width, "height": height, "resolution": resolution, "ratio": ratio,
                    "duration": duration, "frames": None, "frame_count": 24 * duration + 1, "fps": 24,
                    "seed": seed, "generate_audio": audio,
                    "completion_tokens": estimate_tokens(width, height, duration), "tools_used": [],
                    "web_search_calls": 0}
            row.update(started_at=started, finished_at=finished, updated_at=finished, worker_id=worker,
                       attempts=1, heartbeat_at=float(finished), result=json.dumps(used), video_file="video.mp4",
                       last_frame_file="last_frame.png" if request.get("return_last_frame") else None)
        elif status == "failed":
            row.update(started_at=started, finished_at=finished, updated_at=finished, worker_id=worker,
                       attempts=1, heartbeat_at=float(finished), error_code="InvalidParameter",
                       error_message="content[0]: resource download failed (HTTP 404)")
        elif status == "cancelled":
            cancelled = min(now - 1, created_at + rng.randint(1, 600))
            row.update(finished_at=cancelled, updated_at=cancelled)
        elif status == "expired":
            deadline = row["deadline_at"]
            row.update(started_at=None, finished_at=deadline + 3, updated_at=deadline + 3,
                       error_code="TaskExpired",
                       error_message="The task did not finish within execution_expires_after.")
        rows.append(row)
    return rows


def fill_database(data_dir: Path, count: int) -> tuple[float, list[dict]]:
    from dailies.service.db.engine import make_engine
    from dailies.service.db.tables import tasks
    from dailies.service.db.writer import writer

    rng = random.Random(20250101)
    started = time.perf_counter()
    rows = synthetic_rows(count, int(time.time()), rng)
    engine = make_engine(data_dir / "dailies.sqlite3")
    try:
        for offset in range(0, len(rows), 5000):
            with writer(engine).begin() as conn:
                conn.execute(tasks.insert(), rows[offset:offset + 5000])
    finally:
        engine.dispose()
    return time.perf_counter() - started, rows


def list_cases(rows: list[dict], rng: random.Random) -> list[tuple[str, dict]]:
    default_ids = [r["id"] for r in rows if r["service_tier"] == "default"]
    task_ids = rng.sample(default_ids, 5)
    base = {"page_size": "100"}
    return [
        ("no filter", base),
        ("filter.status=succeeded", {**base, "filter.status": "succeeded"}),
        ("filter.status=queued", {**base, "filter.status": "queued"}),
        (f"filter.model={MODEL}", {**base, "filter.model": MODEL}),
        ("filter.task_ids (5 ids)", {**base, "filter.task_ids": task_ids}),
        ("page_num=100 (offset 9,900)", {**base, "page_num": "100"}),
    ]


def interleaved(calls: int, warmup: int, steps: list[Callable[[], object]],
                budget: float = CASE_BUDGET_SECONDS) -> tuple[int, list[tuple[float, float]]]:
    """(rounds, [(p50, p99) in ms of each step]) over up to `calls` rounds that run the steps one
    after another (so a noisy moment of the machine hits every step alike), after `warmup`
    unmeasured rounds; measuring stops early once `budget` seconds have gone by."""
    times: list[list[float]] = [[] for _ in steps]
    deadline = time.perf_counter() + budget
    for index in range(warmup + calls):
        for step, series in zip(steps, times, strict=True):
            started = time.perf_counter()
            step()
            if index >= warmup:
                series.append(time.perf_counter() - started)
        if index >= warmup and time.perf_counter() > deadline:
            break
    return len(times[0]), [(percentile(sorted(t), 0.5) * 1000, percentile(sorted(t), 0.99) * 1000) for t in times]


def stored_tasks_section(count: int, workdir: Path) -> None:
    from dailies.service.db.engine import make_engine
    from dailies.service.storage.files import ResultFiles
    from dailies.service.storage.results import LocalStorage
    from dailies.service.storage.signing import UrlSigner, load_or_create_secret
    from dailies.service.tasks.records import build_record
    from dailies.service.tasks.store import TaskStore
    from dailies.spec.models import ListTasksQuery

    data_dir = workdir / "stored"
    fill_seconds, rows = fill_database(data_dir, count)
    statuses = Counter(r["status"] for r in rows)
    print(f"4. list with {count:,} stored tasks ({load_average()}; one project, last 7 days; "
          + ", ".join(f"{n:,} {s}" for s, n in statuses.most_common())
          + f"; {sum(r['service_tier'] == 'flex' for r in rows):,} flex), page_size=100, "
          f"up to {SEQUENTIAL_REQUESTS} sequential requests per query")
    cases = list_cases(rows, random.Random(7))
    del rows
    server = Server("serve-service", "--data-dir", str(data_dir), "--keys", "0")
    # The same queries in this process too (the server idles meanwhile): the SQL alone, then the
    # records and the JSON, so HTTP and framework time can be told from the query's.
    engine = make_engine(data_dir / "dailies.sqlite3")
    try:
        print(f"   bulk insert {fill_seconds:.1f} s; service ready in {server.wait_ready():.1f} s")
        store = TaskStore(engine)
        storage = LocalStorage(ResultFiles(data_dir / "files"), UrlSigner(load_or_create_secret(data_dir)))
        print(f"{'query':<45}{'total':>7}{'items':>6}{'KB':>5}{'n':>5}{'HTTP p50':>10}{'HTTP p99':>10}"
              f"{'SQL p50':>9}{'SQL p99':>9}{'rec+JSON p50':>14}{'rest p50':>10}")
        plans = []
        headers = {"authorization": "Bearer bench"}
        with httpx.Client(base_url=server.url, headers=headers, trust_env=False, timeout=30.0) as client:
            for name, params in cases:
                first = client.get(TASKS, params=params)
                if first.status_code != 200:
                    raise RuntimeError(f"list {params} answered {first.status_code}: {first.text[:300]}")
                body = first.json()
                total, items = body["total"], len(body["items"])
                query = ListTasksQuery.model_validate(params)
                page_total, page = store.list("bench", query, int(time.time()))
                rounds, ((http_p50, http_p99), (sql_p50, sql_p99), (rec_p50, _)) = interleaved(
                    SEQUENTIAL_REQUESTS, SEQUENTIAL_WARMUP, [
                        lambda p=params: client.get(TASKS, params=p).raise_for_status(),
                        lambda q=query: store.list("bench", q, int(time.time())),
                        lambda t=page_total, page=page: json.dumps(
                            {"total": t, "items": [build_record(row, storage, server.url) for row in page]}),
                    ])
                rest = http_p50 - sql_p50 - rec_p50
                flag = "" if http_p50 < LIST_TARGET_MS or items < 100 else "  > target"
                print(f"{name:<45}{total:>7}{items:>6}{len(first.content) / 1024:>5.0f}{rounds:>5}{http_p50:>10.2f}"
                      f"{http_p99:>10.2f}{sql_p50:>9.2f}{sql_p99:>9.2f}{rec_p50:>14.2f}{rest:>10.2f}{flag}")
                plans.append((name, query_plans(engine, lambda q=query: store.list("bench", q, int(time.time())))))
        print(f"n = rounds measured (fewer than {SEQUENTIAL_REQUESTS} when a shape ran past "
              f"{CASE_BUDGET_SECONDS:g} s); times in ms; target: a page of 100 under {LIST_TARGET_MS:g} ms at p50;")
        print("SQL = TaskStore.list in-process (count + page);", end=" ")
        print("rec+JSON = build_record for the page and json.dumps; rest = HTTP p50 - SQL - rec+JSON")
        print("(routing, auth, query parsing, response encoding, the client)")
        print()
        print("SQLite plans (count ; page) of TaskStore.list:")
        for name, plan in plans:
            print(f"  {name:<45}{' ; '.join(plan)}")
        with engine.connect() as conn:
            _, ((quota_p50, quota_p99),) = interleaved(SEQUENTIAL_REQUESTS, SEQUENTIAL_WARMUP,
                                                       [lambda: store.count_queued(conn, "bench")])
        plan = query_plans(engine, lambda: _count_queued(store))
        print(f"create's quota check in this project (TaskStore.count_queued, inside the write transaction): "
              f"p50 {quota_p50:.2f} ms, p99 {quota_p99:.2f} ms; plan: {' ; '.join(plan)}")
    finally:
        engine.dispose()
        server.stop()


def _count_queued(store) -> int:
    with store.engine.connect() as conn:
        return store.count_queued(conn, "bench")


def query_plans(engine, call: Callable[[], object]) -> list[str]:
    """The SQLite plan of each SELECT that `call` runs (captured from the engine, then explained)."""
    from sqlalchemy import event

    captured: list[tuple[str, object]] = []

    def capture(_conn, _cursor, statement, parameters, _context, _executemany) -> None:
        if statement.lstrip().upper().startswith("SELECT"):
            captured.append((statement, parameters))

    event.listen(engine, "before_cursor_execute", capture)
    try:
        call()
    finally:
        event.remove(engine, "before_cursor_execute", capture)
    plans = []
    with engine.connect() as conn:
        for statement, parameters in captured:
            rows = conn.exec_driver_sql(f"EXPLAIN QUERY PLAN {statement}", parameters).all()
            plans.append(", ".join(row[-1] for row in rows))
    return plans


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=10.0, help="length of each load run (default 10)")
    parser.add_argument("--tasks", type=int, default=100_000, help="stored tasks for section 4 (default 100000)")
    parser.add_argument("--skip-load", action="store_true", help="only section 4")
    parser.add_argument("--skip-stored", action="store_true", help="only sections 1 to 3")
    parser.add_argument("--backend", choices=("sqlite", "postgres", "both"), default="both",
                        help="store of the load runs (sections 1-3): SQLite + files, PostgreSQL + S3 (started "
                             "here, on loopback), or both in one run (default)")
    # Child-process roles: the servers and the load generator.
    parser.add_argument("--role", choices=("serve-service", "serve-bare"), help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--data-dir", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--keys", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.role == "serve-service":
        serve_service(args.data_dir, args.port, args.keys)
        return
    if args.role == "serve-bare":
        serve_bare(args.port)
        return

    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, loopback only")
    print()
    workdir = Path(tempfile.mkdtemp(prefix="dailies-bench-"))
    try:
        if not args.skip_load:
            if args.backend in ("sqlite", "both"):
                load_sections(args.seconds, workdir, "SQLite")
            team = start_team_backend(workdir) if args.backend in ("postgres", "both") else None
            if team is not None:
                try:
                    load_sections(args.seconds, workdir, "PostgreSQL + S3", team.environment("bench_load"))
                finally:
                    team.stop()
        if not args.skip_stored:
            stored_tasks_section(args.tasks, workdir)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        sys.exit(130)
    finally:
        shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
