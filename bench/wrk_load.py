"""HTTP load from `wrk` (Debian package `wrk`), so that the server, not the load generator, sets
the pace: on 2 cores a Python client saturates a core before the server does.

One wrk thread and 16 connections in a closed loop. A Lua script builds each request (the POST
body, a bearer key that rotates so no project passes its quota) and prints the summary as JSON
from wrk's `done` hook, so nothing is scraped from wrk's human output.
"""

from __future__ import annotations

import json
import os
import resource
import shutil
import subprocess
import tempfile
from collections.abc import Callable
from pathlib import Path

CONNECTIONS = 16
THREADS = 1

# `request` is called once per request (wrk keeps one Lua state per thread, one thread here).
# `first_key` comes from the command line so a measured run continues where its warm-up stopped.
_SCRIPT = r"""
local method, path, body, key_prefix, keys, per_key, first_key = "%(method)s", "%(path)s", '%(body)s',
  "%(key_prefix)s", %(keys)d, %(per_key)d, 0
local counter = 0

init = function(args)
  if args[1] then first_key = tonumber(args[1]) end
end

request = function()
  local key = string.format("%%s%%05d", key_prefix, (first_key + math.floor(counter / per_key)) %% keys)
  counter = counter + 1
  local headers = {["Authorization"] = "Bearer " .. key}
  if method == "POST" then
    headers["Content-Type"] = "application/json"
    return wrk.format(method, path, headers, body)
  end
  return wrk.format(method, path, headers)
end

done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    '\n@@{"requests":%%d,"duration_us":%%d,"p50_us":%%d,"p99_us":%%d,"non2xx":%%d,' ..
    '"connect":%%d,"read":%%d,"write":%%d,"timeout":%%d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), e.status,
    e.connect, e.read, e.write, e.timeout))
end
"""


def wrk_path() -> str:
    found = shutil.which("wrk")
    if found is None:
        raise SystemExit("wrk is not installed: `sudo apt-get install wrk` (Debian/Ubuntu), then run again")
    return found


def _script(method: str, path: str, body: str, key_prefix: str, keys: int, per_key: int) -> Path:
    handle, name = tempfile.mkstemp(prefix="dailies-wrk-", suffix=".lua")
    with os.fdopen(handle, "w") as fh:
        fh.write(_SCRIPT % {"method": method, "path": path, "body": body.replace("'", "\\'"),
                            "key_prefix": key_prefix, "keys": keys, "per_key": per_key})
    return Path(name)


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run(url: str, method: str, path: str, seconds: float, *, body: str = "", key_prefix: str = "bench-",
        keys: int = 1, per_key: int = 1, first_key: int = 0,
        server_cpu: Callable[[], float | None] = lambda: None) -> dict:
    """One wrk run; the figures of the summary, wrk's own CPU share and the server's CPU time per
    request (from `server_cpu`, seconds of CPU so far, read before and after)."""
    script = _script(method, path, body, key_prefix, keys, per_key)
    try:
        command = [wrk_path(), f"-t{THREADS}", f"-c{CONNECTIONS}", f"-d{seconds:g}s", "--timeout", "30s",
                   "-s", str(script), url, "--", str(first_key)]
        cpu_before, server_before = _children_cpu(), server_cpu()
        finished = subprocess.run(command, capture_output=True, text=True, check=True)
        cpu_after, server_after = _children_cpu(), server_cpu()
    finally:
        script.unlink(missing_ok=True)
    line = next((ln for ln in finished.stdout.splitlines() if ln.startswith("@@")), None)
    if line is None:
        raise RuntimeError(f"wrk printed no summary:\n{finished.stdout}\n{finished.stderr}")
    summary = json.loads(line[2:])
    elapsed = summary["duration_us"] / 1e6
    requests = summary["requests"]
    result = {
        "requests": requests,
        "elapsed": elapsed,
        "rps": requests / elapsed if elapsed else 0.0,
        "p50": summary["p50_us"] / 1000,
        "p99": summary["p99_us"] / 1000,
        "non200": summary["non2xx"],
        "errors": {k: summary[k] for k in ("connect", "read", "write", "timeout") if summary[k]},
        "client_cpu": (cpu_after - cpu_before) / elapsed if elapsed else 0.0,
    }
    if server_before is not None and server_after is not None and requests:
        result["server_cpu_ms"] = (server_after - server_before) * 1000 / requests
        result["server_cpu"] = (server_after - server_before) / elapsed
    return result
