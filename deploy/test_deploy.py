"""`make test-deploy`: the team stack of compose.yaml, built and tried end to end on this machine.

1. A Docker engine: the running one, else Debian's docker.io installed (as root) and `dockerd` started
   here (and stopped at the end).
2. The base image: none is pulled (no public registry may be reachable): `debootstrap --variant=minbase
   bookworm` from Debian's mirror, `docker import`ed as dailies-base:bookworm (kept for the next run;
   `--rebuild-base` makes it again, `--base IMAGE` uses another, e.g. python:3.11-slim).
3. The images: the Dockerfile's product and its `seaweedfs` target, and PostgreSQL from Debian's
   packages (deploy/postgres-debian; `--postgres-image postgres:15` uses the official one). pip in the
   build trusts this machine's CA bundle (pip's `cert` setting), passed as a BuildKit secret.
4. The stack: `compose up` with a .env of random secrets and free ports, N workers (`--scale`), every
   service healthy; the first key from the one-shot `init`, another made with `compose run api keys
   create` while the stack runs.
5. A task through the API (httpx): it succeeds; its result, fetched from the bucket's presigned URL,
   opens and decodes with PyAV.
6. The dashboard (team mode): HTTP 200, then headless Chromium draws it and a screenshot is saved
   (tests/artifacts/deploy/dashboard.png).
7. A long render; the worker container running it is killed (SIGKILL) mid-render; the task is queued
   again (--stale-after) and finishes on another worker; that result plays too.
8. Teardown, always (also on failure and Ctrl-C): `compose down -v`, dockerd if started here.

Prints the timings: image sizes, time to a healthy stack, time to the first succeeded task, total.
Exit status 0 when every step passed, 1 otherwise (the failing step says why, with the services' logs).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlsplit

import httpx

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = ROOT / "tests" / "artifacts" / "deploy"
TAG = "test-deploy"
MODEL = "doubao-seedance-2-0-260128"
CHROMIUM = "/usr/bin/chromium"
DEBIAN_MIRROR = "http://deb.debian.org/debian"


class StepFailed(Exception):
    """A step of the test did not pass; the message says what was expected and what was seen."""


def say(text: str) -> None:
    print(f"[test-deploy {time.strftime('%H:%M:%S')}] {text}", flush=True)


def run(cmd: list[str], *, check: bool = True, capture: bool = False, env: dict | None = None,
        timeout: float | None = None, quiet: bool = False) -> subprocess.CompletedProcess:
    if not quiet:
        say("$ " + " ".join(cmd))
    result = subprocess.run(cmd, text=True, env=env, timeout=timeout,
                            stdout=subprocess.PIPE if capture else None,
                            stderr=subprocess.STDOUT if capture else None)
    if check and result.returncode != 0:
        tail = (result.stdout or "")[-3000:] if capture else ""
        raise StepFailed(f"{' '.join(cmd[:4])} ... exited {result.returncode}\n{tail}")
    return result


def succeeds(cmd: list[str], env: dict | None = None) -> bool:
    try:
        return subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env,
                              timeout=60).returncode == 0
    except (OSError, subprocess.TimeoutExpired):
        return False


def wait_for(what: str, check, timeout: float, interval: float = 1.0):
    """check() until it returns something true (returned); StepFailed naming `what` after `timeout` s."""
    deadline = time.monotonic() + timeout
    last_error = None
    while time.monotonic() < deadline:
        try:
            found = check()
            if found:
                return found
        except StepFailed:
            raise
        except Exception as exc:  # noqa: BLE001 - a probe that fails is a probe that says "not yet"
            last_error = exc
        time.sleep(interval)
    raise StepFailed(f"{what}: not within {timeout:.0f} s" + (f" (last error: {last_error})" if last_error else ""))


# ---------- the engine ----------


class Engine:
    """The Docker engine this test uses: the running one, or a dockerd started here."""

    def __init__(self) -> None:
        self.dockerd: subprocess.Popen | None = None
        self.log: Path | None = None

    def ensure(self) -> None:
        if shutil.which("docker") and succeeds(["docker", "info"]):
            return
        if not shutil.which("dockerd"):
            self._apt_install("docker.io", "docker-compose")
        if not shutil.which("docker"):
            raise StepFailed("no docker client after installing docker.io")
        self.log = Path(tempfile.mkstemp(prefix="dailies-dockerd-", suffix=".log")[1])
        say(f"starting dockerd (log: {self.log})")
        self.dockerd = subprocess.Popen(["dockerd"], stdout=open(self.log, "w"),  # noqa: SIM115
                                        stderr=subprocess.STDOUT, start_new_session=True)
        try:
            wait_for("dockerd answering", lambda: self.dockerd.poll() is None and succeeds(["docker", "info"]), 60)
        except StepFailed:
            raise StepFailed("dockerd did not start:\n" + self.log.read_text()[-3000:]) from None

    @staticmethod
    def _apt_install(*packages: str) -> None:
        if os.geteuid() != 0:
            raise StepFailed(f"{' '.join(packages)} missing and not root: apt-get install -y {' '.join(packages)}")
        env = dict(os.environ, DEBIAN_FRONTEND="noninteractive")
        run(["apt-get", "update", "-q"], env=env, capture=True)
        run(["apt-get", "install", "-y", "-q", *packages], env=env, capture=True)

    def stop(self) -> None:
        if self.dockerd is None or self.dockerd.poll() is not None:
            return
        say("stopping the dockerd started here")
        self.dockerd.terminate()
        try:
            self.dockerd.wait(60)
        except subprocess.TimeoutExpired:
            self.dockerd.kill()
            self.dockerd.wait(10)
        if self.log is not None:
            self.log.unlink(missing_ok=True)


def compose_command() -> list[str]:
    """Compose v2 (`docker compose`) when present, else docker-compose (1.29 on Debian bookworm)."""
    if succeeds(["docker", "compose", "version"]):
        return ["docker", "compose"]
    if shutil.which("docker-compose") and succeeds(["docker-compose", "version"]):
        return ["docker-compose"]
    Engine._apt_install("docker-compose")
    return ["docker-compose"]


def build_command() -> tuple[list[str], dict]:
    """`docker build` with BuildKit (the Dockerfile mounts pip's CA bundle as a secret): buildx when
    the client has it, else a client with BuildKit built in (Debian's docker.io 20.10)."""
    env = dict(os.environ, DOCKER_BUILDKIT="1")
    if succeeds(["docker", "buildx", "version"]):
        return ["docker", "build"], env
    for client in ("/usr/bin/docker", "docker"):
        if shutil.which(client):
            out = subprocess.run([client, "version", "--format", "{{.Client.Version}}"], capture_output=True,
                                 text=True).stdout.strip()
            if out and int(out.split(".")[0]) < 23:  # BuildKit built in; later clients need buildx
                return [client, "build"], env
    raise StepFailed("no docker client that builds with BuildKit: install the buildx plugin (docker-buildx) "
                     "or Debian's docker.io")


def pip_cert() -> Path | None:
    """The CA bundle pip trusts here (PIP_CERT, else pip's `cert` setting), for the builds' pip."""
    named = os.environ.get("PIP_CERT")
    if not named:
        listed = subprocess.run([sys.executable, "-m", "pip", "config", "list"], capture_output=True, text=True).stdout
        found = re.search(r"^[^=]*\.cert='?([^'\n]+)'?$", listed, re.M)
        named = found.group(1) if found else None
    return Path(named) if named and Path(named).is_file() else None


# ---------- images ----------


def image_exists(name: str) -> bool:
    return succeeds(["docker", "image", "inspect", name])


def image_size(name: str) -> int:
    out = run(["docker", "image", "inspect", "-f", "{{.Size}}", name], capture=True, quiet=True).stdout
    return int(out.strip())


def mb(size: int) -> str:
    return f"{size / 1e6:.0f} MB"


def debootstrap_base(name: str) -> None:
    if not shutil.which("debootstrap"):
        Engine._apt_install("debootstrap")
    root = Path(tempfile.mkdtemp(prefix="dailies-rootfs-"))
    try:
        run(["debootstrap", "--variant=minbase", "bookworm", str(root), DEBIAN_MIRROR], capture=True)
        # The mirror the image's apt uses: the same as here.
        tar = subprocess.Popen(["tar", "-C", str(root), "-c", "."], stdout=subprocess.PIPE)
        imported = subprocess.run(["docker", "import", "-", name], stdin=tar.stdout, capture_output=True, text=True)
        tar.stdout.close()
        if tar.wait() != 0 or imported.returncode != 0:
            raise StepFailed(f"docker import of the debootstrapped base failed: {imported.stderr[-2000:]}")
    finally:
        shutil.rmtree(root, ignore_errors=True)


def build(builder: list[str], env: dict, tag: str, context: Path, base: str, cert: Path | None,
          target: str | None = None, log: Path | None = None) -> float:
    cmd = [*builder, "--build-arg", f"BASE={base}", "-t", tag]
    if target:
        cmd += ["--target", target]
    if cert:
        cmd += ["--secret", f"id=pip_cert,src={cert}"]
    cmd.append(str(context))
    started = time.monotonic()
    say("$ " + " ".join(cmd))
    with open(log, "a") if log else contextlib.nullcontext() as out:
        result = subprocess.run(cmd, env=dict(env, BUILDKIT_PROGRESS="plain"), stdout=out or subprocess.PIPE,
                                stderr=subprocess.STDOUT, text=True)
    if result.returncode != 0:
        tail = log.read_text()[-4000:] if log else (result.stdout or "")[-4000:]
        raise StepFailed(f"building {tag} failed:\n{tail}")
    return time.monotonic() - started


# ---------- the stack ----------


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("", 0))
        return sock.getsockname()[1]


def host_address() -> str:
    """This machine's address on its network: containers reach the bucket there through the published
    port, and so does this test, so presigned URLs work for both."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.connect(("10.255.255.255", 1))
            address = sock.getsockname()[0]
        except OSError:
            address = ""
    if not address or address.startswith("127."):
        raise StepFailed("no non-loopback address on this machine for the bucket's public URL (S3_PUBLIC_URL)")
    return address


class Stack:
    def __init__(self, compose: list[str], project: str, env_file: Path, settings: dict[str, str]):
        self.compose = compose
        self.project = project
        self.env_file = env_file
        self.settings = settings
        # The variables of the env file must come from it, not from this shell (which wins in compose).
        self.env = {k: v for k, v in os.environ.items() if k not in settings}
        self.up_called = False

    def cmd(self, *args: str) -> list[str]:
        return [*self.compose, "--env-file", str(self.env_file), "-p", self.project, "-f", str(ROOT / "compose.yaml"),
                *args]

    def __call__(self, *args: str, **kwargs) -> subprocess.CompletedProcess:
        return run(self.cmd(*args), env=self.env, **kwargs)

    def containers(self, service: str | None = None) -> list[dict]:
        ids = self("ps", "-q", *([service] if service else []), capture=True, quiet=True).stdout.split()
        if not ids:
            return []
        out = run(["docker", "inspect", *ids], capture=True, quiet=True).stdout
        return json.loads(out)

    def psql(self, sql: str) -> str:
        return self("exec", "-T", "db", "psql", "-U", "dailies", "-d", "dailies", "-tA", "-c", sql,
                    capture=True, quiet=True).stdout.strip()

    def down(self) -> None:
        if self.up_called:
            self("down", "-v", "--remove-orphans", "--timeout", "20", check=False, capture=True)

    def dump_logs(self) -> None:
        with contextlib.suppress(Exception):
            print(self("ps", check=False, capture=True, quiet=True).stdout)
            print(self("logs", "--no-color", "--tail", "40", check=False, capture=True, quiet=True).stdout[-20000:])


def health_of(container: dict) -> str:
    state = container["State"]
    if state.get("Health"):
        return state["Health"]["Status"]
    return state["Status"] + (f":{state['ExitCode']}" if state["Status"] == "exited" else "")


# ---------- API ----------


class Api:
    def __init__(self, base: str, key: str):
        self.client = httpx.Client(base_url=base, headers={"Authorization": f"Bearer {key}"}, timeout=30)

    def create(self, prompt: str, resolution: str, duration: int) -> str:
        body = {"model": MODEL, "content": [{"type": "text", "text": prompt}], "resolution": resolution,
                "duration": duration}
        answer = self.client.post("/contents/generations/tasks", json=body)
        if answer.status_code != 200:
            raise StepFailed(f"create answered {answer.status_code}: {answer.text[:500]}")
        return answer.json()["id"]

    def get(self, task_id: str) -> dict:
        answer = self.client.get(f"/contents/generations/tasks/{task_id}")
        answer.raise_for_status()
        return answer.json()

    def wait(self, task_id: str, timeout: float) -> dict:
        def ended():
            record = self.get(task_id)
            return record if record["status"] in ("succeeded", "failed", "expired", "cancelled") else None

        record = wait_for(f"task {task_id} to end", ended, timeout, 0.5)
        if record["status"] != "succeeded":
            raise StepFailed(f"task {task_id} ended {record['status']}: {json.dumps(record.get('error'))}")
        return record


def check_playable(url: str, bucket_url: str, seconds: float, save_as: Path) -> str:
    """The result fetched from its presigned URL (the bucket's public address) decodes with PyAV."""
    import av

    wanted = urlsplit(bucket_url)
    got = urlsplit(url)
    if (got.scheme, got.netloc) != (wanted.scheme, wanted.netloc) or "X-Amz-Signature=" not in url:
        raise StepFailed(f"result URL is not a presigned URL of the bucket {bucket_url}: {url[:200]}")
    answer = httpx.get(url, timeout=60)
    if answer.status_code != 200:
        raise StepFailed(f"GET of the presigned result URL answered {answer.status_code}: {answer.text[:300]}")
    save_as.write_bytes(answer.content)
    with av.open(str(save_as)) as container:
        video = container.streams.video[0]
        frames = sum(1 for _ in container.decode(video))
        width, height = video.codec_context.width, video.codec_context.height
        length = float(container.duration or 0) / av.time_base
        audio = len(container.streams.audio)
    if frames < seconds * 20 or abs(length - seconds) > 1:
        raise StepFailed(f"result of {seconds} s has {frames} frames, lasts {length:.2f} s")
    return f"{len(answer.content)} bytes, {width}x{height}, {frames} frames decoded, {length:.2f} s, " \
           f"{audio} audio stream(s)"


def screenshot_dashboard(url: str, path: Path) -> str:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM,
            args=["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"])
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 800})
            page.goto(url, wait_until="domcontentloaded", timeout=60_000)
            # A team dashboard has no key of its own: its first page asks for one.
            page.get_by_text("No API key yet").first.wait_for(timeout=60_000)
            page.wait_for_timeout(1000)
            path.parent.mkdir(parents=True, exist_ok=True)
            page.screenshot(path=str(path))
            return page.title()
        finally:
            browser.close()


def check_image(image: str) -> None:
    """The image's entry point runs as a user other than root and knows every command of the stack."""
    version = run(["docker", "run", "--rm", image, "--version"], capture=True).stdout.strip()
    user = run(["docker", "run", "--rm", "--entrypoint", "id", image, "-u"], capture=True).stdout.strip()
    if user == "0":
        raise StepFailed(f"{image} runs as root")
    commands = run(["docker", "run", "--rm", image, "--help"], capture=True).stdout
    missing = [c for c in ("serve", "worker", "dashboard", "keys", "budget", "upstream", "config") if c not in commands]
    if missing:
        raise StepFailed(f"{image} --help names no {missing}:\n{commands[-2000:]}")
    say(f"image: {version}, runs as uid {user}, commands all listed")


def check_compose_file(compose: list[str], workdir: Path, base: str, postgres: str) -> None:
    """compose.yaml with the committed example settings is a valid file for this Compose."""
    filled = {"POSTGRES_PASSWORD": secrets.token_hex(16), "S3_ACCESS_KEY": secrets.token_hex(10),
              "S3_SECRET_KEY": secrets.token_hex(20), "S3_PUBLIC_URL": "http://dailies.example.internal:8333",
              "DAILIES_IMAGE": f"dailies:{TAG}", "BASE_IMAGE": base, "POSTGRES_IMAGE": postgres}
    lines = [line for line in (ROOT / "deploy" / ".env.example").read_text().splitlines()
             if line.split("=", 1)[0] not in filled]
    env_file = workdir / ".env"
    env_file.write_text("\n".join([*lines, *(f"{k}={v}" for k, v in filled.items())]) + "\n")
    run([*compose, "--project-directory", str(ROOT), "-f", str(ROOT / "compose.yaml"), "--env-file", str(env_file),
         "config", "-q"], capture=True)
    say("compose.yaml: valid with .env.example")


# ---------- the test ----------


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", help="base image of the builds (default: dailies-base:bookworm, debootstrapped "
                                       "here when missing)")
    parser.add_argument("--rebuild-base", action="store_true", help="debootstrap dailies-base:bookworm again")
    parser.add_argument("--postgres-image", help="a PostgreSQL image (default: deploy/postgres-debian built here)")
    parser.add_argument("--workers", type=int, default=3, help="worker containers (--scale worker=N; default 3)")
    parser.add_argument("--context", type=Path, default=ROOT, help="the build context (default: this checkout)")
    parser.add_argument("--keep", action="store_true", help="leave the stack running (then: compose down -v)")
    parser.add_argument("--build-only", action="store_true",
                        help="build the images, check that the product's runs and compose.yaml is valid, and stop "
                             "(`make build-image`; what CI runs)")
    args = parser.parse_args(argv)

    started = time.monotonic()
    figures: dict[str, str] = {}
    engine = Engine()
    stack: Stack | None = None
    workdir = Path(tempfile.mkdtemp(prefix="dailies-test-deploy-"))

    def stop(signum, _frame):
        raise KeyboardInterrupt(f"signal {signum}")

    signal.signal(signal.SIGTERM, stop)
    passed = False
    try:
        engine.ensure()
        compose = compose_command()
        figures["compose"] = run([*compose, "version"], capture=True, quiet=True).stdout.splitlines()[0]
        builder, build_env = build_command()
        cert = pip_cert()
        say(f"engine ok; compose: {' '.join(compose)}; build: {' '.join(builder)}; pip CA bundle: {cert}")

        # --- images ---
        base = args.base or "dailies-base:bookworm"
        if not args.base and (args.rebuild_base or not image_exists(base)):
            t = time.monotonic()
            debootstrap_base(base)
            figures["base image (debootstrap + import)"] = f"{time.monotonic() - t:.0f} s"
        log = workdir / "build.log"
        t = time.monotonic()
        build(builder, build_env, f"dailies:{TAG}", args.context, base, cert, log=log)
        figures["build: dailies image"] = f"{time.monotonic() - t:.0f} s"
        t = time.monotonic()
        build(builder, build_env, f"dailies-seaweedfs:{TAG}", args.context, base, cert, target="seaweedfs", log=log)
        figures["build: seaweedfs image"] = f"{time.monotonic() - t:.0f} s"
        postgres = args.postgres_image
        if not postgres:
            postgres = f"dailies-postgres:{TAG}"
            t = time.monotonic()
            build(builder, build_env, postgres, args.context / "deploy" / "postgres-debian", base, None, log=log)
            figures["build: postgres image"] = f"{time.monotonic() - t:.0f} s"
        for name in (f"dailies:{TAG}", f"dailies-seaweedfs:{TAG}", postgres):
            figures[f"image size {name}"] = mb(image_size(name))
        if args.build_only:
            check_image(f"dailies:{TAG}")
            check_compose_file(compose, workdir, base, postgres)
            passed = True
            return 0

        # --- the stack ---
        address = host_address()
        s3_port, api_port, ui_port = free_port(), free_port(), free_port()
        bucket_url = f"http://{address}:{s3_port}"
        settings = {
            "POSTGRES_PASSWORD": secrets.token_hex(16), "S3_ACCESS_KEY": secrets.token_hex(10),
            "S3_SECRET_KEY": secrets.token_hex(20), "S3_PUBLIC_URL": bucket_url,
            "API_PORT": str(api_port), "DASHBOARD_PORT": str(ui_port), "S3_PORT": str(s3_port),
            "DATABASE_HOST": "db:5432", "DASHBOARD_API_URL": "http://api:8000/api/v3", "S3_BUCKET": "dailies",
            "S3_REGION": "us-east-1", "WORKER_SLOTS": "1", "LOG_FORMAT": "json",
            "FIRST_PROJECT": "studio", "FIRST_MEMBER": "admin", "DASHBOARD_PUBLIC_URL": f"http://{address}:{ui_port}",
            "DAILIES_IMAGE": f"dailies:{TAG}", "DAILIES_S3_IMAGE": f"dailies-seaweedfs:{TAG}",
            "POSTGRES_IMAGE": postgres, "BASE_IMAGE": base,
        }
        env_file = workdir / ".env"
        env_file.write_text("".join(f"{k}={v}\n" for k, v in settings.items()))
        env_file.chmod(0o600)
        stack = Stack(compose, f"dailies-test-deploy-{os.getpid()}", env_file, settings)
        stack("config", "-q")

        t_up = time.monotonic()
        stack.up_called = True
        stack("up", "-d", "--no-build", "--scale", f"worker={args.workers}")

        def healthy():
            containers = stack.containers()
            states = {c["Name"].lstrip("/"): health_of(c) for c in containers}
            if any(s in ("unhealthy",) or (s.startswith("exited") and s != "exited:0") for s in states.values()):
                raise StepFailed(f"a service failed: {states}")
            workers = [n for n in states if "_worker_" in n or "-worker-" in n]
            ok = len(workers) == args.workers and all(s in ("healthy", "exited:0") for s in states.values())
            return states if ok else None

        states = wait_for("every service healthy", healthy, 300, 1)
        figures["time to a healthy stack (compose up -> all healthy)"] = f"{time.monotonic() - t_up:.1f} s"
        say(f"healthy: {', '.join(sorted(states))}")

        api_base = f"http://127.0.0.1:{api_port}"
        for probe in ("/healthz", "/readyz"):
            answer = httpx.get(api_base + probe, timeout=10)
            if answer.status_code != 200:
                raise StepFailed(f"{probe} answered {answer.status_code}: {answer.text[:300]}")

        # --- keys: the init service's first one, and one made while the stack runs ---
        init_log = stack("logs", "--no-color", "init", capture=True, quiet=True).stdout
        first = re.search(r"key\s+(\S+)", init_log)
        if not first:
            raise StepFailed(f"the init service printed no key:\n{init_log[-2000:]}")
        made = stack("run", "--rm", "-T", "api", "keys", "create", "--project", "deploy-test",
                     "--name", "Deploy test", capture=True).stdout
        second = re.search(r"^key\s+(\S+)", made, re.M)
        if not second:
            raise StepFailed(f"`compose run api keys create` printed no key:\n{made[-2000:]}")
        for key in (first.group(1), second.group(1)):
            wait_for("the new key accepted", lambda key=key: httpx.get(
                api_base + "/dailies/v1/me", headers={"Authorization": f"Bearer {key}"}, timeout=10).status_code == 200,
                30, 0.5)
        say("keys: init's first key and a key made with `compose run --rm api keys create` both accepted")

        # --- a task, its result from the bucket ---
        api = Api(api_base + "/api/v3", second.group(1))
        t_task = time.monotonic()
        task_id = api.create("a paper boat on a pond, morning light", "480p", 5)
        record = api.wait(task_id, 300)
        figures["first task: submit -> succeeded"] = f"{time.monotonic() - t_task:.1f} s"
        figures["time to the first succeeded task (compose up -> succeeded)"] = f"{time.monotonic() - t_up:.1f} s"
        shown = check_playable(record["content"]["video_url"], bucket_url, 5, workdir / "first.mp4")
        say(f"task {task_id} succeeded; result from the presigned URL: {shown}")

        # --- the dashboard ---
        ui = f"http://127.0.0.1:{ui_port}/"
        answer = httpx.get(ui, timeout=30)
        if answer.status_code != 200:
            raise StepFailed(f"the dashboard answered {answer.status_code}")
        health = httpx.get(ui + "_stcore/health", timeout=30)
        if health.status_code != 200:
            raise StepFailed(f"the dashboard's health answered {health.status_code}")
        if Path(CHROMIUM).exists():
            shot = ARTIFACTS / "dashboard.png"
            title = screenshot_dashboard(ui, shot)
            say(f"dashboard: HTTP 200, drawn in Chromium ({title!r}), screenshot {shot}")
        else:
            say(f"dashboard: HTTP 200 (no {CHROMIUM}: no screenshot)")

        # --- a worker killed mid-render ---
        long_id = api.create("a long shot of a harbour at dusk", "1080p", 15)

        def running_on():
            row = stack.psql(f"select status, coalesce(worker_id, ''), attempts from tasks where id = '{long_id}'")
            status, worker, attempts = row.split("|")
            if status in ("succeeded", "failed"):
                raise StepFailed(f"the long task ended ({status}) before a worker could be killed")
            return (worker, int(attempts)) if status == "running" and worker else None

        worker_id, attempts = wait_for("the long task running", running_on, 120, 0.3)
        victim = worker_id.split("-")[0]  # the container's host name: its id's start
        time.sleep(3)
        if api.get(long_id)["status"] != "running":
            raise StepFailed("the long task was no longer running 3 s in: make it longer")
        # Its restart policy would start it again at once, and it might take the task back: not this time.
        run(["docker", "update", "--restart=no", victim], capture=True)
        t_kill = time.monotonic()
        run(["docker", "kill", victim])
        say(f"killed worker container {victim} 3 s into the render of {long_id}")

        def moved():
            worker, _ = running_on() or ("", 0)
            return worker if worker and not worker.startswith(victim) else None

        new_worker = wait_for("the long task running on another worker", moved, 120, 0.5)
        figures["killed worker: kill -> running again elsewhere"] = f"{time.monotonic() - t_kill:.1f} s"
        record = api.wait(long_id, 300)
        figures["killed worker: kill -> succeeded"] = f"{time.monotonic() - t_kill:.1f} s"
        final = stack.psql(f"select worker_id, attempts from tasks where id = '{long_id}'").split("|")
        if final[0].startswith(victim):
            raise StepFailed(f"the task finished on the killed worker's container {victim}")
        shown = check_playable(record["content"]["video_url"], bucket_url, 15, workdir / "long.mp4")
        say(f"task {long_id} finished on {new_worker.split('-')[0]} (attempts {final[1]}, was {attempts}); "
            f"result: {shown}")
        # Started again, the killed container rejoins as a new worker.
        run(["docker", "update", "--restart=unless-stopped", victim], capture=True)
        run(["docker", "start", victim], capture=True)
        t_start = time.monotonic()
        wait_for("the killed worker container healthy again", lambda: next(
            (health_of(c) == "healthy" for c in stack.containers("worker") if c["Id"].startswith(victim)), False),
            120, 1)
        figures["killed worker: docker start -> healthy again"] = f"{time.monotonic() - t_start:.1f} s"
        passed = True
    except StepFailed as exc:
        say(f"FAILED: {exc}")
        if stack is not None:
            stack.dump_logs()
    except KeyboardInterrupt as exc:
        say(f"interrupted ({exc}); tearing down")
    finally:
        t = time.monotonic()
        if stack is not None and not args.keep:
            stack.down()
            figures["teardown"] = f"{time.monotonic() - t:.0f} s"
        elif stack is not None:
            say(f"kept: {' '.join(stack.cmd('down', '-v'))}")
        shutil.rmtree(workdir, ignore_errors=True)
        if not args.keep:
            engine.stop()
        figures["total"] = f"{time.monotonic() - started:.0f} s"
        what = "build-image" if args.build_only else "test-deploy"
        print(f"\n== {what} " + ("passed" if passed else "FAILED") + " ==")
        for name, value in figures.items():
            print(f"  {name:<62} {value}")
    return 0 if passed else 1


if __name__ == "__main__":
    sys.exit(main())
