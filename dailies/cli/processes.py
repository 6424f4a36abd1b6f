"""The long-running commands: `dailies serve` (the task service), `dailies worker` (render slots only),
`dailies up` (the service and the dashboard together) and `dailies dashboard`, with what they share:
render slots (--slots), a gateway's upstream options, the grace period and the log's format.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from pathlib import Path

from ..log_format import FORMATS, LOG_FORMAT_ENV, configure, log_format
from . import team

log = logging.getLogger("dailies.cli")


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def default_slots() -> int:
    """Render slots for this machine: one per two cores (a render uses about two), at least one."""
    return max(1, (os.cpu_count() or 2) // 2)


def _log_format(text: str) -> str:
    try:
        return log_format(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_log_format_argument(parser: argparse.ArgumentParser) -> None:
    # Default: DAILIES_LOG_FORMAT, else text, filled in by `settle_environment` (the variable checked there).
    parser.add_argument("--log-format", type=_log_format, default=None,
                        metavar="{" + ",".join(FORMATS) + "}",
                        help="text lines, or JSON objects one per line (time, level, logger, message, request_id, "
                             f"task_id, exception) (default text; {LOG_FORMAT_ENV})")


def settle_environment(args: argparse.Namespace) -> bool:
    """At the start of serve, worker, up and dashboard: `.env` loaded into the environment, every variable
    checked (dailies/config.py; False after a line naming the bad one), and the options the command line
    left unset filled from the settings (so a `.env` value holds as the environment's would)."""
    from .. import config

    loaded = config.load_env_file()
    problem = config.check_at_start(args.command)
    if problem is not None:
        print(problem, file=sys.stderr)
        return False
    settings = config.current()
    for attribute, value in (("log_format", settings.dailies_log_format),
                             ("public_url", settings.dailies_public_url),
                             ("upstream", settings.dailies_upstream_url),
                             ("forwarded_allow_ips", settings.dailies_forwarded_allow_ips),
                             ("database_url", settings.dailies_database_url.get_secret_value()),
                             ("storage", settings.dailies_storage)):
        if hasattr(args, attribute) and getattr(args, attribute) is None:
            setattr(args, attribute, value or None)
    if "DAILIES_DATA_DIR" in loaded and getattr(args, "data_dir", None) == Path(".dailies"):
        args.data_dir = settings.dailies_data_dir  # the parser's default was made before .env was read
    return True


def _say(args: argparse.Namespace, text: str, level: int = logging.WARNING) -> None:
    """A line for the operator on stderr: as it is, or a log record of the JSON log."""
    if getattr(args, "log_format", "text") == "json":
        log.log(level, text)
    else:
        print(text, file=sys.stderr)


SLOTS_HELP = "render slots: renders at once in this process; 0 accepts and queues only"
WORKERS_DEPRECATED = ("dailies {command}: --workers is deprecated, use --slots (the same number: render slots; "
                      "not processes, as uvicorn's --workers are)")


def add_slots_arguments(parser: argparse.ArgumentParser, default_help: str) -> None:
    """--slots, and --workers, its old name (hidden; a line says so when given; both given: an error)."""
    slots = parser.add_mutually_exclusive_group()
    slots.add_argument("--slots", type=_positive_int, default=None, help=f"{SLOTS_HELP} ({default_help})")
    slots.add_argument("--workers", dest="deprecated_workers", type=_positive_int, default=None,
                       help=argparse.SUPPRESS)


def slots_of(args: argparse.Namespace, default: int | None) -> int | None:
    if args.deprecated_workers is not None:
        _say(args, WORKERS_DEPRECATED.format(command=args.command))
        return args.deprecated_workers
    return args.slots if args.slots is not None else default


def add_upstream_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--upstream", default=os.environ.get("DAILIES_UPSTREAM_URL") or None, metavar="URL",
                        help="a gateway: forward renders to this /api/v3 base (the real Ark or ModelArk, or another "
                             "Dailies) with the keys of DAILIES_UPSTREAM_KEYS=name:key,... (DAILIES_UPSTREAM_URL)")
    parser.add_argument("--upstream-concurrency", type=int, default=10,
                        help="tasks running upstream at once per model and upstream key (default 10); the rest "
                             "wait in this service's queue")
    parser.add_argument("--upstream-rpm", type=int, default=600,
                        help="creates per minute per upstream key and model (default 600), counted across workers; "
                             "beyond it tasks wait here instead of meeting the upstream's 429")


def upstream_settings(args: argparse.Namespace) -> dict:
    """Settings fields of a gateway (none without --upstream)."""
    if not args.upstream:
        return {}
    from dailies.service.gateway.forwarding import parse_upstream_keys

    from ..config import current

    # More keys may be stored in the database (`dailies upstream add`); the service says if none are anywhere.
    keys = parse_upstream_keys(current().dailies_upstream_keys.get_secret_value())
    if args.upstream_concurrency < 1 or args.upstream_rpm < 1:
        raise SystemExit("--upstream-concurrency and --upstream-rpm must be 1 or more")
    # Only an address the operator gave is one the provider may reach: the default is loopback.
    callback = args.public_url or None
    return {"upstream_url": args.upstream, "upstream_keys": keys, "upstream_concurrency": args.upstream_concurrency,
            "upstream_rpm": args.upstream_rpm, "upstream_callback_url": callback}


def add_grace_period_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--grace-period", type=float, default=30.0,
                        help="on SIGTERM: seconds running renders get to finish before they are put back in "
                             "the queue (default 30)")


# ---------- dailies serve ----------

REFUSE_LOOPBACK_DEPRECATED = ("dailies serve: --refuse-loopback-callbacks is deprecated and does nothing: loopback "
                              "callbacks are refused unless --allow-loopback-callbacks is given")
FORWARDED_ALLOW_IPS_ENV = "DAILIES_FORWARDED_ALLOW_IPS"


def serve_settings(args: argparse.Namespace):
    """The Settings `dailies serve` runs with."""
    from dailies.service.settings import Settings

    if args.refuse_loopback_callbacks:
        _say(args, REFUSE_LOOPBACK_DEPRECATED)
    slots = slots_of(args, None)
    return Settings(
        data_dir=args.data_dir,
        workers=slots if slots is not None else default_slots(),
        public_url=args.public_url or f"http://{args.host}:{args.port}",
        allow_loopback_inputs=args.allow_loopback_inputs,
        allow_loopback_callbacks=args.allow_loopback_callbacks,
        allow_private_callbacks=args.allow_private_callbacks,
        stale_after=args.stale_after,
        database_url=args.database_url,
        storage=args.storage,
        **upstream_settings(args),
        **notification_settings(),
    )


def notification_settings() -> dict:
    """Settings fields of notifications out, from the environment (the same for serve and worker: both deliver)."""
    from ..config import current

    env = current()
    return {"smtp_url": env.dailies_smtp_url.get_secret_value() or None, "smtp_from": env.dailies_smtp_from,
            "smtp_ca_file": str(env.dailies_smtp_ca_file) if env.dailies_smtp_ca_file else None,
            "notification_window": env.dailies_notification_window,
            "dashboard_url": env.dailies_dashboard_url or None}


def uvicorn_server(app, args: argparse.Namespace):
    """The uvicorn server of `dailies serve`: X-Forwarded-Proto/-For believed from --forwarded-allow-ips
    (uvicorn's proxy_headers), X-Forwarded-Host too (service/forwarded.py, outside uvicorn's middleware,
    from the same addresses); its own loggers in the log's format."""
    import uvicorn
    from uvicorn.config import LOGGING_CONFIG

    from dailies.service.api.forwarded import ForwardedHost
    from dailies.service.api.server import NodeServer

    json_log = args.log_format == "json"
    config = uvicorn.Config(app, host=args.host, port=args.port, log_level="warning", proxy_headers=True,
                            forwarded_allow_ips=args.forwarded_allow_ips,
                            # JSON: no handlers of uvicorn's own; its records reach the root logger's.
                            log_config=None if json_log else LOGGING_CONFIG)
    config.load()
    config.loaded_app = ForwardedHost(config.loaded_app, config.forwarded_allow_ips)
    return NodeServer(config, app)


def cmd_serve(args: argparse.Namespace) -> int:
    if not settle_environment(args):
        return 2
    from dailies.service.api.app import create_app
    from dailies.service.node.startup import ConfigurationError, wait_for_database

    from ..launcher import PortTaken, check_port_free

    configure(args.log_format, args.log_file)
    settings = serve_settings(args)
    try:
        # Before anything starts: on a taken port the app's render slots claimed queued tasks, and the
        # process then failed to bind (exit 3) with renders under way.
        check_port_free(args.host, args.port, "service")
    except PortTaken:
        _say(args, f"dailies serve cannot start: port {args.port} on {args.host} is taken. Stop whatever uses it "
                   "or choose another (--port).", logging.ERROR)
        return 2
    try:
        wait_for_database(settings, threading.Event())
        app = create_app(settings, grace_period=args.grace_period)
    except (ConfigurationError, ValueError) as exc:
        _say(args, f"dailies serve cannot start: {exc}", logging.ERROR)
        return 2
    if not app.state.services.api_keys:
        _say(args, "No API keys: set DAILIES_API_KEYS or run `dailies keys create`.", logging.ERROR)
        return 2
    server = uvicorn_server(app, args)
    # uvicorn handles SIGTERM: it stops accepting, finishes the requests in flight, then the app's
    # lifespan stops the services, giving running renders the grace period. Afterwards it raises
    # the signal again for the handler it found: a no-op here, so a requested stop exits 0.
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: None)
    server.run()
    return 0 if server.started else 3  # 3: as uvicorn.run, a start that failed (a bind, the lifespan)


# ---------- dailies worker ----------

def cmd_worker(args: argparse.Namespace) -> int:
    if not settle_environment(args):
        return 2
    from dailies.service.node.worker_process import run_worker
    from dailies.service.settings import Settings

    if args.slots < 1:
        raise SystemExit("dailies worker: --slots must be 1 or more")
    configure(args.log_format, args.log_file)
    settings = Settings(
        data_dir=args.data_dir, workers=args.slots, database_url=args.database_url, storage=args.storage,
        public_url=args.public_url or "http://127.0.0.1:8000", allow_loopback_inputs=args.allow_loopback_inputs,
        stale_after=args.stale_after, **upstream_settings(args), **notification_settings(),
    )
    return run_worker(settings, grace_period=args.grace_period, metrics_port=args.metrics_port)


# ---------- dailies up, dailies dashboard ----------

def cmd_up(args: argparse.Namespace) -> int:
    if not settle_environment(args):
        return 2
    from ..launcher import run_up, team_mode_in

    if args.log_format == "json":
        configure("json")
        logging.getLogger("httpx").setLevel(logging.WARNING)  # not a line per probe of the children
    return run_up(args.data_dir, args.api_port, args.ui_port, slots=slots_of(args, None), open_browser=args.open,
                  team=args.team or team_mode_in(os.environ), log_format=args.log_format, theme=args.theme)


def cmd_dashboard(args: argparse.Namespace) -> int:
    if not settle_environment(args):
        return 2
    from ..launcher import dashboard_env, journal_setting_warning, run_child, streamlit_command, team_mode_in

    if args.log_format == "json":
        configure("json")
    data_dir = args.data_dir.resolve() if args.data_dir is not None else None
    env = dashboard_env(dict(os.environ), None, None, data_dir, args.team or team_mode_in(os.environ),
                        database_url=args.database_url, storage=args.storage, log_format=args.log_format)
    if (warning := journal_setting_warning(env)) is not None:
        _say(args, warning)
    return run_child(streamlit_command(args.ui_port, args.host, log_format=args.log_format, theme=args.theme,
                                       env=env), env=env)


TEAM_HELP = ("a dashboard shared by a team: it has no key of its own (ARK_API_KEY is ignored); each person "
             "enters theirs in Settings, remembered for their browser only")


def register_service(sub, default_data_dir: Path) -> None:
    """`serve` and `worker`."""
    slots = default_slots()
    serve = sub.add_parser("serve", help="run the task service")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--data-dir", type=Path, default=default_data_dir)
    add_slots_arguments(serve, f"default {slots}: one per two cores")
    serve.add_argument("--public-url", default=os.environ.get("DAILIES_PUBLIC_URL") or None,
                       help="the address clients (and a gateway's upstream, for its callbacks) reach this service "
                            "at: base of result URLs in callbacks (default http://HOST:PORT; DAILIES_PUBLIC_URL)")
    serve.add_argument("--forwarded-allow-ips", default=os.environ.get(FORWARDED_ALLOW_IPS_ENV) or None,
                       metavar="ADDRESSES",
                       help="the proxies (IP addresses and networks, comma-separated; * for any) whose "
                            "X-Forwarded-Proto, -For and -Host are believed: result URLs then have the scheme and "
                            f"host the client used (default: {FORWARDED_ALLOW_IPS_ENV}, else FORWARDED_ALLOW_IPS, "
                            "else 127.0.0.1,::1)")
    serve.add_argument("--allow-loopback-inputs", action="store_true",
                       help="let tasks download inputs from loopback addresses (tests, local demos)")
    loopback = serve.add_mutually_exclusive_group()
    loopback.add_argument("--allow-loopback-callbacks", action="store_true",
                          help="allow callback URLs on this machine's loopback (refused by default: any member could "
                               "probe its local ports; `dailies up` allows it for one person's machine)")
    # The old default's opt-out, still accepted so that scripts that give it keep working.
    loopback.add_argument("--refuse-loopback-callbacks", action="store_true", help=argparse.SUPPRESS)
    serve.add_argument("--allow-private-callbacks", action="store_true",
                       help="allow callback URLs on private networks")
    serve.add_argument("--log-file", type=Path, help="write the log (a line per request and per state change) "
                                                       "to this file instead of stderr")
    add_log_format_argument(serve)
    serve.add_argument("--stale-after", type=float, default=15.0,
                       help="seconds without a heartbeat after which a running task is put back in the queue")
    add_grace_period_argument(serve)
    add_upstream_arguments(serve)
    team.add_backend_arguments(serve)
    team.describe_deployment(serve)
    serve.set_defaults(func=cmd_serve)

    worker = sub.add_parser("worker", help="run render slots only (no HTTP), on any machine reaching the "
                                           "database and storage",
                            description="Render workers claim queued tasks from the database, render "
                                        "them and store the results. No HTTP: clients talk to the API "
                                        "nodes (`dailies serve --slots 0`).")
    team.describe_deployment(worker)
    team.add_backend_arguments(worker)
    worker.add_argument("--slots", type=int, default=slots,
                        help=f"render slots of this process (default {slots}: one per two cores)")
    worker.add_argument("--data-dir", type=Path, default=default_data_dir,
                        help="scratch space for renders (and the database and results when neither "
                             "--database-url nor --storage is given)")
    worker.add_argument("--public-url", default=os.environ.get("DAILIES_PUBLIC_URL") or None,
                        help="where the API answers (default http://127.0.0.1:8000), for result URLs in callbacks "
                             "when results are local files, and for a gateway's upstream callbacks "
                             "(DAILIES_PUBLIC_URL)")
    worker.add_argument("--allow-loopback-inputs", action="store_true",
                        help="let tasks download inputs from loopback addresses (tests, local demos)")
    worker.add_argument("--stale-after", type=float, default=15.0,
                        help="seconds without a heartbeat after which a running task is put back in the queue")
    add_grace_period_argument(worker)
    add_upstream_arguments(worker)
    worker.add_argument("--metrics-port", type=int, default=None,
                        help="serve Prometheus metrics on this port (/metrics; a worker has no other HTTP)")
    worker.add_argument("--log-file", type=Path, help="write the log to this file instead of stderr")
    add_log_format_argument(worker)
    worker.set_defaults(func=cmd_worker)


def add_theme_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--theme", choices=("dark", "light"), default=None,
                        help="the dashboard's palette, dark or light; given here it wins over Streamlit's own "
                             "settings, otherwise .streamlit/config.toml's [theme] or STREAMLIT_THEME_* win over "
                             "DAILIES_THEME and the default, dark")


def register_dashboard(sub, default_data_dir: Path) -> None:
    """`up` and `dashboard`."""
    up = sub.add_parser("up", help="run the service and the dashboard together")
    up.add_argument("--data-dir", type=Path, default=default_data_dir)
    up.add_argument("--api-port", type=int, default=8000)
    up.add_argument("--ui-port", type=int, default=8501)
    add_slots_arguments(up, "default: sized to the machine")
    up.add_argument("--open", action="store_true", help="open the dashboard in a browser")
    up.add_argument("--team", action="store_true", help=TEAM_HELP + ". Same as DAILIES_DASHBOARD_TEAM=1.")
    add_log_format_argument(up)
    add_theme_argument(up)
    up.set_defaults(func=cmd_up)

    dash = sub.add_parser("dashboard", help="run only the dashboard (uses ARK_BASE_URL and ARK_API_KEY)")
    dash.add_argument("--ui-port", type=int, default=8501)
    dash.add_argument("--host", default="127.0.0.1", help="address to listen on (0.0.0.0 to share it on the network)")
    dash.add_argument("--data-dir", type=Path, default=None,
                      help="where the journal, kept videos and remembered keys live (default: DAILIES_DATA_DIR "
                           "or .dailies)")
    dash.add_argument("--team", action="store_true", help=TEAM_HELP + ". Same as DAILIES_DASHBOARD_TEAM=1.")
    dash.add_argument("--database-url", default=None,
                      help="PostgreSQL URL for the journal (prompts, verdicts, where kept copies are), shared by "
                           "every dashboard given it; may be the service's database (tables journal_*). Default: "
                           "DAILIES_DATABASE_URL, else SQLite in --data-dir")
    dash.add_argument("--storage", default=None,
                      help="s3://bucket/prefix for kept copies and stored uploads (under prefix-journal/), shared "
                           "by every dashboard given it (AWS_* settings). Default: DAILIES_STORAGE, else folders in "
                           "--data-dir")
    add_log_format_argument(dash)
    add_theme_argument(dash)
    dash.set_defaults(func=cmd_dashboard)
