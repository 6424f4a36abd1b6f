"""`dailies keys`, and the team deployment's part of the `dailies` command: the database and storage
options of `serve`, `worker`, `keys` and the operator's commands, and the service database those open.
The help texts say what README's "Team deployment" says.
"""

from __future__ import annotations

import argparse
import os
from pathlib import Path

from ..api_keys import mask as mask_key

TEAM_DEPLOYMENT = """\
One machine (the default): `dailies up` or `dailies serve`, SQLite and result files in --data-dir.

A team: any number of API nodes and render workers on any machines, sharing nothing but a
PostgreSQL database and an S3-compatible bucket (pip install 'dailies[service,team]'):

  dailies serve --slots 0 --database-url postgresql://... --storage s3://bucket/prefix   API nodes
  dailies worker --database-url postgresql://... --storage s3://bucket/prefix              render workers
(--slots: render slots, renders at once in one process; the old spelling of the flag still works and
says so)

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


def add_database_command(parser: argparse.ArgumentParser, default_data_dir: Path, func) -> None:
    """The tail of every command that writes the service's database: where it is, and what runs."""
    parser.add_argument("--data-dir", type=Path, default=default_data_dir)
    add_backend_arguments(parser, storage=False)
    parser.set_defaults(func=func)


def describe_deployment(parser: argparse.ArgumentParser) -> None:
    parser.formatter_class = argparse.RawDescriptionHelpFormatter
    parser.epilog = TEAM_DEPLOYMENT


def keys_in_database(args: argparse.Namespace, extra_keys: dict[str, str], options=None) -> int:
    """`dailies keys [create]` on a team database: keys are shown in full once, when made."""
    from dailies.service.access import shared_secrets
    from dailies.service.db.engine import make_engine

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
    from dailies.service.access.keys import KEYS_FILE
    from dailies.service.db.engine import make_engine

    from .tasks import CommandRefused

    url = args.database_url
    if url and not url.startswith("sqlite"):
        return make_engine(url)
    path = Path(url.removeprefix("sqlite:///")) if url else args.data_dir / "dailies.sqlite3"
    if not path.is_file() and not (path.parent / KEYS_FILE).is_file():
        raise CommandRefused(f"{args.command}: no service database at {path}, and no keys beside it; give the "
                             "--data-dir the service runs with (`dailies keys create --data-dir DIR` or the first "
                             "start of `dailies serve`/`dailies up` prepare it), or its --database-url")
    return make_engine(path)


def cmd_keys(args: argparse.Namespace) -> int:
    from dailies.service.access import keys as key_store
    from dailies.service.settings import keys_from_environment

    options = _key_options(args)
    if args.database_url:
        return keys_in_database(args, keys_from_environment(), options)
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
    from dailies.service.callers import KeyOptions, check_limit, check_member_name

    try:
        return KeyOptions(name=check_member_name(args.name) if args.name else None,
                          rpm=check_limit(args.rpm, "--rpm"), read_rpm=check_limit(args.read_rpm, "--read-rpm"))
    except ValueError as exc:
        raise SystemExit(f"dailies keys: {exc}") from None


def register_keys(sub, default_data_dir: Path) -> None:
    keys = sub.add_parser("keys", help="list or create API keys")
    keys.add_argument("action", nargs="?", choices=["list", "create"], default="list")
    keys.add_argument("--project", help="project of the new key (default: a new project)")
    keys.add_argument("--data-dir", type=Path, default=default_data_dir)
    keys.add_argument("--show", action="store_true", help="print keys in full")
    keys.add_argument("--name", help="the member name of the new key: shown in spend, charts and review, where "
                                     "the key never is")
    keys.add_argument("--rpm", type=int, help="task creations per minute allowed to the new key (default: no limit)")
    keys.add_argument("--read-rpm", type=int, help="lists and gets per minute allowed to the new key")
    add_backend_arguments(keys, storage=False)
    keys.set_defaults(func=cmd_keys)
