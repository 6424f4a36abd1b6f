"""The `dailies` command.

    dailies serve      run the task service
    dailies worker     run render slots only, for a team deployment (PostgreSQL + S3)
    dailies keys       list or create API keys (and show each project's webhook secret)
    dailies budget     set, list or remove a project's or a member's budget
    dailies spend      what a project spent, per day, member and model
    dailies upstream   a gateway's upstream keys (add, list, remove), encrypted in the database
    dailies up         run the service and the dashboard together
    dailies dashboard  run the dashboard against ARK_BASE_URL / ARK_API_KEY (--team: shared, no default key)
    dailies create | list | get | cancel | wait | download   use any service from the shell
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from pathlib import Path

from . import cli_client, cli_money, cli_reel, cli_report, cli_share, cli_team
from .api_keys import mask as mask_key

DEFAULT_DATA_DIR = Path(os.environ.get("DAILIES_DATA_DIR", ".dailies"))


def _positive_int(text: str) -> int:
    value = int(text)
    if value < 0:
        raise argparse.ArgumentTypeError("must be 0 or more")
    return value


def default_workers() -> int:
    """Render slots for this machine: one per two cores (a render uses about two), at least one."""
    return max(1, (os.cpu_count() or 2) // 2)


REFUSE_LOOPBACK_DEPRECATED = ("dailies serve: --refuse-loopback-callbacks is deprecated and does nothing: loopback "
                              "callbacks are refused unless --allow-loopback-callbacks is given")


def serve_settings(args: argparse.Namespace):
    """The Settings `dailies serve` runs with."""
    from .service.settings import Settings

    if args.refuse_loopback_callbacks:
        print(REFUSE_LOOPBACK_DEPRECATED, file=sys.stderr)
    return Settings(
        data_dir=args.data_dir,
        workers=args.workers,
        public_url=args.public_url or f"http://{args.host}:{args.port}",
        allow_loopback_inputs=args.allow_loopback_inputs,
        allow_loopback_callbacks=args.allow_loopback_callbacks,
        allow_private_callbacks=args.allow_private_callbacks,
        stale_after=args.stale_after,
        database_url=args.database_url,
        storage=args.storage,
        **cli_team.upstream_settings(args),
    )


def cmd_serve(args: argparse.Namespace) -> int:
    import uvicorn

    from .launcher import PortTaken, check_port_free
    from .service.app import create_app
    from .service.startup import ConfigurationError, wait_for_database

    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s",
                        filename=args.log_file)
    settings = serve_settings(args)
    try:
        # Before anything starts: on a taken port the app's render slots claimed queued tasks, and the
        # process then failed to bind (exit 3) with renders under way.
        check_port_free(args.host, args.port, "service")
    except PortTaken:
        print(f"dailies serve cannot start: port {args.port} on {args.host} is taken. Stop whatever uses it "
              "or choose another (--port).", file=sys.stderr)
        return 2
    try:
        wait_for_database(settings, threading.Event())
        app = create_app(settings, grace_period=args.grace_period)
    except (ConfigurationError, ValueError) as exc:
        print(f"dailies serve cannot start: {exc}", file=sys.stderr)
        return 2
    if not app.state.services.api_keys:
        print("No API keys: set DAILIES_API_KEYS or run `dailies keys create`.", file=sys.stderr)
        return 2
    # uvicorn handles SIGTERM: it stops accepting, finishes the requests in flight, then the app's
    # lifespan stops the services, giving running renders the grace period. Afterwards it raises
    # the signal again for the handler it found: a no-op here, so a requested stop exits 0.
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: None)
    uvicorn.run(app, host=args.host, port=args.port, log_level="warning")
    return 0


def cmd_keys(args: argparse.Namespace) -> int:
    from .service import keys as key_store
    from .service.settings import keys_from_environment

    options = _key_options(args)
    if args.database_url:
        return cli_team.keys_in_database(args, keys_from_environment(), options)
    if args.action == "create":
        entry = key_store.create_key(args.data_dir, args.project, options)
        print(f"project {entry.project}\nkey     {entry.key}")
        print(f"webhook secret {key_store.webhook_secret(args.data_dir, entry.project)}")
        return 0
    projects = key_store.list_projects(args.data_dir, keys_from_environment())
    names = {key: opts.name for key, opts in key_store.load_key_options(args.data_dir).items() if opts.name}
    if not projects:
        print(f"No keys in {args.data_dir}. Make one with `dailies keys create`.")
    for name, info in projects.items():
        print(f"project {name}")
        for key in info["keys"]:
            member = f"  ({names[key]})" if key in names else ""
            print(f"  key            {key if args.show else mask_key(key)}{member}")
        secret = info.get("webhook_secret") or key_store.webhook_secret(args.data_dir, name)
        print(f"  webhook secret {secret}")
    return 0


def _key_options(args: argparse.Namespace):
    from .service.members import KeyOptions, check_limit, check_member_name

    try:
        return KeyOptions(name=check_member_name(args.name) if args.name else None,
                          rpm=check_limit(args.rpm, "--rpm"), read_rpm=check_limit(args.read_rpm, "--read-rpm"))
    except ValueError as exc:
        raise SystemExit(f"dailies keys: {exc}") from None


def cmd_up(args: argparse.Namespace) -> int:
    from .launcher import run_up, team_mode_in

    return run_up(args.data_dir, args.api_port, args.ui_port, workers=args.workers, open_browser=args.open,
                  team=args.team or team_mode_in(os.environ))


def cmd_dashboard(args: argparse.Namespace) -> int:
    import subprocess

    from .launcher import dashboard_env, journal_setting_warning, streamlit_command, team_mode_in

    data_dir = args.data_dir.resolve() if args.data_dir is not None else None
    env = dashboard_env(dict(os.environ), None, None, data_dir, args.team or team_mode_in(os.environ),
                        database_url=args.database_url, storage=args.storage)
    if (warning := journal_setting_warning(env)) is not None:
        print(warning, file=sys.stderr)
    return subprocess.call(streamlit_command(args.ui_port, args.host), env=env)


TEAM_HELP = ("a dashboard shared by a team: it has no key of its own (ARK_API_KEY is ignored); each person "
             "enters theirs in Settings, remembered for their browser only")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="dailies", description="Compose, run and review AI video generations.",
                                     epilog=cli_client.EXIT_STATUSES,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)

    serve = sub.add_parser("serve", help="run the task service")
    serve.add_argument("--host", default="127.0.0.1")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    serve.add_argument("--workers", type=_positive_int, default=default_workers(),
                       help="render slots; 0 accepts and queues only")
    serve.add_argument("--public-url", default=os.environ.get("DAILIES_PUBLIC_URL") or None,
                       help="the address clients (and a gateway's upstream, for its callbacks) reach this service "
                            "at: base of result URLs in callbacks (default http://HOST:PORT; DAILIES_PUBLIC_URL)")
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
    serve.add_argument("--stale-after", type=float, default=15.0,
                       help="seconds without a heartbeat after which a running task is put back in the queue")
    cli_team.add_grace_period_argument(serve)
    cli_team.add_upstream_arguments(serve)
    cli_team.add_backend_arguments(serve)
    cli_team.describe_deployment(serve)
    serve.set_defaults(func=cmd_serve)

    cli_team.register_worker(sub, default_workers(), DEFAULT_DATA_DIR)
    cli_money.register(sub, DEFAULT_DATA_DIR)
    cli_report.register(sub, DEFAULT_DATA_DIR)
    cli_share.register(sub, DEFAULT_DATA_DIR)
    cli_reel.register(sub, DEFAULT_DATA_DIR)
    cli_team.register_upstream(sub, DEFAULT_DATA_DIR)

    keys = sub.add_parser("keys", help="list or create API keys")
    keys.add_argument("action", nargs="?", choices=["list", "create"], default="list")
    keys.add_argument("--project", help="project of the new key (default: a new project)")
    keys.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    keys.add_argument("--show", action="store_true", help="print keys in full")
    keys.add_argument("--name", help="the member name of the new key: shown in spend, charts and review, where "
                                     "the key never is")
    keys.add_argument("--rpm", type=int, help="task creations per minute allowed to the new key (default: no limit)")
    keys.add_argument("--read-rpm", type=int, help="lists and gets per minute allowed to the new key")
    cli_team.add_backend_arguments(keys, storage=False)
    keys.set_defaults(func=cmd_keys)

    up = sub.add_parser("up", help="run the service and the dashboard together")
    up.add_argument("--data-dir", type=Path, default=DEFAULT_DATA_DIR)
    up.add_argument("--api-port", type=int, default=8000)
    up.add_argument("--ui-port", type=int, default=8501)
    up.add_argument("--workers", type=_positive_int, default=None, help="render slots (default: sized to the machine)")
    up.add_argument("--open", action="store_true", help="open the dashboard in a browser")
    up.add_argument("--team", action="store_true", help=TEAM_HELP + ". Same as DAILIES_DASHBOARD_TEAM=1.")
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
    dash.set_defaults(func=cmd_dashboard)

    cli_client.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    return cli_client.run(args)


if __name__ == "__main__":
    raise SystemExit(main())
