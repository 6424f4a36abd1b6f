"""`dailies share create|list|revoke`: share links to a guest review of some versions (issue 25).

They work on the dashboard's journal (data_dir/dashboard/journal.sqlite3, or DAILIES_DATABASE_URL /
--database-url, kept copies in DAILIES_STORAGE / --storage), as the dashboard does. `create` keeps a
copy of each task's video first when the journal has none (with the client: --base-url / --api-key,
default ARK_BASE_URL / ARK_API_KEY), since the link plays the kept copy and outlives the 24 h result
URLs. On a Dailies service the share belongs to the key's project (`GET /dailies/v1/me`), made by its
member, and `--project` may only repeat it; on a service that does not say, `--project` names it.
The link opens on --dashboard-url, else on the dashboard `dailies up` runs on the data directory, and
`create` says when that dashboard's guest page will refuse it (no team mode, no sign-in).
"""

from __future__ import annotations

import argparse
import getpass
import json
import os
import re
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

from . import tasks, team

DASHBOARD_URL_ENV = "DAILIES_DASHBOARD_URL"
_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400, "w": 7 * 86_400}
# A share link is for a review, not for ever: a typo such as 99999w would otherwise make one that
# lasts millennia.
MAX_EXPIRY_DAYS = 366
SHARE_ABOUT = ("A share link opens a guest review page of the dashboard showing only the shared versions (their "
               "kept copies), which needs no key. Only a hash of its token is stored; it expires, can be revoked, "
               "and may ask a passphrase.")


def duration(text: str) -> float:
    """'7d', '24h', '30m', '2w', '90s' (a number alone is days) in seconds, at most a year."""
    found = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([smhdw]?)\s*", text.lower())
    if not found or float(found.group(1)) <= 0:
        raise argparse.ArgumentTypeError(f"not a duration (7d, 24h, 30m): {text!r}")
    seconds = float(found.group(1)) * _UNITS[found.group(2) or "d"]
    if seconds > MAX_EXPIRY_DAYS * 86_400:
        raise argparse.ArgumentTypeError(f"at most {MAX_EXPIRY_DAYS} days (a year), got {text!r}")
    return seconds


def _journal(args: argparse.Namespace):
    from ..journal import Journal

    return Journal(args.data_dir / "dashboard" / "journal.sqlite3", database_url=args.database_url,
                   storage=args.storage)


def _when(at: float | None) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M UTC") if at else "-"


def share_link(dashboard_url: str, token: str) -> str:
    return f"{dashboard_url.rstrip('/')}/guest?share={token}"


def _api_key(args: argparse.Namespace) -> str:
    from ..client import environment_defaults

    return args.api_key or environment_defaults(os.environ)[1]


def _client(args: argparse.Namespace):
    """The client, given a key (to keep copies, name the project and read prompts); None without."""
    if not _api_key(args):
        return None
    return tasks.make_client(args, timeout=60, max_retries=2)


def _base_url(args: argparse.Namespace) -> str:
    return tasks.checked_base_url(args)


def _keep(client, view, task_id: str) -> None:
    """Download the task's video (and last frame) into the journal's kept copies."""
    from ..spec.results import LAST_FRAME_NAME, VIDEO_NAME
    from ..spec.statuses import TaskStatus

    record = client.tasks.get(task_id)
    if record.status != TaskStatus.SUCCEEDED or not record.content or not record.content.video_url:
        raise SystemExit(f"dailies share: {task_id} is {record.status}; there is no video to share")
    files = [(VIDEO_NAME, record.content.video_url)]
    if record.content.last_frame_url:
        files.append((LAST_FRAME_NAME, record.content.last_frame_url))
    for name, url in files:
        path = view.keep_path(task_id, name)
        path.parent.mkdir(parents=True, exist_ok=True)
        client.download(url, path)
        view.mark_kept(task_id, name, path)
    view.save_records([record.model_dump(mode="json", exclude_none=True)])
    print(f"kept a copy of {task_id}", file=sys.stderr)


def _scope(args: argparse.Namespace, client):
    """The journal scope the share belongs to, and who makes it."""
    from ..client import DailiesError
    from ..journal import Scope

    who = None
    api_key = _api_key(args)
    if client is not None and api_key:
        try:
            who = client.me()
        except DailiesError:
            who = None
    # A key that its service names a project for shares that project's versions and keeps copies there,
    # downloaded with that key: --project is for services that do not say, never a way into another
    # project (whose tasks this key cannot even read).
    if who is not None and args.project and args.project != who.project:
        raise SystemExit(f"dailies share: this key belongs to project {who.project!r}, not {args.project!r}; "
                         "leave out --project (it is for services that do not name a key's project), or use "
                         f"a key of {args.project!r}")
    base_url = client.base_url if client is not None else _base_url(args)
    author = args.as_name or (who.member if who is not None and who.member else "") or getpass.getuser()
    if args.project:
        return Scope.of_project(base_url, args.project, author=author)
    if who is not None:
        return Scope.of_project(base_url, who.project, author=author)
    if api_key:
        return Scope.of(base_url, api_key, author=author)
    raise SystemExit("dailies share: --project P (or an API key of a Dailies service, which names its project)")


def cmd_create(args: argparse.Namespace) -> int:
    from ..client import DailiesError
    from ..journal.shares import ask_notice_grant, prompts_to_share
    from ..spec.results import VIDEO_NAME

    passphrase = args.passphrase
    if passphrase == "":  # --passphrase with no value: ask, without echo
        passphrase = getpass.getpass("Passphrase for the share: ")
        if not passphrase:
            raise SystemExit("dailies share: an empty passphrase")
    journal = _journal(args)
    client = _client(args)
    try:
        view = journal.scoped(_scope(args, client))
        for task_id in dict.fromkeys(args.task):
            if VIDEO_NAME not in view.kept(task_id):
                if client is None:
                    raise SystemExit(f"dailies share: no kept copy of {task_id}; give --api-key (or ARK_API_KEY) "
                                     "to keep one")
                _keep(client, view, task_id)

        def stored(task_id: str) -> str | None:
            try:
                return client.task_request(task_id).prompt if client is not None else None
            except DailiesError:
                return None

        prompts = prompts_to_share(view, dict.fromkeys(args.task), stored)
        said: list[str] = []
        guests_write = args.allow_comments or args.allow_status
        share, token = view.create_share(list(args.task), args.expires, passphrase=passphrase or None,
                                         allow_comments=args.allow_comments, allow_status=args.allow_status,
                                         hide_prompt=args.hide_prompt, prompts=prompts,
                                         notice_grant=ask_notice_grant(client, said)
                                         if client is not None and guests_write else None)
    finally:
        if client is not None:
            client.close()
        journal.close()
    dashboard_url, notes, guests_can_open = link_dashboard(args)
    link = share_link(dashboard_url, token) if dashboard_url else None
    for note in [*notes, *said]:
        print(note, file=sys.stderr)
    if args.json:
        print(json.dumps({"id": share.id, "token": token, "link": link, "expires_at": share.expires_at,
                          "tasks": list(share.task_ids), "created_by": share.created_by,
                          "guests_can_open": guests_can_open}))
        return 0
    print(f"share {share.id} of {len(share.task_ids)} version(s), by {share.created_by}, "
          f"until {_when(share.expires_at)}")
    print(link or f"token (shown once): {token}  (the link: <dashboard>/guest?share={token})")
    return 0


GUESTS_NEED = ("a guest page opens shares only on a team dashboard (`dailies up --team`, `dailies dashboard --team`) "
               "or one whose visitors sign in (README: Sign-in)")


def link_dashboard(args: argparse.Namespace) -> tuple[str | None, list[str], bool | None]:
    """The dashboard the link opens on (--dashboard-url / DAILIES_DASHBOARD_URL, else the one `dailies up`
    runs on this data directory), what to tell the person making the share about it, and whether a guest
    can open it there (None: a dashboard this command cannot see). Said now, not when the guest arrives."""
    from urllib.parse import urlsplit

    from ..launcher import running_dashboard

    running = running_dashboard(args.data_dir)
    given = args.dashboard_url.rstrip("/") if args.dashboard_url else None
    if running is None or (given is not None and given != running.url.rstrip("/")):
        if given is None:
            return None, [f"note: {GUESTS_NEED}; give its address (--dashboard-url, ${DASHBOARD_URL_ENV}) to "
                          "print the whole link"], None
        return given, [], None
    notes = []
    if not running.guests_can_open:
        notes.append(f"warning: no guest can open this link yet. The dashboard at {running.url} (`dailies up` on "
                     "this data directory) has no sign-in and is not in team mode: it gives its own key to whoever "
                     "opens it, so its guest page refuses every share. Restart it as `dailies up --team`, or set up "
                     "sign-in (README: Sign-in); the link then works until it expires.")
    host = urlsplit(running.url).hostname or ""
    if given is None and (host == "localhost" or host.startswith("127.") or host == "::1"):
        notes.append(f"note: {running.url} reaches this machine only; for a guest elsewhere give the address they "
                     f"reach it at (--dashboard-url, ${DASHBOARD_URL_ENV})")
    return given or running.url, notes, running.guests_can_open


def cmd_list(args: argparse.Namespace) -> int:
    from ..journal import Scope

    journal = _journal(args)
    try:
        if args.project:
            shares = journal.scoped(Scope.of_project(_base_url(args), args.project)).shares()
        else:
            shares = journal.shares()
    finally:
        journal.close()
    now = time.time()
    if args.json:
        print(json.dumps([{"id": s.id, "scope": s.scope, "state": s.state(now), "created_by": s.created_by,
                           "created_at": s.created_at, "expires_at": s.expires_at, "tasks": list(s.task_ids),
                           "allow_comments": s.allow_comments, "allow_status": s.allow_status,
                           "hide_prompt": s.hide_prompt, "passphrase": s.has_passphrase} for s in shares]))
        return 0
    if not shares:
        print("No shares.")
    for s in shares:
        flags = ",".join(f for f, on in (("comments", s.allow_comments), ("status", s.allow_status),
                                          ("prompt hidden", s.hide_prompt), ("passphrase", s.has_passphrase)) if on)
        print(f"{s.id}  {s.state(now):<8} by {s.created_by:<16} {_when(s.created_at)}  until {_when(s.expires_at)}  "
              f"{len(s.task_ids)} version(s): {' '.join(s.task_ids)}  [{flags or '-'}]"
              + ("" if args.project else f"  {s.scope}"))
    return 0


def cmd_revoke(args: argparse.Namespace) -> int:
    journal = _journal(args)
    try:
        done = journal.revoke_share(args.share_id)
    finally:
        journal.close()
    if not done:
        print(f"dailies share: no share {args.share_id} to revoke (unknown, or revoked already)", file=sys.stderr)
        return 1
    print(json.dumps({"id": args.share_id, "revoked": True}) if args.json else f"revoked share {args.share_id}")
    return 0


def register(sub, default_data_dir: Path) -> None:
    share = sub.add_parser("share", help="share links: a guest review of some versions, without a key",
                           description=SHARE_ABOUT)
    actions = share.add_subparsers(dest="share_action", required=True)

    def common(parser: argparse.ArgumentParser) -> None:
        parser.add_argument("--data-dir", type=Path, default=default_data_dir,
                            help="the dashboard's data directory (its journal is in dashboard/)")
        team.add_backend_arguments(parser)
        parser.add_argument("--json", action="store_true")

    create = actions.add_parser("create", help="share some versions; prints the link once")
    create.add_argument("--task", action="append", required=True, metavar="ID", help="a task to share (repeat)")
    create.add_argument("--project", help="the project the share belongs to, on a service that does not name "
                                          "a key's (a Dailies service does: its key's project, no other)")
    create.add_argument("--expires", type=duration, default=duration("7d"), metavar="7d",
                        help="how long the link works: 30m, 24h, 7d, 2w (default 7d)")
    create.add_argument("--passphrase", nargs="?", const="", default=None, metavar="P",
                        help="ask the guest this passphrase (no value: typed without echo)")
    create.add_argument("--allow-comments", action="store_true", help="the guest may comment")
    create.add_argument("--allow-status", action="store_true", help="the guest may set a review status")
    create.add_argument("--hide-prompt", action="store_true", help="do not show the prompt")
    create.add_argument("--as", dest="as_name", metavar="NAME", help="who makes the share (default: the key's "
                                                                     "member name, else your user name)")
    create.add_argument("--base-url", help="the service (default: $ARK_BASE_URL), to keep copies and name the scope")
    create.add_argument("--api-key", help="API key (default: $ARK_API_KEY)")
    create.add_argument("--dashboard-url", default=os.environ.get(DASHBOARD_URL_ENV) or None,
                        help=f"the dashboard's public address, to print the whole link (${DASHBOARD_URL_ENV}; "
                             "default: the dashboard a `dailies up` runs on --data-dir)")
    common(create)
    create.set_defaults(func=cmd_create)

    listing = actions.add_parser("list", help="the shares, with who made them and their state")
    listing.add_argument("--project", help="only this project's (with --base-url / $ARK_BASE_URL)")
    listing.add_argument("--base-url")
    common(listing)
    listing.set_defaults(func=cmd_list)

    revoke = actions.add_parser("revoke", help="revoke a share: its link stops working at once")
    revoke.add_argument("share_id", metavar="ID")
    common(revoke)
    revoke.set_defaults(func=cmd_revoke)
