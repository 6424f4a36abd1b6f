"""`dailies export --task ID [--task ID ...] -o cut.otio`: the approved versions of a selection (or of a
reel: its tasks, in its order) handed to the editor as an OpenTimelineIO timeline, a CMX 3600 EDL or
FCPXML (dailies.edit_handoff), each shot its kept copy, the review's comments as markers.

The journal is read as the key's, as `dailies reel` reads it (never another project's rows); the
format follows the file's ending unless --format says.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
from dataclasses import replace
from pathlib import Path
from typing import Any

from ..handoff_formats import FORMATS
from ..spec.results import VIDEO_NAME
from .reel import _api_key, open_key_journal, short_title, version_labels
from .tasks import CommandRefused, add_connection_args, check_output_file, make_client

EXPORT_ABOUT = ("Each approved version (all of them with --any-status) whose video is kept becomes a clip, in the "
                "order given; its comments pinned to a frame or a time become markers (author, text, frame range; "
                "red where something was drawn). Formats: .otio (OpenTimelineIO JSON), .edl (CMX 3600), .fcpxml.")


def _format_of(args: argparse.Namespace) -> str:
    if args.format:
        return args.format
    for name, (_, ending, _) in FORMATS.items():
        if args.output.suffix.lower() == ending:
            return name
    raise CommandRefused(f"-o {args.output}: end it in .otio, .edl or .fcpxml, or give --format")


def _copy_media(shots: list, kept: dict, media_dir: Path, output: Path, fmt: str) -> list:
    """Each shot's kept copy written into `media_dir` (from this disk or the team's bucket), the shots
    pointing at those files: by a path relative to the timeline's folder where the format allows (so
    the folder travels with the timeline), by file:// URL for FCPXML (which takes URLs only)."""
    from ..edit_handoff import clip_file_name

    try:
        media_dir.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise CommandRefused(f"--media-dir {media_dir}: {exc.strerror or exc}") from exc
    moved = []
    for position, shot in enumerate(shots, 1):
        target = media_dir / clip_file_name(position, shot)
        copy = kept[shot.task_id]
        try:
            if copy.path is not None:
                shutil.copyfile(copy.path, target)
            else:
                target.write_bytes(copy.read_bytes())
        except Exception as exc:  # a file gone or a bucket that does not answer: say which shot
            raise CommandRefused(f"{shot.task_id}: its kept copy could not be copied to {target}: {exc}") from exc
        print(f"dailies export: copied {shot.task_id} to {target}", file=sys.stderr)
        media = str(target.resolve())
        if fmt != "fcpxml":
            try:
                media = Path(os.path.relpath(target.resolve(), output.resolve().parent)).as_posix()
            except ValueError:  # another drive (Windows): no relative path, the copy's own
                pass
        moved.append(replace(shot, media=media))
    return moved


def cmd_export(args: argparse.Namespace) -> int:
    from ..edit_handoff import shots_from_journal, timeline, write

    fmt = _format_of(args)
    check_output_file(args.output, "-o")
    client = make_client(args) if _api_key(args) else None
    try:
        journal = open_key_journal(args, client)
    finally:
        if client is not None:
            client.close()
    if journal is None:
        raise CommandRefused(f"no journal in {args.data_dir / 'dashboard'} (nor DAILIES_DATABASE_URL): nothing "
                             "has been reviewed here")
    try:
        ids = list(dict.fromkeys(args.task))
        versions = version_labels(journal, ids)

        kept = {task_id: journal.kept(task_id).get(VIDEO_NAME) for task_id in ids}

        def media_of(task_id: str) -> str | None:
            return None if kept[task_id] is None else str(kept[task_id].media())

        def name_of(task_id: str) -> str:
            return " ".join(part for part in (short_title(task_id), versions.get(task_id)) if part)

        shots, left = shots_from_journal(journal, ids, media_of=media_of, name_of=name_of,
                                         approved_only=not args.any_status)
        if shots and args.media_dir is not None:
            shots = _copy_media(shots, kept, args.media_dir, args.output, fmt)
    finally:
        journal.close()
    for reason in left:
        print(f"dailies export: left out {reason}", file=sys.stderr)
    if not shots:
        print("dailies export: no shot to hand off; nothing written", file=sys.stderr)
        return 1
    beside = args.media_dir is not None and fmt != "fcpxml"
    args.output.write_text(write(timeline(shots, args.title, media_beside=beside), fmt), encoding="utf-8")
    notes = sum(len(s.notes) for s in shots)
    if args.json:
        print(json.dumps({"output": str(args.output), "format": fmt, "clips": [s.task_id for s in shots],
                          "markers": notes, "left_out": left}))
    else:
        print(f"Wrote {args.output} ({fmt}: {len(shots)} clips, {notes} markers)")
    return 0


def register(sub: Any, default_data_dir: Path) -> None:
    export = sub.add_parser("export", help="hand the approved cut to the editor: OTIO, EDL or FCPXML",
                            description=EXPORT_ABOUT)
    export.add_argument("--task", action="append", required=True, metavar="ID",
                        help="a task id (a version); repeat for more, in the cut's order (a reel's tasks, say)")
    export.add_argument("-o", "--output", type=Path, required=True, help="the file to write (.otio, .edl, .fcpxml)")
    export.add_argument("--format", choices=sorted(FORMATS), help="the format (default: from the file's ending)")
    export.add_argument("--title", default="Dailies approved", help="the timeline's name")
    export.add_argument("--any-status", action="store_true", help="every version given, approved or not")
    export.add_argument("--media-dir", type=Path, metavar="DIR",
                        help="copy each clip here and point the timeline at the copies (relative to the "
                             "timeline's folder): a package for an editor off the team's network or bucket")
    export.add_argument("--data-dir", type=Path, default=default_data_dir,
                        help="where the dashboard's journal is (kept copies, statuses, comments)")
    add_connection_args(export)
    export.set_defaults(func=cmd_export)
