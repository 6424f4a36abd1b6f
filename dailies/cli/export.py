"""`dailies export --task ID [--task ID ...] -o cut.otio`: the approved versions of a selection (or of a
reel: its tasks, in its order) handed to the editor as an OpenTimelineIO timeline, a CMX 3600 EDL or
FCPXML (dailies.edit_handoff), each shot its kept copy, the review's comments as markers.

The journal is read as the key's, as `dailies reel` reads it (never another project's rows); the
format follows the file's ending unless --format says.
"""

from __future__ import annotations

import argparse
import json
import sys
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

        def media_of(task_id: str) -> str | None:
            kept = journal.kept(task_id).get(VIDEO_NAME)
            return None if kept is None else str(kept.media())

        def name_of(task_id: str) -> str:
            return " ".join(part for part in (short_title(task_id), versions.get(task_id)) if part)

        shots, left = shots_from_journal(journal, ids, media_of=media_of, name_of=name_of,
                                         approved_only=not args.any_status)
    finally:
        journal.close()
    for reason in left:
        print(f"dailies export: left out {reason}", file=sys.stderr)
    if not shots:
        print("dailies export: no shot to hand off; nothing written", file=sys.stderr)
        return 1
    args.output.write_text(write(timeline(shots, args.title), fmt), encoding="utf-8")
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
    export.add_argument("--data-dir", type=Path, default=default_data_dir,
                        help="where the dashboard's journal is (kept copies, statuses, comments)")
    add_connection_args(export)
    export.set_defaults(func=cmd_export)
