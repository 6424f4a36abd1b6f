"""`dailies budget` and `dailies spend`: what a project or a member may spend, and what was spent;
`dailies upstream`: a gateway's upstream keys, whose spend `dailies spend --upstream` shows.

They work on the service's database directly (SQLite in --data-dir, or --database-url), as
`dailies keys` does: an operator's commands, not a member's.
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from datetime import date
from decimal import Decimal, InvalidOperation
from pathlib import Path

from . import team
from .tasks import CommandRefused

BUDGET_ABOUT = ("A budget caps what a project (or one member, --key NAME) may spend, per calendar month (UTC) "
                "or in total, in one currency. A create that would pass it is refused (403 "
                "AccountOverdueError.BudgetExceeded); a model priced in the other currency, or with no known price, "
                "is refused while it applies.")
UPSTREAM_ABOUT = ("The team's Ark / ModelArk keys for `--upstream`, kept in the service's database encrypted with "
                  "DAILIES_UPSTREAM_SECRET (never stored). Keys of DAILIES_UPSTREAM_KEYS come first, then these "
                  "by priority (lower first). Services read them at start.")


def _engine(args: argparse.Namespace):
    return team.open_service_database(args)


def _members(args: argparse.Namespace, engine) -> dict[str, set[str]]:
    """project -> member names of its keys, where the service reads keys: DAILIES_API_KEYS, and the
    database's key table for a shared database, else the data directory's keys file."""
    from sqlalchemy import select

    from dailies.service.access import keys as key_store
    from dailies.service.db.tables import api_keys
    from dailies.service.settings import key_options_from_environment, keys_from_environment

    def name(options) -> str | None:
        return options.name if options is not None else None

    env_options = key_options_from_environment()
    pairs = [(project, name(env_options.get(key))) for key, project in keys_from_environment().items()]
    if args.database_url:
        with engine.connect() as conn:
            pairs += conn.execute(select(api_keys.c.project, api_keys.c.name)).all()
    else:
        options = key_store.load_key_options(args.data_dir)
        pairs += [(project, name(options.get(key))) for key, project in key_store.load_keys(args.data_dir).items()]
    members: dict[str, set[str]] = {}
    for project, member in pairs:
        members.setdefault(project, set()).update([member] if member else [])
    return members


def _check_budget_target(args: argparse.Namespace, engine) -> None:
    """A budget on a project no key belongs to, or on a member name no key of it has, caps nothing
    (a typo, or the wrong data directory): refused unless --force (a key to be made later)."""
    if args.force:
        return
    members = _members(args, engine)
    if args.project not in members:
        known = ", ".join(sorted(members)) or "none"
        raise CommandRefused(f"budget set: no key belongs to project {args.project} (projects with keys: {known}); "
                             "check --project and --data-dir/--database-url, or give --force to set it anyway")
    if args.key and args.key not in members[args.project]:
        known = ", ".join(sorted(members[args.project])) or "none"
        raise CommandRefused(f"budget set: no key of project {args.project} has the member name {args.key} "
                             f"(its members: {known}); check --key, or give --force to set it anyway")


def _check_currency_change(args: argparse.Namespace, engine) -> None:
    """A budget holds one currency: one in another replaces it and forgets what it kept count of in the
    first, so that takes --force (a member's refusal in the other currency is no reason on its own)."""
    from dailies.service.billing import budgets

    if args.force:
        return
    with engine.connect() as conn:
        existing = [s for s in budgets.budget_status(conn, args.project, time.time()) if s.member == (args.key or "")]
    if existing and existing[0].currency != args.currency:
        now = existing[0]
        who = f"member {args.key} of project {args.project}" if args.key else f"project {args.project}"
        raise CommandRefused(f"budget set: {who} has a budget of {budgets.money(now.amount, now.currency)} "
                             f"{'in total' if now.period == 'total' else 'a month'}, in {now.currency}; a budget "
                             f"holds one currency, and this would replace it with one in {args.currency}: give "
                             "--force to replace it")


def _amount(text: str) -> Decimal:
    try:
        value = Decimal(text)
    except InvalidOperation:
        raise argparse.ArgumentTypeError(f"not an amount: {text!r}") from None
    if not value.is_finite() or value < 0:
        raise argparse.ArgumentTypeError("an amount is a number, 0 or more")
    return value


def _day(text: str) -> date:
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a date (YYYY-MM-DD): {text!r}") from None


def cmd_budget(args: argparse.Namespace) -> int:
    from dailies.service.billing import budgets

    engine = _engine(args)
    try:
        if args.action == "set":
            if args.amount is None or args.currency is None:
                raise SystemExit("dailies budget set: --amount and --currency are required")
            _check_budget_target(args, engine)
            _check_currency_change(args, engine)
            budgets.set_budget(engine, args.project, args.key or "", args.amount, args.currency, args.period,
                               time.time())
        elif args.action == "remove":
            if not budgets.remove_budget(engine, args.project, args.key or ""):
                print("No such budget.", file=sys.stderr)
                return 1
            print(f"removed the budget of {f'member {args.key} of ' if args.key else ''}project {args.project}")
            return 0
        with engine.connect() as conn:
            statuses = budgets.budget_status(conn, args.project, time.time())
        if not statuses:
            print(f"No budget for project {args.project}.")
        for s in statuses:
            who = f"member {s.member}" if s.member else "whole project"
            amount, spent, reserved, left = (budgets.money(v, s.currency)
                                             for v in (s.amount, s.settled, s.reserved, s.left))
            print(f"{args.project:<20} {who:<24} {s.period_label:<8} budget {amount:>12}  spent {spent:>12}  "
                  f"reserved {reserved:>10}  left {left:>12}")
        return 0
    finally:
        engine.dispose()


def cmd_spend(args: argparse.Namespace) -> int:
    from dailies.service.billing import budgets

    if args.upstream:
        return _upstream_spend(args)
    if not args.project:
        raise SystemExit("dailies spend: --project P (or --upstream for a gateway's upstream keys)")
    engine = _engine(args)
    try:
        with engine.connect() as conn:
            rows = budgets.spend(conn, args.project, args.since)
    finally:
        engine.dispose()
    if args.csv:
        writer = csv.writer(sys.stdout)
        writer.writerow(["day", "member", "model", "currency", "state", "tasks", "tokens", "amount"])
        for row in rows:
            d = row.as_dict()
            writer.writerow([d["day"], d["member"], d["model"], d["currency"] or "", d["state"], d["tasks"],
                             d["tokens"], d["amount"]])
        return 0
    if not rows:
        print(f"Nothing spent in project {args.project}" + (f" since {args.since}." if args.since else "."))
        return 0
    print(f"{'day':<11} {'member':<16} {'model':<36} {'state':<9} {'tasks':>5} {'tokens':>12} {'amount':>12}")
    totals: dict[str, int] = {}
    for row in rows:
        shown = budgets.money(row.amount, row.currency) if row.currency else "no price"
        print(f"{row.day:<11} {row.member or '-':<16} {row.model:<36} {row.state:<9} {row.tasks:>5} "
              f"{row.tokens:>12,} {shown:>12}")
        if row.currency and row.state == "settled":
            totals[row.currency] = totals.get(row.currency, 0) + row.amount
    for currency, amount in sorted(totals.items()):
        print(f"spent in {currency}: {budgets.money(amount, currency)} "
              "(reserved amounts of running tasks not included)")
    return 0


def _upstream_spend(args: argparse.Namespace) -> int:
    """A gateway's spend per upstream key, every project, from the upstream's usage."""
    from dailies.service.billing import budgets

    engine = _engine(args)
    try:
        with engine.connect() as conn:
            rows = budgets.upstream_spend(conn, args.since)
    finally:
        engine.dispose()
    if args.csv:
        writer = csv.writer(sys.stdout)
        writer.writerow(["upstream_key", "currency", "tasks", "tokens", "amount"])
        for r in rows:
            writer.writerow([r.upstream_key, r.currency, r.tasks, r.tokens, str(Decimal(r.amount) / budgets.MICROS)])
        return 0
    if not rows:
        print("Nothing spent through upstream keys" + (f" since {args.since}." if args.since else "."))
    for r in rows:
        shown = budgets.money(r.amount, r.currency) if r.currency else "no price"
        print(f"{r.upstream_key:<16} {r.tasks:>6} tasks {r.tokens:>14,} tokens {shown:>14}")
    return 0


def register(sub, default_data_dir: Path) -> None:
    budget = sub.add_parser("budget", help="set, list or remove spending budgets of a project or a member",
                            description=BUDGET_ABOUT)
    budget.add_argument("action", choices=["set", "list", "remove"])
    budget.add_argument("--project", required=True)
    budget.add_argument("--key", metavar="NAME", help="the member name of a key (dailies keys create --name)")
    budget.add_argument("--amount", type=_amount)
    budget.add_argument("--currency", choices=["CNY", "USD"])
    budget.add_argument("--period", choices=["month", "total"], default="month")
    budget.add_argument("--force", action="store_true",
                        help="set: accept a project no key belongs to, or a --key name no key of it has")
    team.add_database_command(budget, default_data_dir, cmd_budget)

    spend = sub.add_parser("spend", help="what a project spent, per day, member and model")
    spend.add_argument("--project")
    spend.add_argument("--upstream", action="store_true", help="a gateway's spend per upstream key, every project")
    spend.add_argument("--since", type=_day, help="from this day (YYYY-MM-DD, UTC)")
    spend.add_argument("--csv", action="store_true", help="CSV on standard output")
    team.add_database_command(spend, default_data_dir, cmd_spend)


def register_upstream(sub, default_data_dir: Path) -> None:
    up = sub.add_parser("upstream", help="a gateway's upstream keys, stored encrypted in the database",
                        description=UPSTREAM_ABOUT)
    up.add_argument("action", choices=["add", "list", "remove", "new-secret"])
    up.add_argument("--name", help="the key's name (shown; the key never is)")
    up.add_argument("--key", help="the upstream API key (add); left out or `-`: read from standard input, "
                                   "so it stays out of the shell's history and the process list")
    up.add_argument("--priority", type=int, default=100, help="lower is used first (default 100)")
    team.add_database_command(up, default_data_dir, cmd_upstream)


def _read_secret(what: str) -> str:
    """A secret from standard input: asked for without echo on a terminal, else its first line (a pipe,
    a file, a secret manager's output)."""
    if sys.stdin.isatty():
        import getpass

        return getpass.getpass(f"{what}: ").strip()
    return sys.stdin.readline().strip()


def cmd_upstream(args: argparse.Namespace) -> int:
    from dailies.service.gateway import keys as upstream_keys

    if args.action == "new-secret":
        print(upstream_keys.new_secret())
        print(f"(set it as {upstream_keys.SECRET_ENV} on every API node and worker; keep it out of the database)")
        return 0
    engine = team.open_service_database(args)
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
