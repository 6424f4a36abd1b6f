"""The client half of the CLI: create, list, get, cancel, wait and download against any service
(ours or the real one), and `request` (a task's prompt and inputs) against a Dailies service, with
progress on stderr and `--json` for scripts."""

from __future__ import annotations

import argparse
import json
import math
import mimetypes
import os
import sys
import time
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, get_args

from ..client import (
    API_KEY_ENV,
    BASE_URL_ENV,
    Client,
    ConflictError,
    DailiesError,
    RequestRuleError,
    RequestValidationError,
    UnsupportedEndpointError,
    WaitTimeout,
    environment_defaults,
    normalize_base_url,
)
from ..client._base import poll_failed_for_now
from ..spec.media import encode_data_url, image_mime
from ..spec.models import ServiceTier, StoredMediaUrl, TaskRecord, TaskRequest
from ..spec.statuses import DELETABLE, LISTABLE_FILTERS, TaskStatus
from ..spec.validation import check_create_body


class CommandRefused(Exception):
    """Bad input, or a local check, refused the command before anything was sent or written (exit 2)."""


EXIT_REFUSED = 2


def add_connection_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--base-url", help="service base URL ending in /api/v3 (default: $ARK_BASE_URL, "
                                           "else the local service)")
    parser.add_argument("--api-key", help="API key (default: $ARK_API_KEY)")
    parser.add_argument("--json", action="store_true", help="print JSON instead of text")


def checked_base_url(args: argparse.Namespace) -> str:
    """The base URL of --base-url, else ARK_BASE_URL, else the local service's; one the client
    refuses (not http(s), a query) is bad input, named as the user gave it."""
    url = args.base_url if args.base_url is not None else environment_defaults(os.environ)[0]
    try:
        return normalize_base_url(url)
    except ValueError as exc:
        raise CommandRefused(f"{'--base-url' if args.base_url is not None else BASE_URL_ENV}: {exc}") from None


NO_API_KEY = (f"no API key: give --api-key KEY or set {API_KEY_ENV}; the local service's keys are shown by "
              "`dailies keys --show` (with the --data-dir it runs with)")


def make_client(args: argparse.Namespace, **options: Any) -> Client:
    """The client of the connection options (every command that talks to a service makes it here);
    without a key it says what a CLI user does about it, not what the client's caller does."""
    api_key = args.api_key if args.api_key is not None else environment_defaults(os.environ)[1]
    base_url = checked_base_url(args)
    if not api_key:
        api_key = _key_of_running_up(base_url)
    if not api_key:
        raise CommandRefused(NO_API_KEY)
    return Client(base_url=base_url, api_key=api_key, **options)


def _key_of_running_up(base_url: str) -> str:
    """The key a `dailies up` running on the data directory (DAILIES_DATA_DIR, else ./.dailies) gives its
    own dashboard, when `base_url` is that `up`'s service: beside one person's `make up` the CLI needs
    no key typed, and the key goes to no other address."""
    from dailies.launcher import running_dashboard
    from dailies.service.access.keys import load_keys

    data_dir = Path(os.environ.get("DAILIES_DATA_DIR") or ".dailies")
    running = running_dashboard(data_dir)
    if running is None or running.api_url != base_url:
        return ""
    try:
        return next(iter(load_keys(data_dir)), "")
    except (OSError, ValueError, KeyError, TypeError):
        return ""  # no readable keys file: the message says how to give a key


def _base_url_hint(args: argparse.Namespace, exc: DailiesError) -> str:
    """A 404 from a base URL without the version prefix is that prefix missing, not a missing task."""
    if getattr(exc, "status_code", None) != 404 or not hasattr(args, "base_url"):
        return ""
    url = checked_base_url(args)
    return "" if url.endswith("/api/v3") else f" (is the base URL {url} right? it ends in /api/v3 as a rule)"


def check_output_file(path: Path, option: str) -> None:
    """Refuse, before the work is done (a whole download, a report), a file that cannot be written there."""
    if path.is_dir():
        raise CommandRefused(f"{option} {path} is a folder; give a file name (in it, if you like)")
    if not path.parent.is_dir():
        raise CommandRefused(f"{option} {path}: there is no folder {path.parent}")


def _media_url(value: str, kind: str) -> str:
    """A local file becomes a Base64 data URL; URLs and asset ids pass through. An image's type is read
    from its bytes (a PNG saved without an extension was sent as application/octet-stream and refused
    in words about a type the user never gave); a video's or audio's from its name."""
    if value.startswith(("http://", "https://", "asset://", "data:")):
        return value
    path = Path(value)
    if not path.is_file():
        raise SystemExit(f"dailies: {value} is neither a URL, an asset:// id nor a file")
    data = path.read_bytes()
    named = mimetypes.guess_type(path.name)[0]
    mime = image_mime(data, named) if kind == "image_url" else named or "application/octet-stream"
    return encode_data_url(data, mime)


DEFAULT_MODEL = "doubao-seedance-2-0-260128"
# Each media option: its content item's type and role.
_MEDIA_FLAGS = (("first_frame", "image_url", "first_frame"), ("last_frame", "image_url", "last_frame"),
                ("ref_image", "image_url", "reference_image"), ("ref_video", "video_url", "reference_video"),
                ("ref_audio", "audio_url", "reference_audio"))
_PARAMETER_FLAGS = ("resolution", "ratio", "duration", "frames", "seed", "priority", "service_tier", "callback_url",
                    "execution_expires_after", "safety_identifier", "camera_fixed", "watermark", "generate_audio",
                    "draft", "return_last_frame")


def _flags_beside_body(args: argparse.Namespace) -> list[str]:
    """The options of the request's content given with --body (None when left out; --web-search False)."""
    names = ("model", "prompt", *(flag for flag, _, _ in _MEDIA_FLAGS), "draft_task", *_PARAMETER_FLAGS)
    given = [name for name in names if getattr(args, name) is not None] + (["web_search"] if args.web_search else [])
    return ["--" + name.replace("_", "-") for name in given]


def build_body(args: argparse.Namespace) -> dict[str, Any]:
    if args.body:
        # The file is sent as it is: a flag beside it would be dropped without a word.
        if given := _flags_beside_body(args):
            raise CommandRefused(f"--body sends {args.body} as it is, so {', '.join(given)} would be ignored: "
                                 "put them in the file, or leave out --body")
        try:
            raw = Path(args.body).read_bytes() if args.body != "-" else sys.stdin.buffer.read()
        except OSError as exc:
            raise CommandRefused(f"--body {args.body}: {exc.strerror}") from None
        # The service's own strict parse, not json.loads: the body is re-serialised on the way, and
        # json.loads would quietly keep the last of a key given twice (a body the service refuses,
        # sent and billed as another) or take NaN. Refused here in the service's words, naming the
        # field, --no-local-check or not.
        from ..spec.strict_json import JsonRefused, parse_strict_json

        try:
            parsed = parse_strict_json(raw)
        except JsonRefused as exc:
            raise CommandRefused(f"--body {args.body}: {exc.message}") from None
        if not isinstance(parsed, dict):
            # The client takes only an object (anything else was its TypeError, a traceback): said in
            # the words the service answers the same file with.
            raise CommandRefused(f"--body {args.body}: {check_create_body(parsed).problems[0].message}")
        return parsed
    content: list[dict[str, Any]] = []
    if args.prompt:
        content.append({"type": "text", "text": args.prompt})
    for flag, kind, role in _MEDIA_FLAGS:
        for value in getattr(args, flag) or []:
            content.append({"type": kind, kind: {"url": _media_url(value, kind)}, "role": role})
    if args.draft_task:
        content.append({"type": "draft_task", "draft_task": {"id": args.draft_task}})
    body: dict[str, Any] = {"model": args.model or DEFAULT_MODEL, "content": content}
    for name in _PARAMETER_FLAGS:
        value = getattr(args, name)
        if value is not None:
            body[name] = value
    if args.web_search:
        body["tools"] = [{"type": "web_search"}]
    return body


def _print(args: argparse.Namespace, data: Any, text: str) -> None:
    print(json.dumps(data, indent=2, ensure_ascii=False) if args.json else text)


def _summary(task: TaskRecord) -> str:
    parts = [task.id, task.status, task.model or "-"]
    if task.resolution:
        parts.append(f"{task.resolution} {task.ratio or ''}".strip())
    if task.duration is not None:
        parts.append(f"{task.duration}s")
    if task.frames is not None:
        parts.append(f"{task.frames} frames")
    if task.usage and task.usage.completion_tokens is not None:
        parts.append(f"{task.usage.completion_tokens:,} tokens")
    if task.error:
        parts.append(f"error {task.error.code}: {task.error.message}")
    return "  ".join(parts)


def _progress_waiter(quiet: bool) -> Callable[[TaskRecord], None]:
    started = time.monotonic()
    last: dict[str, str | None] = {"status": None}

    def on_update(task: TaskRecord) -> None:
        if quiet:
            return
        elapsed = time.monotonic() - started
        end = "\n" if task.status != last["status"] and last["status"] is not None else ""
        sys.stderr.write(f"{end}\r{task.id}: {task.status} ({elapsed:.0f} s)")
        sys.stderr.flush()
        last["status"] = task.status

    return on_update


# What each exit status means, for `dailies --help`, `create --help` and `wait --help` (README's list too).
EXIT_STATUSES = """\
exit statuses:
  0    done (create --wait, wait: the task succeeded)
  1    the task failed, expired or was cancelled (create --wait, wait); or the service refused the
       request or could not be reached (the message says which: "[403 ...]" is the service's answer);
       or the command could not be done (no such budget or share, a file that could not be written);
       also some older checks of options (a missing --amount, --project or --name; a --first-frame
       file that does not exist)
  2    refused before anything was sent or written: bad options or input, a request the catalog's
       rules refuse, a missing API key or service database, a finished task to cancel without --delete
  3    create --wait, wait: the --timeout came before the task's end (the task goes on)
  4    create --wait, wait: the service did not answer until the --timeout (the task goes on)
  130  interrupted (Ctrl-C)
  141  the output was closed early (`dailies list | head`)
"""

# Exit statuses of a wait that did not see the task end: the task may still be running (not a failure
# of the task, which is 1). 130: stopped with Ctrl-C, as a shell reports SIGINT.
EXIT_WAIT_TIMEOUT = 3
EXIT_UNREACHABLE = 4
EXIT_INTERRUPTED = 130


def _wait_and_print(args: argparse.Namespace, client: Client, task_id: str) -> int:
    """Follow the task on stderr until it finishes, print it, and exit 0 only if it succeeded. A
    wait that ends before the task does (its timeout, the service out of reach for longer, Ctrl-C)
    says the task id and how to follow it again."""
    def stopped(why: str, status: int) -> int:
        print(f"\ndailies: {why}; task {task_id} goes on: `dailies wait {task_id}` follows it again",
              file=sys.stderr)
        return status

    try:
        task = client.wait(task_id, timeout=args.timeout, poll_interval=args.poll,
                           on_update=_progress_waiter(args.json))
    except KeyboardInterrupt:
        return stopped("stopped waiting", EXIT_INTERRUPTED)
    except WaitTimeout as exc:
        return stopped(str(exc), EXIT_WAIT_TIMEOUT)
    except DailiesError as exc:
        if not poll_failed_for_now(exc):
            raise
        return stopped(f"the service did not answer until the wait's end ({exc})", EXIT_UNREACHABLE)
    if not args.json:
        sys.stderr.write("\n")
    _print(args, task.model_dump(exclude_none=True), _summary(task))
    return 0 if task.status == TaskStatus.SUCCEEDED else 1


def cmd_create(args: argparse.Namespace) -> int:
    body = build_body(args)
    with make_client(args) as client:
        # The client applies the catalog's rules when it knows the model id (endpoint ids and
        # unknown ids go to the service as they are) and refuses locally, before sending (run():
        # RequestValidationError, exit 2).
        created = client.tasks.create(body, check_rules=not args.no_local_check)
        if not args.wait:
            _print(args, created.model_dump(exclude_none=True), created.id)
            return 0
        return _wait_and_print(args, client, created.id)


def cmd_list(args: argparse.Namespace) -> int:
    with make_client(args) as client:
        page = client.tasks.list(page_num=args.page, page_size=args.page_size, status=args.status,
                                 task_ids=args.task_id, model=args.model, service_tier=args.service_tier)
    text = "\n".join(_summary(t) for t in page.items) + f"\n{len(page.items)} of {page.total} task(s)"
    _print(args, page.model_dump(exclude_none=True), text.strip())
    return 0


def cmd_get(args: argparse.Namespace) -> int:
    with make_client(args) as client:
        task = client.tasks.get(args.task_id)
    text = _summary(task)
    if task.content and task.content.video_url:
        text += f"\nvideo: {task.content.video_url}"
    if task.content and task.content.last_frame_url:
        text += f"\nlast frame: {task.content.last_frame_url}"
    _print(args, task.model_dump(exclude_none=True), text)
    return 0


def cmd_request(args: argparse.Namespace) -> int:
    with make_client(args) as client:
        try:
            stored = client.task_request(args.task_id)
        except UnsupportedEndpointError:
            print(f"dailies: {client.base_url} does not say what a task was asked for (an endpoint of a "
                  "Dailies service, /dailies/v1/tasks/ID/request; the real Ark has none)", file=sys.stderr)
            return 1
    _print(args, stored.model_dump(exclude_none=True), _request_text(stored))
    return 0


_REQUEST_HEAD = {"id", "model", "created_by", "created_at", "prompt", "content", "draft_task_id"}


def _request_text(stored: TaskRequest) -> str:
    created = datetime.fromtimestamp(stored.created_at, UTC).strftime("%Y-%m-%d %H:%M:%S UTC")
    lines = [f"{stored.id}  {stored.model}  created {created}" + (f" by {stored.created_by}" if stored.created_by
                                                                      else "")]
    if stored.draft_task_id:
        lines.append(f"final of draft {stored.draft_task_id} (its inputs)")
    lines.append(f"prompt: {stored.prompt}" if stored.prompt is not None else "prompt: (none)")
    for index, item in enumerate(stored.content):
        if item.type == "text":
            continue
        role = f" {item.role}" if item.role else ""
        media = item.image_url or item.video_url or item.audio_url
        what = _medium_text(media) if media is not None else (item.draft_task.id if item.draft_task else "")
        lines.append(f"content[{index}] {item.type}{role}: {what}")
    parameters = {k: v for k, v in stored.model_dump(exclude_none=True).items() if k not in _REQUEST_HEAD}
    if parameters:
        lines.append("parameters: " + "  ".join(f"{k}={json.dumps(v) if not isinstance(v, str) else v}"
                                                for k, v in parameters.items()))
    return "\n".join(lines)


def _medium_text(media: StoredMediaUrl) -> str:
    inline = media.inline
    if inline is None:
        return media.url or "-"
    parts = [f"inline {inline.media_type or 'data'}"]
    if inline.width and inline.height:
        parts.append(f"{inline.width}x{inline.height}")
    if inline.bytes is not None:
        parts.append(f"{inline.bytes / 1e6:.1f} MB" if inline.bytes >= 100_000 else f"{inline.bytes / 1e3:.1f} KB")
    return ", ".join(parts) + (" (a thumbnail in --json)" if media.url else "")


def cmd_cancel(args: argparse.Namespace) -> int:
    """The spec's one DELETE cancels a queued task but deletes a finished one for good (its record and
    result files): the task's status is read first, so a finished task is deleted only with --delete,
    and the output says which of the two was done. Without --delete, a Dailies service is asked to
    cancel only (`tasks.cancel_only`), so a task that ends between the read and the cancel is not
    deleted; elsewhere (the real Ark) that moment remains, and DELETE is all there is."""
    with make_client(args) as client:
        status = client.tasks.get(args.task_id).status
        finished = status in DELETABLE
        if finished and not args.delete:
            raise _finished_refusal(args.task_id, status)
        if finished:
            client.tasks.delete(args.task_id)
        else:
            try:
                client.tasks.cancel_only(args.task_id)
            except UnsupportedEndpointError:
                client.tasks.delete(args.task_id)
            except ConflictError as exc:
                if exc.code != TASK_FINISHED:
                    raise
                raise _finished_refusal(args.task_id, client.tasks.get(args.task_id).status) from None
    action = "deleted" if finished else "cancelled"
    text = (f"{args.task_id}: deleted, its record and result files removed (it was {status})" if finished
            else f"{args.task_id}: cancelled (it was {status})")
    _print(args, {"id": args.task_id, "action": action, "previous_status": status, "deleted_or_cancelled": True},
           text)
    return 0


TASK_FINISHED = "InvalidAction.TaskFinished"  # the service's answer to a cancel of a finished task


def _finished_refusal(task_id: str, status: str) -> CommandRefused:
    return CommandRefused(f"task {task_id} is {status}: there is nothing to cancel, and deleting it removes its "
                          f"record and result files for good; `dailies cancel --delete {task_id}` does that")


def cmd_wait(args: argparse.Namespace) -> int:
    with make_client(args) as client:
        return _wait_and_print(args, client, args.task_id)


def cmd_download(args: argparse.Namespace) -> int:
    with make_client(args) as client:
        task = client.tasks.get(args.task_id)
        if task.status != TaskStatus.SUCCEEDED or not task.content or not task.content.video_url:
            print(f"dailies: {args.task_id} is {task.status}; there is nothing to download", file=sys.stderr)
            return 1
        url = task.content.last_frame_url if args.last_frame else task.content.video_url
        if url is None:
            print("dailies: the task was not created with return_last_frame", file=sys.stderr)
            return 1
        out = Path(args.output or f"{args.task_id}{'.png' if args.last_frame else '.mp4'}")
        check_output_file(out, "--output")

        def progress(done: int, total: int | None) -> None:
            if args.json:
                return
            shown = f"{done / total:6.1%}" if total else f"{done / 1e6:.1f} MB"
            sys.stderr.write(f"\rdownloading {out.name}: {shown}")
            sys.stderr.flush()

        client.download(url, out, progress=progress)
    if not args.json:
        sys.stderr.write("\n")
    _print(args, {"id": args.task_id, "path": str(out), "bytes": out.stat().st_size}, str(out))
    return 0


def _seconds(minimum: float, inclusive: bool):
    """An argparse type for a number of seconds, checked when the arguments are read: `create --wait`
    would otherwise create the task, then fail in the wait without printing its id."""
    def parse(text: str) -> float:
        try:
            value = float(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"not a number of seconds: {text!r}") from None
        if not math.isfinite(value) or value < minimum or (value == minimum and not inclusive):
            raise argparse.ArgumentTypeError(f"must be {'at least' if inclusive else 'more than'} {minimum:g} "
                                             f"(seconds), got {text}")
        return value

    return parse


def add_wait_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--timeout", type=_seconds(0, inclusive=True), default=900,
                        help="seconds to wait for the task to finish (default 900)")
    parser.add_argument("--poll", type=_seconds(0, inclusive=False), default=2.0,
                        help="seconds between two looks at the task (default 2)")


def _task_id(text: str) -> str:
    """An argparse type for a task id: an empty one (`dailies get "$ID"` with ID unset) is bad input,
    refused as the arguments are read; the client would raise a ValueError (a traceback) on it."""
    if not text:
        raise argparse.ArgumentTypeError("is empty (`dailies list` shows the task ids)")
    return text


def _bool(text: str) -> bool:
    lowered = text.lower()
    if lowered in ("true", "yes", "1", "on"):
        return True
    if lowered in ("false", "no", "0", "off"):
        return False
    raise argparse.ArgumentTypeError("expected true or false")


def register(sub) -> None:
    create = sub.add_parser("create", help="create a task (local files become data URLs)", epilog=EXIT_STATUSES,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    add_connection_args(create)
    create.add_argument("--model", help=f"model or endpoint id (default {DEFAULT_MODEL})")
    create.add_argument("--prompt", "-p")
    create.add_argument("--first-frame", action="append", metavar="FILE|URL")
    create.add_argument("--last-frame", action="append", metavar="FILE|URL")
    create.add_argument("--ref-image", action="append", metavar="FILE|URL")
    create.add_argument("--ref-video", action="append", metavar="URL")
    create.add_argument("--ref-audio", action="append", metavar="URL")
    create.add_argument("--draft-task", metavar="TASK_ID", help="make the final video of this draft")
    create.add_argument("--body", metavar="FILE", help="send this JSON body as it is ('-' for stdin); it takes "
                                                        "none of the options of the content or its parameters")
    for name in ("resolution", "ratio", "service-tier", "callback-url", "safety-identifier"):
        create.add_argument(f"--{name}")
    for name in ("duration", "frames", "seed", "priority", "execution-expires-after"):
        create.add_argument(f"--{name}", type=int)
    for name in ("camera-fixed", "watermark", "generate-audio", "draft", "return-last-frame"):
        create.add_argument(f"--{name}", type=_bool, metavar="true|false")
    create.add_argument("--web-search", action="store_true", help="enable the web_search tool (2.0)")
    create.add_argument("--no-local-check", action="store_true",
                        help="send without applying the catalog's rules locally (for a service that has "
                             "moved ahead of this catalog); the service still checks")
    create.add_argument("--wait", action="store_true", help="wait for the task to finish")
    add_wait_arguments(create)
    create.set_defaults(func=cmd_create)

    listing = sub.add_parser("list", help="list tasks of the last 7 days")
    add_connection_args(listing)
    listing.add_argument("--status", choices=[str(s) for s in LISTABLE_FILTERS])
    listing.add_argument("--task-id", action="append")
    listing.add_argument("--model", help="endpoint or model id the tasks were created with")
    listing.add_argument("--service-tier", choices=get_args(ServiceTier), default="default")
    listing.add_argument("--page", type=int, default=1)
    listing.add_argument("--page-size", type=int, default=20)
    listing.set_defaults(func=cmd_list)

    for name, func, text in (("get", cmd_get, "show one task"),
                             ("request", cmd_request, "show what a task was asked for: prompt, inputs, "
                                                      "parameters (a Dailies service)"),
                             ("cancel", cmd_cancel, "cancel a queued task, or with --delete delete a finished "
                                                    "one (its record and result files, for good)")):
        p = sub.add_parser(name, help=text)
        add_connection_args(p)
        p.add_argument("task_id", type=_task_id)
        p.set_defaults(func=func)
        if name == "cancel":
            p.add_argument("--delete", action="store_true",
                           help="delete the task if it has finished (succeeded, failed, expired); without it "
                                "cancel refuses a finished task")

    wait = sub.add_parser("wait", help="wait until a task finishes", epilog=EXIT_STATUSES,
                          formatter_class=argparse.RawDescriptionHelpFormatter)
    add_connection_args(wait)
    wait.add_argument("task_id", type=_task_id)
    add_wait_arguments(wait)
    wait.set_defaults(func=cmd_wait)

    download = sub.add_parser("download", help="download a task's video (or last frame)")
    add_connection_args(download)
    download.add_argument("task_id", type=_task_id)
    download.add_argument("--output", "-o")
    download.add_argument("--last-frame", action="store_true")
    download.set_defaults(func=cmd_download)


def run(args: argparse.Namespace) -> int:
    try:
        return args.func(args)
    except CommandRefused as exc:
        print(f"dailies: {exc}", file=sys.stderr)
        return EXIT_REFUSED
    except KeyboardInterrupt:
        # Ctrl-C in any command: a line, not a traceback (`wait` says more: the task it was following).
        hint = "; the task may have been created: `dailies list` shows it" if args.command == "create" else ""
        print(f"\ndailies: interrupted{hint}", file=sys.stderr)
        return EXIT_INTERRUPTED
    except RequestValidationError as exc:
        # The client refused the request before sending it (a create body, a list query's page):
        # bad input, exit 2 whichever command it was, not the 1 of a service that refused or was
        # out of reach. A catalog rule's refusal has a line per problem.
        for line in exc.problems if isinstance(exc, RequestRuleError) else [exc]:
            print(f"dailies: {line}", file=sys.stderr)
        return EXIT_REFUSED
    except DailiesError as exc:
        print(f"dailies: {exc}{_base_url_hint(args, exc)}", file=sys.stderr)
        return 1
    except BrokenPipeError:
        # `dailies list | head` closed our stdout: stop quietly, as Unix tools do. Python would
        # otherwise print a traceback, then another when it flushes stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141  # 128 + SIGPIPE, what a shell reports for a tool killed by the pipe
    except OSError as exc:  # a file that could not be read or written after all (permissions, a full disk)
        where = f"{exc.filename}: " if exc.filename else ""
        print(f"dailies: {where}{exc.strerror or exc}", file=sys.stderr)
        return 1
