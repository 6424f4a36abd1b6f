"""`dailies reel --task ID [--task ID ...] -o reel.mp4`: the videos of some tasks, in the order given, in
one MP4 (dailies.reel), with a slate before each shot and a burn-in if asked.

Each task's video is the dashboard journal's kept copy when there is one (`--data-dir`/dashboard, or
the team's journal from DAILIES_DATABASE_URL / DAILIES_STORAGE), else it is downloaded from the service
(`--base-url`/`--api-key`, default $ARK_BASE_URL/$ARK_API_KEY) into a temporary folder. The slate says
what the journal and the service know: version, review status, prompt excerpt and date.

The journal is read as the key's, as the dashboard reads it (components/common/identity.py): on a Dailies
service, which names the key's project (`GET /dailies/v1/me`), that project's scope; elsewhere, or
while the service gives no answer, the key's own scope. Another project's kept copies, statuses and
versions are never read: a task of another project is not in the key's scope, and the service answers
404 for it, so the reel refuses it (`dailies report` is the operator's command across every scope).
The environment's key outside a team (the dashboard's default connection in single-user mode) also
reads the rows from before scopes; without a key, no scope of a journal is the reel's (refused).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..client import APIError, Client, DailiesError, NotFoundError, environment_defaults, normalize_base_url
from ..reel_options import DEFAULT_FPS, DEFAULT_SIZE, SLATE_SECONDS, parse_size
from ..spec.results import VIDEO_NAME
from ..spec.statuses import TaskStatus
from .tasks import NO_API_KEY, CommandRefused, add_connection_args, make_client

JOURNAL_NAME = Path("dashboard") / "journal.sqlite3"


def short_title(task_id: str) -> str:
    """The distinctive tail of a task id, as the Review page shows it: 'cgt-20261122044702-xkfw0' ->
    '…044702-xkfw0'."""
    return "…" + task_id[-12:] if len(task_id) > 14 else task_id


def open_journal(data_dir: Path):
    """The dashboard's journal in `data_dir`, or the team's (DAILIES_DATABASE_URL); None when there is
    neither (nothing is created for a reel)."""
    from ..journal import DATABASE_ENV, Journal

    path = data_dir / JOURNAL_NAME
    if not path.is_file() and not os.environ.get(DATABASE_ENV):
        return None
    return Journal(path)


def _api_key(args: argparse.Namespace) -> str:
    return args.api_key if args.api_key is not None else environment_defaults(os.environ)[1]


def _is_environment_default(base_url: str, api_key: str) -> bool:
    """Whether the connection is the environment's (ARK_BASE_URL and ARK_API_KEY) outside a team: the
    dashboard's default connection in single-user mode, the one that also sees the journal's rows from
    before scopes (components/common/connection.py `current`)."""
    from ..launcher import team_mode_in

    env_base_url, env_key = environment_defaults(os.environ)
    if team_mode_in(os.environ) or not env_key or api_key != env_key:
        return False
    try:
        return base_url == normalize_base_url(env_base_url)
    except ValueError:
        return False


def key_scope(client: Client, api_key: str):
    """The journal scope of the key, as the dashboard picks it: its project's on a Dailies service that
    names one, else the key's own (a service with no `/me`, one that refuses the key, or one that gives
    no answer now: a reel only reads, and the key's own rows are its own)."""
    from ..client import APIConnectionError, APIStatusError, InternalServerError, RateLimitError
    from ..journal import Scope
    from ..spec.catalog import region_of_host

    include_unscoped = _is_environment_default(client.base_url, api_key)
    if region_of_host(client.base_url) is None:  # Ark's and ModelArk's hosts have no /dailies/v1
        try:
            who = client.me()
        except DailiesError as exc:
            unreached = (isinstance(exc, APIConnectionError | InternalServerError | RateLimitError)
                         or (isinstance(exc, APIStatusError) and exc.status_code == 408))
            if unreached:
                _say(f"dailies reel: the service at {client.base_url} does not say which project this key is in "
                     f"({exc or type(exc).__name__}); reading this key's own journal only")
        else:
            return Scope.of_project(client.base_url, who.project, include_unscoped=include_unscoped,
                                    author=who.member or "")
    return Scope.of(client.base_url, api_key, include_unscoped=include_unscoped)


def open_key_journal(args: argparse.Namespace, client: Client | None):
    """The journal (`open_journal`) as the key's view (`key_scope`): never another project's rows.
    None when there is no journal; without a key, which of its scopes is the key's cannot be told."""
    journal = open_journal(args.data_dir)
    if journal is None:
        return None
    try:
        if client is None:
            raise CommandRefused(NO_API_KEY)
        return journal.scoped(key_scope(client, _api_key(args)))
    except BaseException:
        journal.close()
        raise


def version_labels(journal: Any, task_ids: list[str]) -> dict[str, str | None]:
    """"v2" for each task: its number among its shot's results, as the Review page numbers it
    (dailies.journal.version_numbers). The results are those the journal knows (kept, or last seen
    succeeded and not purged) and the reel's own tasks (it has their videos). None without a journal."""
    if journal is None:
        return dict.fromkeys(task_ids)
    return {tid: None if number is None else f"v{number}"
            for tid, (_, number) in journal.numbered_versions(task_ids).items()}


def version_label(journal: Any, task_id: str) -> str | None:
    """The one task's label (`version_labels`)."""
    return version_labels(journal, [task_id])[task_id]


def status_label(journal: Any, task_id: str) -> str | None:
    """The review status's label ("Approved"), "Pending review" when none was set; None without a journal."""
    if journal is None:
        return None
    from ..journal import STATUS_LABELS
    from ..journal.statuses import PENDING

    change = journal.statuses([task_id]).get(task_id)
    return STATUS_LABELS.get(change.status if change is not None else PENDING)


class Unreadable(Exception):
    """A task its key's journal keeps no copy of and that the service does not give this key (404: another
    project's, or none; or no answer): the reel stops with one line naming it, exit status 1."""


@dataclass
class _Source:
    path: Path
    created_at: float | None
    prompt: str | None


def _say(text: str) -> None:
    sys.stderr.write(text + "\n")
    sys.stderr.flush()


class _Sources:
    """Where each task's video comes from: the key's journal's kept copy, else a download (the client is
    the command's, or made when a download needs one)."""

    def __init__(self, args: argparse.Namespace, journal: Any, folder: Path, client: Client | None = None) -> None:
        self.args, self.journal, self.folder = args, journal, folder
        self._client: Client | None = client

    @property
    def client(self) -> Client:
        if self._client is None:
            self._client = make_client(self.args)
        return self._client

    def close(self) -> None:
        if self._client is not None:
            self._client.close()

    def find(self, index: int, task_id: str) -> _Source:
        record: Any = None
        path: Path | None = None
        created_at: float | None = None
        if self.journal is not None:
            kept = self.journal.kept(task_id).get(VIDEO_NAME)
            if kept is not None:
                if kept.path is not None:
                    path = kept.path
                else:  # in the team's bucket
                    path = self.folder / f"{index:03d}-{task_id}.mp4"
                    path.write_bytes(kept.read_bytes())
                _say(f"{task_id}: the kept copy {kept.location}")
                saved = self.journal.record(task_id)
                created_at = (saved or {}).get("created_at") or kept.kept_at
        if path is None:
            try:
                record = self.client.tasks.get(task_id)
            except NotFoundError as exc:  # not this key's project's (or no such task), and not kept in its scope
                raise Unreadable(f"dailies reel: task {task_id} is not one this key can read, and its journal "
                                 f"keeps no copy of it ({exc})") from None
            except APIError as exc:  # the service refused the key, or gave no answer
                raise Unreadable(f"dailies reel: task {task_id}: this key's journal keeps no copy of it, and the "
                                 f"service could not be asked for it ({exc})") from None
            if record.status != TaskStatus.SUCCEEDED:
                raise SystemExit(f"dailies reel: task {task_id} has no video (status {record.status})")
            url = record.content.video_url if record.content is not None else None
            if not url:
                raise SystemExit(f"dailies reel: task {task_id} has no video URL (expired, and no kept copy)")
            path = self.folder / f"{index:03d}-{task_id}.mp4"
            _say(f"{task_id}: downloading")
            self.client.download(url, path)
            created_at = record.created_at
        return _Source(path, float(created_at) if created_at else None, self._prompt(task_id))

    def _prompt(self, task_id: str) -> str | None:
        if self.journal is not None:
            submission = self.journal.submission(task_id)
            if submission is not None and submission.prompt:
                return submission.prompt
        try:
            return self.client.task_request(task_id).prompt
        except (DailiesError, OSError, ValueError):  # not a Dailies service, or it does not have it
            return None


def _progress(fraction: float) -> None:
    sys.stderr.write(f"\rRendering the reel: {fraction * 100:3.0f}%")
    if fraction >= 1.0:
        sys.stderr.write("\n")
    sys.stderr.flush()


def cmd_reel(args: argparse.Namespace) -> int:
    from ..reel import ReelShot, make_reel, reel_duration, slate_lines

    client = make_client(args) if _api_key(args) else None
    try:
        journal = open_key_journal(args, client)
    except BaseException:
        if client is not None:
            client.close()
        raise
    try:
        with tempfile.TemporaryDirectory(prefix="dailies-reel-") as folder:
            sources = _Sources(args, journal, Path(folder), client)
            try:
                shots = []
                versions = version_labels(journal, args.task)
                for index, task_id in enumerate(args.task):
                    source = sources.find(index, task_id)
                    lines = slate_lines(versions[task_id], status_label(journal, task_id),
                                        source.prompt, source.created_at)
                    shots.append(ReelShot(source.path, short_title(task_id), lines))
            except Unreadable as exc:
                print(exc, file=sys.stderr)
                return 1
            finally:
                sources.close()
            try:
                make_reel(shots, args.output, size=args.size, fps=args.fps, slates=args.slates, burn_in=args.burn_in,
                          slate_seconds=args.slate_seconds, progress=None if args.quiet else _progress)
            except ValueError as exc:
                print(f"dailies reel: {exc}", file=sys.stderr)
                return 1
    finally:
        if journal is not None:
            journal.close()
    if args.json:
        print(json.dumps({"output": str(args.output), "tasks": args.task, "seconds": reel_duration(args.output)}))
    else:
        print(args.output)
    return 0


def _size(text: str) -> tuple[int, int]:
    try:
        return parse_size(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _fps(text: str) -> int:
    value = int(text)
    if not 1 <= value <= 120:
        raise argparse.ArgumentTypeError("fps is a whole number from 1 to 120")
    return value


def register(sub: Any, default_data_dir: Path) -> None:
    reel = sub.add_parser("reel", help="the videos of some tasks, in order, in one MP4 (slates, burn-in)")
    reel.add_argument("--task", action="append", required=True, metavar="ID",
                      help="a task whose video goes in the reel; repeat it, in the reel's order")
    reel.add_argument("-o", "--output", type=Path, required=True, help="the MP4 to write")
    reel.add_argument("--slates", action="store_true", help="a slate before each shot (shot, version, status, "
                                                            "prompt excerpt, date)")
    reel.add_argument("--burn-in", action="store_true", help="the shot's name and the timecode on every picture")
    reel.add_argument("--fps", type=_fps, default=DEFAULT_FPS, help=f"frame rate (default {DEFAULT_FPS})")
    reel.add_argument("--size", type=_size, default=DEFAULT_SIZE, metavar="WxH",
                      help=f"frame size; shots are letterboxed into it (default {DEFAULT_SIZE[0]}x{DEFAULT_SIZE[1]})")
    reel.add_argument("--slate-seconds", type=float, default=SLATE_SECONDS, help=argparse.SUPPRESS)
    reel.add_argument("--data-dir", type=Path, default=default_data_dir,
                      help="where the dashboard's journal is (kept copies, versions, statuses, prompts)")
    reel.add_argument("--quiet", action="store_true", help="no progress on stderr")
    add_connection_args(reel)
    reel.set_defaults(func=cmd_reel)
