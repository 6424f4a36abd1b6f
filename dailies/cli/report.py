"""`dailies report`: the review report of some versions (issue 25) from the dashboard's journal, as
PDF and/or CSV files, without opening the dashboard.

It reads the journal as `dailies dashboard` keeps it (SQLite in --data-dir/dashboard, or
--database-url and --storage for a team's) across every scope: an operator's command, like
`dailies spend`. Thumbnails come from kept copies readable here.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from .tasks import check_output_file

REPORT_ABOUT = ("Per version: a thumbnail (from a kept copy), the prompt, the review status with who set it and "
                "when, each person's stars and the average, and every comment with its timecode (and the frame "
                "with its drawing, from a kept copy). The CSV has a row per comment.")


def cmd_report(args: argparse.Namespace) -> int:
    from pydantic import ValidationError

    from ..journal import Journal
    from ..review_report import entries_from_journal, thumbnail_from_kept, to_csv, to_pdf, video_from_kept
    from ..spec.models import TaskRecord

    if args.csv is None and args.pdf is None:
        raise SystemExit("dailies report: give --pdf FILE and/or --csv FILE")
    for path, option in ((args.pdf, "--pdf"), (args.csv, "--csv")):
        if path is not None:
            check_output_file(path, option)
    journal = Journal(args.data_dir / "dashboard" / "journal.sqlite3", database_url=args.database_url or "",
                      storage=args.storage or "")
    try:
        ids = list(dict.fromkeys(args.task))
        records = {}
        for tid in ids:
            saved = journal.record(tid)
            try:
                records[tid] = TaskRecord.model_validate(saved) if saved else None
            except ValidationError:
                records[tid] = None
        thumbnails = {tid: thumbnail_from_kept(journal.kept(tid)) for tid in ids} if not args.no_thumbnails else {}
        # Only the copies of versions with a drawing on a frame are read (a bucket's is downloaded).
        drawn = [tid for tid, said in journal.comments(ids).items()
                 if any(c.drawing and c.frame is not None for c in said)]
        entries = entries_from_journal(journal, ids, records, thumbnails,
                                       videos={tid: video_from_kept(journal.kept(tid)) for tid in drawn})
        unknown = [e.task_id for e in entries if not e.prompt and not e.comments and not e.ratings
                   and e.status_by == "" and records.get(e.task_id) is None]
        for tid in unknown:
            print(f"dailies report: the journal knows nothing of {tid} (listed as pending, no prompt)", file=sys.stderr)
        if args.pdf is not None:
            args.pdf.write_bytes(to_pdf(entries, args.title))
            print(f"Wrote {args.pdf} ({len(entries)} versions)")
        if args.csv is not None:
            args.csv.write_bytes(to_csv(entries).encode("utf-8-sig"))
            print(f"Wrote {args.csv}")
    finally:
        journal.close()
    return 0


def register(sub, default_data_dir: Path) -> None:
    report = sub.add_parser("report", help="a review report of some versions as PDF and/or CSV",
                            description=REPORT_ABOUT)
    report.add_argument("--task", action="append", required=True, metavar="ID",
                        help="a task id (a version); repeat for more, in the order wanted")
    report.add_argument("--pdf", type=Path, metavar="FILE", help="write the PDF here")
    report.add_argument("--csv", type=Path, metavar="FILE", help="write the CSV here (UTF-8 with a byte order mark)")
    report.add_argument("--title", default="Review report")
    report.add_argument("--no-thumbnails", action="store_true", help="leave thumbnails out (faster)")
    report.add_argument("--data-dir", type=Path, default=default_data_dir,
                        help="the dashboard's data directory (its journal is in DIR/dashboard)")
    report.add_argument("--database-url", default=os.environ.get("DAILIES_DATABASE_URL") or None,
                        help="the team journal's PostgreSQL URL (DAILIES_DATABASE_URL); default: SQLite in --data-dir")
    report.add_argument("--storage", default=os.environ.get("DAILIES_STORAGE") or None,
                        help="the team's s3://bucket/prefix, for thumbnails of kept copies there (DAILIES_STORAGE)")
    report.set_defaults(func=cmd_report)
