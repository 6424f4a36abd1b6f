"""`dailies config`: every setting's effective value (dailies/config.py), where it came from (the
environment, `.env` in the working directory, or the default) and what it means; secrets masked.
`--json` prints the same as a list of objects. A variable holding a value Dailies cannot use: a line
naming it on stderr, exit 2 (as `serve`, `worker`, `dashboard` and `up` do at start).
"""

from __future__ import annotations

import argparse
import json
import sys


def cmd_config(args: argparse.Namespace) -> int:
    from .. import config

    try:
        rows = config.describe()
    except config.ConfigError as exc:
        print(f"dailies config: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps([{"name": r.name, "value": r.value, "source": r.source, "secret": r.secret,
                           "description": r.description} for r in rows], indent=2))
        return 0
    name_width = max(len(r.name) for r in rows)
    value_width = min(40, max(len(r.value) for r in rows))
    for r in rows:
        print(f"{r.name:<{name_width}}  {r.value or '-':<{value_width}}  {r.source}")
    if args.verbose:
        print()
        for r in rows:
            print(f"{r.name}: {r.description}")
    return 0


def register(sub) -> None:
    parser = sub.add_parser("config", help="print the effective settings (environment, .env, defaults; secrets "
                                           "masked)",
                            description="Every environment variable Dailies reads, its effective value, and where "
                                        "it came from: the environment, .env in this directory, or the default. "
                                        "Secrets are masked. Exit 2 when a value is invalid.")
    parser.add_argument("--json", action="store_true", help="a JSON list of {name, value, source, secret, description}")
    parser.add_argument("-v", "--verbose", action="store_true", help="each variable's meaning too")
    parser.set_defaults(func=cmd_config)
