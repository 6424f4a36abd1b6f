"""The gateway's cost: latency a member sees through the gateway against the upstream called directly,
and tasks finished per minute under an upstream concurrency cap.

    python bench/gateway.py                    # a minute or two on 2 cores
    python bench/gateway.py --requests 500 --tasks 20 --concurrency 2

Starts two `dailies serve` processes on loopback (tests/support/processes.py): the upstream (preview renderer,
its own key, `--workers 4`) and the gateway (`--upstream` pointing at it, `--upstream-concurrency`,
`--workers 4`), each on SQLite in a temporary directory.

1. Create (up to 110: the project's queue quota) and get, p50 and p99, sequential requests from this
   process (latency, not throughput: a Python client is fine for one request at a time), through the
   gateway and to the upstream directly,
   interleaved in one run. A create through the gateway is a local create (queued here, forwarded by a
   worker later), so the added latency is what Dailies' own create path costs over the upstream's.
2. `--tasks` small renders (1.0 Pro, 480p, 2 s) through the gateway at once: tasks finished per minute,
   and the most tasks seen running upstream at once (must not pass the cap).

Prints a table; asserts nothing.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import threading
import time
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tests.support.processes import Serve  # noqa: E402

UPSTREAM_KEY = "bench-upstream-key"
MEMBER_KEY = "bench-member-key"
BODY = {"model": "doubao-seedance-1-0-pro-250528", "resolution": "480p", "duration": 2,
        "content": [{"type": "text", "text": "a bench shot"}]}
TASKS = "/contents/generations/tasks"


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(q * (len(ordered) - 1))))]


def timed(http: httpx.Client, method: str, url: str, **kwargs) -> tuple[float, httpx.Response]:
    started = time.perf_counter()
    response = http.request(method, url, **kwargs)
    return (time.perf_counter() - started) * 1000, response


def latencies(gateway: Serve, upstream: Serve, requests: int) -> dict[str, list[float]]:
    out: dict[str, list[float]] = {k: [] for k in ("create gateway", "create upstream", "get gateway",
                                                    "get upstream")}
    ids = {"gateway": [], "upstream": []}
    with httpx.Client(timeout=30) as http:
        targets = {"gateway": (gateway, MEMBER_KEY), "upstream": (upstream, UPSTREAM_KEY)}
        # At most 110 creates: a project holds at most 120 queued tasks, and nothing renders here.
        for n in range(min(requests, 110)):  # interleaved, so both see the same machine
            for name, (server, key) in targets.items():
                ms, response = timed(http, "POST", server.base_url + TASKS, json=BODY,
                                     headers={"Authorization": f"Bearer {key}"})
                response.raise_for_status()
                if n >= 5:  # warm-up
                    out[f"create {name}"].append(ms)
                ids[name].append(response.json()["id"])
        for n in range(requests):
            for name, (server, key) in targets.items():
                ms, response = timed(http, "GET", f"{server.base_url}{TASKS}/{ids[name][n % len(ids[name])]}",
                                     headers={"Authorization": f"Bearer {key}"})
                response.raise_for_status()
                if n >= 5:
                    out[f"get {name}"].append(ms)
    return out


def throughput(gateway: Serve, upstream: Serve, tasks: int) -> tuple[float, int]:
    peak = 0
    done = threading.Event()

    def watch() -> None:
        nonlocal peak
        with httpx.Client(timeout=30) as http:
            while not done.is_set():
                listed = http.get(upstream.base_url + TASKS, params={"filter.status": "running", "page_size": 1},
                                  headers={"Authorization": f"Bearer {UPSTREAM_KEY}"}).json()
                peak = max(peak, listed["total"])
                time.sleep(0.05)

    watcher = threading.Thread(target=watch, daemon=True)
    with httpx.Client(timeout=30) as http:
        auth = {"Authorization": f"Bearer {MEMBER_KEY}"}
        started = time.perf_counter()
        watcher.start()
        ids = [http.post(gateway.base_url + TASKS, json=BODY, headers=auth).json()["id"] for _ in range(tasks)]
        pending = set(ids)
        while pending:
            for task_id in list(pending):
                status = http.get(f"{gateway.base_url}{TASKS}/{task_id}", headers=auth).json()["status"]
                if status in ("succeeded", "failed", "expired", "cancelled"):
                    pending.discard(task_id)
            time.sleep(0.2)
        elapsed = time.perf_counter() - started
    done.set()
    watcher.join(5)
    return tasks / elapsed * 60, peak


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=300)
    parser.add_argument("--tasks", type=int, default=12)
    parser.add_argument("--concurrency", type=int, default=2)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="dailies-bench-gateway-"))
    # The latency run queues hundreds of tasks on each: no render slots there, and a fresh pair after.
    upstream = Serve(root / "up", workers=0, api_keys=f"team:{UPSTREAM_KEY}")
    gateway = Serve(root / "gw", workers=0, api_keys=f"studio:{MEMBER_KEY}",
                    env={"DAILIES_UPSTREAM_KEYS": f"main:{UPSTREAM_KEY}"},
                    extra_args=("--upstream", upstream.base_url))
    try:
        measured = latencies(gateway, upstream, args.requests)
    finally:
        gateway.stop()
        upstream.stop()
    upstream = Serve(root / "up2", workers=4, api_keys=f"team:{UPSTREAM_KEY}")
    gateway = Serve(root / "gw2", workers=4, api_keys=f"studio:{MEMBER_KEY}",
                    env={"DAILIES_UPSTREAM_KEYS": f"main:{UPSTREAM_KEY}"},
                    extra_args=("--upstream", upstream.base_url, "--upstream-concurrency", str(args.concurrency)))
    try:
        per_minute, peak = throughput(gateway, upstream, args.tasks)
    finally:
        gateway.stop()
        upstream.stop()

    print(f"\nLatency over HTTP, {args.requests} sequential requests each (ms)\n")
    print(f"{'request':<10} {'upstream p50':>13} {'gateway p50':>12} {'added p50':>10} {'upstream p99':>13} "
          f"{'gateway p99':>12} {'added p99':>10}")
    for call in ("create", "get"):
        up, gw = measured[f"{call} upstream"], measured[f"{call} gateway"]
        up50, gw50, up99, gw99 = (statistics.median(up), statistics.median(gw), percentile(up, 0.99),
                                  percentile(gw, 0.99))
        print(f"{call:<10} {up50:>13.2f} {gw50:>12.2f} {gw50 - up50:>+10.2f} {up99:>13.2f} {gw99:>12.2f} "
              f"{gw99 - up99:>+10.2f}")
    print(f"\n{args.tasks} tasks (1.0 Pro, 480p, 2 s) through the gateway, upstream concurrency {args.concurrency}: "
          f"{per_minute:.1f} tasks/min; most running upstream at once: {peak}")


if __name__ == "__main__":
    main()
