"""The team deployment's part of the `dailies` command: the database and storage options of
`serve` and `keys`, and `dailies worker`. The help texts say what README's "Team deployment" says.
"""

from __future__ import annotations

import argparse
import logging
import os
import sys
from pathlib import Path

TEAM_DEPLOYMENT = """\
One machine (the default): `dailies up` or `dailies serve`, SQLite and result files in --data-dir.

A team: any number of API nodes and render workers on any machines, sharing nothing but a
PostgreSQL database and an S3-compatible bucket (pip install 'dailies[team]'):

  dailies serve --workers 0 --database-url postgresql://... --storage s3://bucket/prefix   API nodes
  dailies worker --database-url postgresql://... --storage s3://bucket/prefix              render workers

Settings (each flag also reads its environment variable):
  --database-url   DAILIES_DATABASE_URL   postgresql://user:password@host:5432/dailies
  --storage        DAILIES_STORAGE        s3://bucket/prefix
  AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_REGION: the standard AWS settings
                   of the bucket (AWS S3, Volcengine TOS, MinIO, SeaweedFS)
  DAILIES_API_KEYS  keys every API node accepts; more with `dailies keys create --database-url ...`

The schema is created and upgraded by whichever process starts first. Webhook secrets and the
URL signing secret live in the database. Result URLs are presigned GET URLs of the bucket, valid
24 hours from success. Callback URLs on loopback or private addresses are refused (the API node
would otherwise POST to its own ports or network for any member); `dailies serve
--allow-loopback-callbacks` / `--allow-private-callbacks` allow them.
"""


def add_backend_arguments(parser: argparse.ArgumentParser, storage: bool = True) -> None:
    """--database-url (and --storage) on a subcommand, defaulting to their environment variables."""
    parser.add_argument("--database-url", default=os.environ.get("DAILIES_DATABASE_URL") or None,
                        help="PostgreSQL URL shared by every API node and worker (DAILIES_DATABASE_URL); "
                             "default: SQLite in --data-dir")
    if storage:
        parser.add_argument("--storage", default=os.environ.get("DAILIES_STORAGE") or None,
                            help="s3://bucket/prefix for result files (DAILIES_STORAGE; AWS_* settings); "
                                 "default: a folder in --data-dir")


def describe_deployment(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = TEAM_DEPLOYMENT


def register_worker(sub, default_slots: int, default_data_dir: Path) -> None:
    worker = sub.add_parser("worker", help="run render slots only (no HTTP), on any machine reaching the "
                                           "database and storage",
                            description="Render workers claim queued tasks from the database, render "
                                        "them and store the results. No HTTP: clients talk to the API "
                                        "nodes (`dailies serve --workers 0`).")
    describe_deployment(worker)
    add_backend_arguments(worker)
    worker.add_argument("--slots", type=int, default=default_slots,
                        help=f"render slots of this process (default {default_slots}: one per two cores)")
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
    worker.set_defaults(func=cmd_worker)


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
    from .generator.upstream import parse_upstream_keys

    # More keys may be stored in the database (`dailies upstream add`); the service says if none are anywhere.
    keys = parse_upstream_keys(os.environ.get("DAILIES_UPSTREAM_KEYS", ""))
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


def cmd_worker(args: argparse.Namespace) -> int:
    from .service.settings import Settings
    from .service.worker_process import run_worker

    if args.slots < 1:
        raise SystemExit("dailies worker: --slots must be 1 or more")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s",
                        filename=args.log_file)
    settings = Settings(
        data_dir=args.data_dir, workers=args.slots, database_url=args.database_url, storage=args.storage,
        public_url=args.public_url or "http://127.0.0.1:8000", allow_loopback_inputs=args.allow_loopback_inputs,
        stale_after=args.stale_after, **upstream_settings(args),
    )
    return run_worker(settings, grace_period=args.grace_period, metrics_port=args.metrics_port)


def keys_in_database(args: argparse.Namespace, extra_keys: dict[str, str], options=None) -> int:
    """`dailies keys [create]` on a team database: keys are shown in full once, when made."""
    from .service import shared_secrets
    from .service.db import make_engine

    engine = make_engine(args.database_url)
    try:
        if args.action == "create":
            created = shared_secrets.create_key(engine, args.project, *([options] if options else []))
            print(f"project {created.project}\nkey     {created.key}")
            print(f"webhook secret {shared_secrets.webhook_secret(engine, created.project)}")
            print("(the database keeps only a hash of the key: store it now)")
            return 0
        projects = shared_secrets.list_projects(engine, extra_keys)
        if not projects:
            print("No keys in the database. Make one with `dailies keys create --database-url ...`.")
        for name, info in projects.items():
            print(f"project {name}")
            for key in info["keys"]:
                print(f"  key            {key}")
            print(f"  webhook secret {info['webhook_secret']}")
        return 0
    finally:
        engine.dispose()


def open_service_database(args: argparse.Namespace):
    """The service's database for an operator's command (budget, spend, upstream), never one of a
    directory that is no service's. SQLite: the file the service made, or, before the service ever
    started, the database of a directory `dailies keys create` has written its keys to (made here by
    the service's own schema install, as `dailies serve` would). A wrong --data-dir (or the default
    one, from another directory) holds neither and is refused: an empty database there, which no
    service reads, would take a budget that is never enforced. PostgreSQL: the schema is installed
    by whichever command or process connects first."""
    from .cli_client import CommandRefused
    from .service.db import make_engine
    from .service.keys import KEYS_FILE

    url = args.database_url
    if url and not url.startswith("sqlite"):
        return make_engine(url)
    path = Path(url.removeprefix("sqlite:///")) if url else args.data_dir / "dailies.sqlite3"
    if not path.is_file() and not (path.parent / KEYS_FILE).is_file():
        raise CommandRefused(f"{args.command}: no service database at {path}, and no keys beside it; give the "
                             "--data-dir the service runs with (`dailies keys create --data-dir DIR` or the first "
                             "start of `dailies serve`/`dailies up` prepare it), or its --database-url")
    return make_engine(path)


def register_upstream(sub, default_data_dir: Path) -> None:
    up = sub.add_parser("upstream", help="a gateway's upstream keys, stored encrypted in the database",
                        description="The team's Ark / ModelArk keys for `--upstream`, kept in the service's database "
                                    "encrypted with DAILIES_UPSTREAM_SECRET (never stored). Keys of "
                                    "DAILIES_UPSTREAM_KEYS come first, then these by priority (lower first). Services "
                                    "read them at start.")
    up.add_argument("action", choices=["add", "list", "remove", "new-secret"])
    up.add_argument("--name", help="the key's name (shown; the key never is)")
    up.add_argument("--key", help="the upstream API key (add); left out or `-`: read from standard input, "
                                   "so it stays out of the shell's history and the process list")
    up.add_argument("--priority", type=int, default=100, help="lower is used first (default 100)")
    up.add_argument("--data-dir", type=Path, default=default_data_dir)
    add_backend_arguments(up, storage=False)
    up.set_defaults(func=cmd_upstream)


def _read_secret(what: str) -> str:
    """A secret from standard input: asked for without echo on a terminal, else its first line (a pipe,
    a file, a secret manager's output)."""
    if sys.stdin.isatty():
        import getpass

        return getpass.getpass(f"{what}: ").strip()
    return sys.stdin.readline().strip()


def cmd_upstream(args: argparse.Namespace) -> int:
    from .service import upstream_keys

    if args.action == "new-secret":
        print(upstream_keys.new_secret())
        print(f"(set it as {upstream_keys.SECRET_ENV} on every API node and worker; keep it out of the database)")
        return 0
    engine = open_service_database(args)
    try:
        if args.action == "add":
            if not args.name:
                raise SystemExit("dailies upstream add: --name is required")
            key = args.key if args.key not in (None, "-") else _read_secret("upstream API key")
            if not key:
                raise SystemExit("dailies upstream add: no key given (--key, or the key on standard input)")
            try:
                upstream_keys.add(engine, args.name, key, args.priority)
            except ValueError as exc:
                raise SystemExit(f"dailies upstream add: {exc}") from None
            print(f"upstream key {args.name} stored (encrypted); services use it from their next start")
        elif args.action == "remove":
            if not args.name or not upstream_keys.remove(engine, args.name):
                print("No such upstream key.", file=sys.stderr)
                return 1
            print(f"upstream key {args.name} removed; services stop using it from their next start")
        else:
            stored = upstream_keys.listed(engine)
            if not stored:
                print("No upstream keys in the database (DAILIES_UPSTREAM_KEYS may give some).")
            for key in stored:
                health = f"set aside: {key.set_aside}" if key.set_aside else "ok"
                print(f"{key.name:<16} priority {key.priority:<4} {key.masked:<14} {health}")
        return 0
    finally:
        engine.dispose()
