"""`dailies serve` and `dailies worker` as subprocesses, on any backend (tests/conftest.py)."""

from __future__ import annotations

import itertools
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx

from tests.support.servers import free_port

_worker_logs = itertools.count(1)  # workers sharing a data directory each have a log of their own


def children_of(pid: int) -> list[int]:
    path = Path(f"/proc/{pid}/task/{pid}/children")
    return [int(p) for p in path.read_text().split()] if path.exists() else []


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (FileNotFoundError, IndexError):
        return False
    return state != "Z"  # a zombie has ended; only its parent's wait is missing


def stop_all(processes) -> None:
    """Stop several processes at once: each shuts down (grace, connections) while the others do."""
    for process in processes:
        process.ask_to_stop()
    for process in processes:
        process.stop()


class Process:
    """A `dailies` subcommand in its own process, its output in a log file of `data_dir`."""

    def __init__(self, argv: list[str], data_dir: Path, log_name: str, env: dict[str, str]) -> None:
        self.data_dir = data_dir
        data_dir.mkdir(parents=True, exist_ok=True)
        self.log_path = data_dir / log_name
        self._asked = False  # SIGTERM sent
        self.log = open(self.log_path, "w")  # noqa: SIM115 - closed in stop()/kill()
        self.proc = subprocess.Popen([sys.executable, "-m", "dailies.cli", *argv],
                                     env={**os.environ, **env}, stdout=self.log, stderr=subprocess.STDOUT)

    @property
    def pid(self) -> int:
        return self.proc.pid

    def output(self) -> str:
        return self.log_path.read_text()  # written by the child itself: nothing buffered here

    def kill(self) -> None:
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait(10)
        self.log.close()

    def alive(self) -> bool:
        return self.proc.poll() is None

    def terminate(self, timeout: float = 120) -> int:
        """SIGTERM, as an orchestrator stops a process; its exit code once it has stopped."""
        self.proc.terminate()
        code = self.proc.wait(timeout)
        self.log.close()
        return code

    def ask_to_stop(self) -> None:
        """SIGTERM once, without waiting (stop_all signals every process before waiting for any)."""
        if self.proc.poll() is None and not self._asked:
            self._asked = True
            self.proc.terminate()

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.ask_to_stop()  # a second SIGTERM would make uvicorn quit without its shutdown
            try:
                self.proc.wait(15)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        self.log.close()


class Serve(Process):
    """`dailies serve` on a free port, started and answering /healthz."""

    def __init__(self, data_dir: Path, workers: int = 1, stale_after: float = 15.0, env: dict[str, str] | None = None,
                 api_keys: str = "", extra_args: tuple[str, ...] = ()) -> None:
        self.port = free_port()
        # Tests' receivers listen on loopback, which `dailies serve` refuses unless allowed.
        super().__init__(["serve", "--port", str(self.port), "--data-dir", str(data_dir), "--slots", str(workers),
                          "--stale-after", str(stale_after), "--allow-loopback-callbacks", *extra_args],
                         data_dir, f"serve-{self.port}.log", {"DAILIES_API_KEYS": api_keys, **(env or {})})
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            assert self.proc.poll() is None, self.output()
            try:
                if httpx.get(f"{self.root}/healthz", timeout=1).status_code == 200:
                    return
            except httpx.HTTPError:
                time.sleep(0.1)
        self.stop()
        raise RuntimeError("dailies serve did not start:\n" + self.log_path.read_text())

    @property
    def root(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def base_url(self) -> str:
        return f"{self.root}/api/v3"


class Worker(Process):
    """`dailies worker`: render slots only; started once its log says so."""

    def __init__(self, data_dir: Path, slots: int = 1, stale_after: float = 15.0,
                 env: dict[str, str] | None = None, extra_args: tuple[str, ...] = (), wait: bool = True) -> None:
        super().__init__(["worker", "--slots", str(slots), "--data-dir", str(data_dir),
                          "--stale-after", str(stale_after), *extra_args],
                         data_dir, f"worker-{next(_worker_logs)}.log", env or {})
        if wait:
            self.wait_started()

    def wait_started(self, timeout: float = 60) -> None:
        deadline = time.monotonic() + timeout
        while "worker started" not in self.output():
            assert self.proc.poll() is None, self.output()
            if time.monotonic() > deadline:
                self.stop()
                raise RuntimeError("dailies worker did not start:\n" + self.log_path.read_text())
            time.sleep(0.1)
