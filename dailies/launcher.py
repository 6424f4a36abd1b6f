"""`dailies up`: the service and the dashboard together, on embedded defaults.

Both run as child processes; Ctrl-C or SIGTERM stops both, and if either dies the other is
stopped too, so nothing is left running behind the user's back.

For one person the dashboard gets the service's own key (ARK_API_KEY), so it works at once. With
`--team` the dashboard is shared: it gets no key, and each visitor enters their own in Settings
(remembered for their browser only; see components/common/remembered_keys.py).
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import signal
import socket
import subprocess
import sys
import time
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass
from pathlib import Path

import httpx

from dailies.service.access import keys as key_store

from .api_keys import mask as mask_key
from .log_format import LOG_FORMAT_ENV

# Set (to 1) in the dashboard's environment for a dashboard shared by a team: it has no default key.
DASHBOARD_TEAM_ENV = "DAILIES_DASHBOARD_TEAM"
# Where the dashboard's journal keeps its rows and files (dailies.journal reads them): the service's
# own settings, so one database and one bucket serve a whole team.
JOURNAL_DATABASE_ENV = "DAILIES_DATABASE_URL"
JOURNAL_STORAGE_ENV = "DAILIES_STORAGE"


def team_mode_in(env: Mapping[str, str]) -> bool:
    """Whether an environment asks for a team dashboard (DAILIES_DASHBOARD_TEAM=1, true, yes or on)."""
    return env.get(DASHBOARD_TEAM_ENV, "").strip().lower() in ("1", "true", "yes", "on")


class PortTaken(RuntimeError):
    pass


def check_port_free(host: str, port: int, what: str) -> None:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        # As uvicorn and Streamlit bind: with SO_REUSEADDR, a port held only by the TIME_WAIT
        # connections of a run that just stopped is free, and a listening one is still taken.
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            sock.bind((host, port))
        except OSError as exc:
            raise PortTaken(f"Port {port} on {host} is taken, so the {what} cannot start there. "
                            f"Stop whatever uses it or choose another port "
                            f"(--{'api' if what == 'service' else 'ui'}-port).") from exc


def local_key(data_dir: Path) -> str:
    """The first key of the data directory, made on first run."""
    keys = key_store.load_keys(data_dir)
    if keys:
        return next(iter(keys))
    return key_store.create_key(data_dir, "local").key


def dashboard_app_root() -> Path:
    """The folder that holds the dashboard's two packages, dashboard/ and components/ (which its pages
    import as `components.common...`): in an installed wheel, dailies/_dashboard_app (pyproject.toml
    ships them there, so that no generic top-level name is installed); in a checkout or an editable
    install, the repository's root. The dashboard's process gets it on its PYTHONPATH (`dashboard_env`)."""
    package = Path(__file__).resolve().parent
    shipped = package / "_dashboard_app"
    return shipped if (shipped / "dashboard" / "server.py").is_file() else package.parent


def dashboard_script() -> Path:
    """The dashboard's server (dashboard/server.py: the router app.py with the dashboard's middleware)."""
    return dashboard_app_root() / "dashboard" / "server.py"


# The dashboard's two palettes (`dailies up --theme`, DAILIES_THEME): dark is the default. The light one's
# amber is darker, so that a button's white text and a link on white keep their contrast.
THEMES: dict[str, dict[str, str]] = {
    "dark": {"base": "dark", "primaryColor": "#f5a524"},
    "light": {"base": "light", "primaryColor": "#b45309"},
}
DEFAULT_THEME = "dark"
# Uploads may be 30 MB images (spec section 8), Base64 inflates them, hence 64 MB.
MAX_UPLOAD_MB = 64


def _streamlit_config_files(cwd: Path | None) -> list[Path]:
    """The config.toml files the dashboard's Streamlit reads: ~/.streamlit, its working directory's
    .streamlit and the script's own (streamlit.config.get_config_files)."""
    return [Path.home() / ".streamlit" / "config.toml", (cwd or Path.cwd()) / ".streamlit" / "config.toml",
            dashboard_script().parent / ".streamlit" / "config.toml"]


def streamlit_settings_given(cwd: Path | None = None, env: Mapping[str, str] | None = None) -> tuple[bool, bool]:
    """Whether the operator set the dashboard's theme, and its upload size, in Streamlit's own way: a
    `[theme]` table or `[server] maxUploadSize` in a config.toml Streamlit reads, or STREAMLIT_THEME_*
    / STREAMLIT_SERVER_MAX_UPLOAD_SIZE in its environment. Those win over the launcher's values."""
    env = os.environ if env is None else env
    theme = any(name.startswith("STREAMLIT_THEME_") and value for name, value in env.items())
    upload = bool(env.get("STREAMLIT_SERVER_MAX_UPLOAD_SIZE"))
    for path in _streamlit_config_files(cwd):
        try:
            with open(path, "rb") as handle:
                found = tomllib.load(handle)
        except (OSError, tomllib.TOMLDecodeError):  # none there, or one Streamlit reports itself
            continue
        theme = theme or bool(found.get("theme"))
        server = found.get("server")
        upload = upload or (isinstance(server, dict) and "maxUploadSize" in server)
    return theme, upload


def streamlit_command(port: int, host: str = "127.0.0.1", headless: bool = True, log_format: str = "text",
                      theme: str | None = None, cwd: Path | None = None,
                      env: Mapping[str, str] | None = None) -> list[str]:
    """`streamlit run` of the dashboard with its settings as flags, so they hold whatever directory
    it starts from (`cwd`, where .streamlit/config.toml is read). The theme and the upload size
    (MAX_UPLOAD_MB) are defaults only: set in Streamlit's config.toml or STREAMLIT_* variables
    (`streamlit_settings_given`) they are not passed, unless `theme` was asked for on the command line
    (`--theme`, which always wins); `theme` None is DAILIES_THEME's, else dark (THEMES). The toolbar is
    minimal: "Deploy" means nothing to the people using Dailies. No full garbage collection after every
    script run: with pandas, altair and pydantic loaded it holds the GIL for 100-400 ms on 2 cores, after
    the script has finished and before the browser hears so (bench/dashboard.py); Python's own
    generational collection still runs. A JSON log (`log_format`, with DAILIES_LOG_FORMAT=json in the
    environment: `dashboard_env`) runs it through dailies/streamlit_logs.py, which makes Streamlit's
    loggers JSON first."""
    env = os.environ if env is None else env
    runner = "dailies.streamlit_logs" if log_format == "json" else "streamlit"
    command = [sys.executable, "-m", runner, "run", str(dashboard_script()),
               "--server.port", str(port), "--server.address", host, "--server.headless", str(headless).lower(),
               "--browser.gatherUsageStats", "false", "--client.toolbarMode", "minimal",
               "--runner.postScriptGC", "false"]
    theme_given, upload_given = streamlit_settings_given(cwd, env)
    if not upload_given:
        command += ["--server.maxUploadSize", str(MAX_UPLOAD_MB)]
    if theme is not None or not theme_given:
        chosen = theme or env.get("DAILIES_THEME") or DEFAULT_THEME
        for key, value in THEMES.get(chosen, THEMES[DEFAULT_THEME]).items():
            command += [f"--theme.{key}", value]
    return command


def dashboard_env(base: dict[str, str], api_url: str | None, key: str | None, data_dir: Path | None,
                  team: bool, database_url: str | None = None, storage: str | None = None,
                  log_format: str | None = None) -> dict[str, str]:
    """The dashboard's environment: where the service is, the data directory, where the journal
    keeps its rows and files (a database URL and a bucket shared by a team's dashboards; SQLite and
    folders in the data directory otherwise: dailies.journal), and its default key, which a team
    dashboard never has (not even one inherited from the caller's environment); the log's format
    (DAILIES_LOG_FORMAT, dailies/log_format.py) when given; and the dashboard's packages on its
    PYTHONPATH (`dashboard_app_root`), ahead of any the caller's environment has."""
    env = dict(base)
    inherited = env.get("PYTHONPATH")
    env["PYTHONPATH"] = os.pathsep.join([str(dashboard_app_root()), *([inherited] if inherited else [])])
    if log_format is not None:
        env[LOG_FORMAT_ENV] = log_format
    if api_url is not None:
        env["ARK_BASE_URL"] = api_url
    if data_dir is not None:
        env["DAILIES_DATA_DIR"] = str(data_dir)
    if database_url is not None:
        env[JOURNAL_DATABASE_ENV] = database_url
    if storage is not None:
        env[JOURNAL_STORAGE_ENV] = storage
    if team:
        env[DASHBOARD_TEAM_ENV] = "1"
        env.pop("ARK_API_KEY", None)
    else:
        env.pop(DASHBOARD_TEAM_ENV, None)
        if key is not None:
            env["ARK_API_KEY"] = key
    return env


def journal_setting_warning(env: dict[str, str]) -> str | None:
    """What is wrong with a dashboard's journal settings, or None: a shared database without a
    bucket keeps each machine's kept copies on its own disk, so another dashboard shows them as not
    kept and may keep the task again over the first one's record."""
    if env.get(JOURNAL_DATABASE_ENV) and not env.get(JOURNAL_STORAGE_ENV):
        return ("warning: the journal is in a shared database but kept copies go to this machine's disk; "
                "give the team's bucket too (--storage s3://bucket/prefix or DAILIES_STORAGE) so every "
                "dashboard plays them")
    return None


# Written by a running `dailies up` in its data directory, so that `dailies share create` there knows
# the dashboard its links open on (its address, and whether its guest page takes shares at all).
RUNNING_DASHBOARD_FILE = Path("dashboard") / "running.json"


@dataclass(frozen=True)
class RunningDashboard:
    url: str
    team: bool
    sign_in: bool
    pid: int
    api_url: str = ""  # its service's base URL (…/api/v3): the CLI's key beside it is this data directory's

    @property
    def guests_can_open(self) -> bool:
        """Whether its guest page opens a share (dashboard/views/guest.py: team mode or sign-in)."""
        return self.team or self.sign_in


def sign_in_configured(cwd: Path) -> bool:
    """Whether the dashboard started in `cwd` finds an `[auth]` section in the secrets Streamlit reads
    (~/.streamlit, the working directory's and the script's .streamlit/secrets.toml): components/common/signin.py."""
    places = [Path.home() / ".streamlit", cwd / ".streamlit", dashboard_script().parent / ".streamlit"]
    for folder in places:
        try:
            with open(folder / "secrets.toml", "rb") as handle:
                if isinstance(tomllib.load(handle).get("auth"), dict):
                    return True
        except (OSError, tomllib.TOMLDecodeError):  # none there, or one Streamlit would not read either
            continue
    return False


def record_running_dashboard(data_dir: Path, dashboard: RunningDashboard) -> None:
    path = data_dir / RUNNING_DASHBOARD_FILE
    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    partial.write_text(json.dumps(asdict(dashboard)))
    partial.replace(path)


def forget_running_dashboard(data_dir: Path) -> None:
    """Remove the record, if it is this process's (another `dailies up` may have started since)."""
    found = _read_running_dashboard(data_dir)
    if found is not None and found.pid == os.getpid():
        (data_dir / RUNNING_DASHBOARD_FILE).unlink(missing_ok=True)


def running_dashboard(data_dir: Path) -> RunningDashboard | None:
    """The dashboard a `dailies up` runs on this data directory now, or None (none, or one killed
    before it could remove its record)."""
    found = _read_running_dashboard(data_dir)
    if found is None:
        return None
    try:
        os.kill(found.pid, 0)
    except ProcessLookupError:
        return None
    except PermissionError:  # alive, another user's
        pass
    return found


def _read_running_dashboard(data_dir: Path) -> RunningDashboard | None:
    try:
        found = json.loads((data_dir / RUNNING_DASHBOARD_FILE).read_text())
        return RunningDashboard(str(found["url"]), bool(found["team"]), bool(found["sign_in"]), int(found["pid"]),
                                str(found.get("api_url", "")))
    except (OSError, ValueError, KeyError, TypeError):
        return None


def wait_until_up(url: str, proc: subprocess.Popen, what: str, timeout: float = 60.0) -> None:
    """Until `url` answers 200; RuntimeError when `proc` exits first or `timeout` passes."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"The {what} exited during start-up (code {proc.returncode}); see the log above.")
        try:
            if httpx.get(url, timeout=1.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    raise RuntimeError(f"The {what} did not answer at {url} within {timeout:.0f} s.")


_PR_SET_PDEATHSIG = 1  # linux/prctl.h


def _die_with_parent(parent: int) -> Callable[[], None] | None:
    """Linux only: the child is sent SIGTERM when this process dies, even by SIGKILL (an OOM kill
    or a test's kill left the dashboard's Streamlit serving on its port, an orphan nobody stops)."""
    if not sys.platform.startswith("linux"):
        return None

    def arrange() -> None:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
        if os.getppid() != parent:  # died before prctl took hold: nobody would be told
            os._exit(1)

    return arrange


def start_child(command: list[str], env: Mapping[str, str], cwd: str | None = None) -> subprocess.Popen:
    """A child of this launcher, stopped with it however it ends."""
    return subprocess.Popen(command, env=env, cwd=cwd, preexec_fn=_die_with_parent(os.getpid()))  # noqa: PLW1509


def stop_processes(procs: list[subprocess.Popen]) -> None:
    """Ask each to stop (SIGTERM), then kill what has not stopped within 10 s."""
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
    deadline = time.monotonic() + 10
    for proc in procs:
        try:
            proc.wait(max(0.1, deadline - time.monotonic()))
        except subprocess.TimeoutExpired:
            proc.kill()


def serve_command(data_dir: Path, host: str, api_port: int, slots: int | None, team: bool = False,
                  log_format: str = "text") -> list[str]:
    """The `dailies serve` that `dailies up` runs. One person's `dailies up` is the one place loopback
    callbacks are allowed without the operator asking (a demo's receiver runs on the same machine);
    with `--team` other people set callback URLs, and one on loopback would probe this machine's ports."""
    command = [sys.executable, "-m", "dailies", "serve", "--host", host, "--port", str(api_port),
               "--data-dir", str(data_dir), "--log-file", str(data_dir / "service.log"), "--log-format", log_format]
    if not team:
        command.append("--allow-loopback-callbacks")
    if slots is not None:
        command += ["--slots", str(slots)]
    return command


def run_child(command: list[str], env: dict[str, str]) -> int:
    """Run one child to its end and return its exit code; SIGTERM or Ctrl-C here stops it too (a process
    manager stopping `dailies dashboard` left its Streamlit serving, an orphan)."""
    proc = start_child(command, env)

    def pass_on(signum, _frame):
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signum)

    previous = {s: signal.signal(s, pass_on) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        try:
            return proc.wait()
        finally:
            stop_processes([proc])  # nothing when it has ended; else SIGTERM, then SIGKILL after 10 s
    finally:
        for sig, handler in previous.items():
            signal.signal(sig, handler)


def run_up(data_dir: Path, api_port: int, ui_port: int, host: str = "127.0.0.1", slots: int | None = None,
           open_browser: bool = False, team: bool = False, log_format: str = "text", theme: str | None = None) -> int:
    """Both children; the service's log in data_dir/service.log, the dashboard's on this stderr, both in
    `log_format` (as this process's own lines on stderr: the banner stays on stdout)."""

    def problem(text: str) -> None:
        if log_format == "json":
            logging.getLogger("dailies.up").error(text)
        else:
            print(text, file=sys.stderr)

    try:
        check_port_free(host, api_port, "service")
        check_port_free(host, ui_port, "dashboard")
    except PortTaken as exc:
        problem(f"dailies up: {exc}")
        return 2
    data_dir = data_dir.resolve()
    key = local_key(data_dir)
    api_url = f"http://{host}:{api_port}"
    env = {k: v for k, v in os.environ.items() if k != "DAILIES_API_KEYS"}
    env.setdefault("DAILIES_DASHBOARD_URL", f"http://{host}:{ui_port}")  # notifications link to this dashboard
    serve_cmd = serve_command(data_dir, host, api_port, slots, team, log_format)
    ui_env = dashboard_env(env, f"{api_url}/api/v3", key, data_dir, team, log_format=log_format)
    ui_cmd = streamlit_command(ui_port, host, headless=not open_browser, log_format=log_format, theme=theme,
                               cwd=data_dir, env=ui_env)
    procs: list[subprocess.Popen] = []
    stopping = False

    def on_signal(signum, _frame):
        nonlocal stopping
        stopping = True

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        procs.append(start_child(serve_cmd, env))
        wait_until_up(f"{api_url}/healthz", procs[0], "service")
        procs.append(start_child(ui_cmd, ui_env, cwd=str(data_dir)))
        wait_until_up(f"http://{host}:{ui_port}/_stcore/health", procs[1], "dashboard")
        record_running_dashboard(data_dir, RunningDashboard(f"http://{host}:{ui_port}", team,
                                                            sign_in_configured(data_dir), os.getpid(),
                                                            f"{api_url}/api/v3"))
        print(f"\n  Dailies is up (data in {data_dir}).\n"
              f"  Dashboard:  http://{host}:{ui_port}\n"
              f"  API:        {api_url}/api/v3   (key {mask_key(key)}; `dailies keys --show` prints it)\n"
              + ("  Team mode:  the dashboard has no key of its own; each person enters theirs in Settings\n"
                 "              (yours: `dailies keys --show`). Share links open for guests here.\n"
                 if team else "") +
              f"  Service log: {data_dir / 'service.log'}\n"
              f"  Results come from the offline preview renderer, not a real model.\n"
              f"  Press Ctrl-C to stop both.\n", flush=True)
        while not stopping:
            for proc, what in zip(procs, ("service", "dashboard"), strict=True):
                if proc.poll() is not None:
                    problem(f"dailies up: the {what} stopped (code {proc.returncode}); stopping the rest.")
                    return 1
            time.sleep(0.3)
        print("Stopping…", flush=True)
        return 0
    except RuntimeError as exc:
        problem(f"dailies up: {exc}")
        return 1
    finally:
        forget_running_dashboard(data_dir)
        stop_processes(procs)
        for sig, handler in previous.items():
            signal.signal(sig, handler)
