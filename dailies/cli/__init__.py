"""The `dailies` command (also `python -m dailies`).

    dailies serve      run the task service
    dailies worker     run render slots only, for a team deployment (PostgreSQL + S3)
    dailies keys       list or create API keys (and show each project's webhook secret)
    dailies budget     set, list or remove a project's or a member's budget
    dailies spend      what a project spent, per day, member and model
    dailies upstream   a gateway's upstream keys (add, list, remove), encrypted in the database
    dailies config     the effective settings (environment, .env, defaults; secrets masked): dailies/config.py
    dailies up         run the service and the dashboard together
    dailies dashboard  run the dashboard against ARK_BASE_URL / ARK_API_KEY (--team: shared, no default key)
    dailies report | share | reel | export                     the review's outputs, from the dashboard's journal
    dailies create | list | get | request | cancel | wait | download   use any service from the shell

One module per group of commands, each with a `register` that adds its subcommands:

    tasks.py      create, list, get, request, cancel, wait, download; the connection options, exit statuses
                  and `run` (every command's errors as lines and exit statuses)
    processes.py  serve, worker, up, dashboard: render slots, the log's format, forwarded headers
    team.py       keys; the database and storage options, and the service database operators' commands open
    money.py      budget, spend, upstream
    share.py, reel.py, report.py, export.py (the cut for the editor: OTIO, EDL, FCPXML)

Importing this package imports none of them; `build_parser` does, and each imports the service,
SQLAlchemy, Streamlit or PyAV only inside the command that needs it, so that the parser builds on the
core install (`pip install dailies`). The extra each command needs is in extras.py: without it the
command exits 2 with a line saying what to install.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .. import __version__

DEFAULT_DATA_DIR = Path(os.environ.get("DAILIES_DATA_DIR", ".dailies"))


def build_parser() -> argparse.ArgumentParser:
    from . import config, export, money, processes, reel, report, share, tasks, team

    parser = argparse.ArgumentParser(prog="dailies", description="Compose, run and review AI video generations.",
                                     epilog=tasks.EXIT_STATUSES,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    processes.register_service(sub, DEFAULT_DATA_DIR)
    money.register(sub, DEFAULT_DATA_DIR)
    report.register(sub, DEFAULT_DATA_DIR)
    share.register(sub, DEFAULT_DATA_DIR)
    reel.register(sub, DEFAULT_DATA_DIR)
    export.register(sub, DEFAULT_DATA_DIR)
    money.register_upstream(sub, DEFAULT_DATA_DIR)
    team.register_keys(sub, DEFAULT_DATA_DIR)
    processes.register_dashboard(sub, DEFAULT_DATA_DIR)
    tasks.register(sub)
    config.register(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    from . import extras
    from .tasks import EXIT_REFUSED, run

    args = build_parser().parse_args(argv)
    needs = extras.COMMANDS.get(args.command, ())
    lacking = extras.missing(needs)
    if lacking is not None:
        print(extras.message(args.command, *lacking), file=sys.stderr)
        return EXIT_REFUSED
    try:
        return run(args)
    except ModuleNotFoundError as exc:
        extra = extras.extra_of(exc.name, needs)
        if extra is None or exc.name is None:  # no extra brings a module without a name
            raise
        print(extras.message(args.command, [extra], exc.name), file=sys.stderr)
        return EXIT_REFUSED
