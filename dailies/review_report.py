"""A review report of a selection of versions, as CSV and PDF (issue 25).

Per version: a thumbnail, the prompt, the review status with who set it and when, each person's
stars and the average, and every comment with its timecode (replies under the comment they answer).

Pure functions: `entries_from_journal` gathers `ReportEntry`s from the dashboard's journal,
`to_csv` / `from_csv` and `to_pdf` write them, `thumbnail_of` / `thumbnail_from_kept` make a small
JPEG of a kept result. Nothing here imports the dashboard (dailies must not depend on components).

The PDF is written with fpdf2 in a Unicode TrueType font (DejaVu Sans where installed, the same
candidates the preview renderer uses, dailies.generator.typography), with a CJK font as fallback for
Chinese, Japanese and Korean prompts when one is installed (Noto Sans CJK, WenQuanYi, Droid). Without
any TrueType font it falls back to Helvetica, replacing what Latin-1 cannot show with "?". A character
neither font has (CJK without a CJK font, an emoji in any case) is shown as MISSING, with a note at the
end (the CSV always has every character).
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Callable, Collection, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .journal import STATUS_LABELS, average, thread
from .journal.statuses import PENDING
from .timecodes import format_timecode, is_timecode

if TYPE_CHECKING:
    from .journal import Journal, KeptFile
    from .spec.models import TaskRecord

CSV_COLUMNS = ("task_id", "version", "model", "created_at", "prompt", "status", "status_by", "status_at",
               "average_stars", "stars", "comment_author", "comment_at", "timecode", "comment", "resolved",
               "reply_to")
# Columns this module writes from numbers and dates (never text anyone typed, never starting with a
# sign: timecodes and stars are not negative): written as they are, so a spreadsheet reads numbers.
NUMBER_COLUMNS = frozenset({"created_at", "status_at", "average_stars", "comment_at", "timecode", "reply_to"})
# A spreadsheet (Excel, LibreOffice, Sheets) opening the CSV evaluates a cell that starts with = + - @, a
# tab or a carriage return as a formula: a guest's comment or name could be a =HYPERLINK that sends
# other cells away, or DDE on older Excel. Such a text cell is written after a single quote, which makes
# it text there; so is one that already starts with quotes before such a character, so that
# `from_csv`, dropping one quote where this rule put it, gives back exactly what was written.
_FORMULA_START = re.compile(r"'*[=+\-@\t\r]")
THUMBNAIL_WIDTH_PX = 320
MISSING = "\u25a1"  # a character the PDF's fonts cannot show (no CJK font installed)
MISSING_NOTE = (f"Characters shown as {MISSING} need a font this machine lacks (for Chinese, Japanese and Korean: "
                "install Noto Sans CJK, e.g. the fonts-noto-cjk package); the CSV has every character.")


@dataclass(frozen=True)
class ReportComment:
    author: str
    created_at: float
    timecode: float | None  # seconds into the video
    body: str
    resolved: bool = False
    depth: int = 0  # 0 for a comment, 1 for a reply to it, ...
    reply_to: int | None = None  # the 1-based position, in the entry's comments, of the comment this answers
    drawn_frame: bytes | None = None  # a JPEG of its frame with its drawing, when it has both and a copy is kept


@dataclass
class ReportEntry:
    task_id: str
    version: str  # "v2": the version's number within its shot
    model: str
    created_at: float | None
    prompt: str
    status: str  # the label: "Approved", "Pending review", ...
    status_by: str = ""
    status_at: float | None = None
    ratings: dict[str, int] = field(default_factory=dict)
    comments: list[ReportComment] = field(default_factory=list)  # in reading order (`thread`)
    thumbnail: bytes | None = None  # PNG or JPEG
    shot_id: str = ""

    @property
    def average_stars(self) -> float | None:
        return average(self.ratings)


# ---------- formatting ----------


def iso(at: float | None) -> str:
    return datetime.fromtimestamp(at, UTC).isoformat(timespec="seconds") if at is not None else ""


def _readable(at: float | None) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M UTC") if at is not None else ""


def stars_text(ratings: Mapping[str, int]) -> str:
    """'Ana:4;Bo:3' (in the order given)."""
    return ";".join(f"{who}:{stars}" for who, stars in ratings.items())


def _timecode_text(seconds: float | None) -> str:
    """The comment's timecode, "" without one, or with one that is no time in a video (the journal reads
    those as none; entries made otherwise may hold one): a report is never lost to one comment."""
    return format_timecode(seconds) if is_timecode(seconds) else ""


def _average_text(value: float | None) -> str:
    return f"{value:.2f}".rstrip("0").rstrip(".") if value is not None else ""


# ---------- from the journal ----------


def entries_from_journal(journal: Journal, task_ids: Iterable[str],
                         records: Mapping[str, TaskRecord | None] | None = None,
                         thumbnails: Mapping[str, bytes | None] | None = None,
                         prompts: Mapping[str, str] | None = None,
                         results: Collection[str] | None = None,
                         videos: Mapping[str, Path | bytes | None] | None = None) -> list[ReportEntry]:
    """A report entry per task, in the order given: prompt and model from the journal's submission
    (else `prompts`, e.g. the service's stored request; the record's model), status, stars and
    comments from the journal, creation time from the record (else the submission). Versions are
    numbered as the Review page numbers them (dailies.journal.version_numbers: among the shot's
    results), `results` being the tasks that are results (the page's); None: as the journal knows.
    `videos`: each version's kept copy (a path or its bytes), for the frames its drawings are on."""
    ids = list(dict.fromkeys(task_ids))
    records, thumbnails, prompts = records or {}, thumbnails or {}, prompts or {}
    submissions, statuses = journal.submissions(ids), journal.statuses(ids)
    ratings, comments = journal.ratings(ids), journal.comments(ids)
    versions = journal.numbered_versions(ids, None if results is None else {*results, *ids})
    entries = []
    for tid in ids:
        record, submission, change = records.get(tid), submissions.get(tid), statuses.get(tid)
        created = (float(record.created_at) if record is not None and record.created_at is not None
                   else submission.submitted_at if submission is not None else None)
        model = (submission.model if submission is not None and submission.model else "") or (
            record.model if record is not None and record.model else "")
        prompt = (submission.prompt if submission is not None else "") or prompts.get(tid, "")
        ordered = thread(comments.get(tid, []))
        position = {c.id: i for i, (c, _) in enumerate(ordered, 1)}
        shot_id, number = versions[tid]
        entries.append(ReportEntry(
            task_id=tid, version=f"v{number}", model=model, created_at=created, prompt=prompt or "",
            status=STATUS_LABELS[change.status if change is not None else PENDING],
            status_by=change.author if change is not None else "", status_at=change.at if change is not None else None,
            ratings=dict(ratings.get(tid, {})),
            comments=[ReportComment(c.author, c.created_at, c.timecode, c.body, c.resolved, depth,
                                    position.get(c.parent_id) if c.parent_id else None,
                                    _drawn_frame((videos or {}).get(tid), c)) for c, depth in ordered],
            thumbnail=thumbnails.get(tid), shot_id=shot_id))
    return entries


def _drawn_frame(video: Path | bytes | None, comment: Any) -> bytes | None:
    if video is None or comment.frame is None or not comment.drawing:
        return None
    from .frame_drawing import drawn_frame

    return drawn_frame(video, comment.frame, comment.drawing)


# ---------- CSV ----------


def to_rows(entries: Iterable[ReportEntry]) -> list[dict[str, str]]:
    """The CSV's rows: one per comment, one for a version without comments (its comment cells empty)."""
    rows = []
    for e in entries:
        version = {"task_id": e.task_id, "version": e.version, "model": e.model, "created_at": iso(e.created_at),
                   "prompt": e.prompt, "status": e.status, "status_by": e.status_by, "status_at": iso(e.status_at),
                   "average_stars": _average_text(e.average_stars), "stars": stars_text(e.ratings)}
        blank = {"comment_author": "", "comment_at": "", "timecode": "", "comment": "", "resolved": "",
                 "reply_to": ""}
        if not e.comments:
            rows.append({**version, **blank})
        for c in e.comments:
            rows.append({**version, "comment_author": c.author, "comment_at": iso(c.created_at),
                         "timecode": _timecode_text(c.timecode),
                         "comment": c.body, "resolved": "yes" if c.resolved else "no",
                         "reply_to": str(c.reply_to) if c.reply_to is not None else ""})
    return rows


def _text_cell(value: str) -> str:
    """A text cell as the CSV holds it: never a formula in a spreadsheet (see _FORMULA_START)."""
    return "'" + value if _FORMULA_START.match(value) else value


def _text_value(cell: str) -> str:
    """What `_text_cell` was given."""
    return cell[1:] if cell.startswith("'") and _FORMULA_START.match(cell) else cell


def _for_spreadsheet(row: Mapping[str, str], text: Callable[[str], str]) -> dict[str, str]:
    """The row with `text` applied to its text cells (a short row read back has None in the rest)."""
    return {name: text(value) if isinstance(value, str) and name not in NUMBER_COLUMNS else value
            for name, value in row.items()}


def to_csv(entries: Iterable[ReportEntry]) -> str:
    """The report as CSV text (encode it as "utf-8-sig" for a spreadsheet to read Chinese right).
    `reply_to` is the 1-based position, among its version's comment rows, of the comment answered.
    A text cell that a spreadsheet would take for a formula starts with a single quote."""
    out = io.StringIO()
    writer = csv.DictWriter(out, fieldnames=CSV_COLUMNS, lineterminator="\r\n")
    writer.writeheader()
    writer.writerows(_for_spreadsheet(row, _text_cell) for row in to_rows(entries))
    return out.getvalue()


def from_csv(text: str | bytes) -> list[dict[str, str]]:
    """The rows of a report's CSV (as `to_rows` gives them: without the quote `to_csv` puts before a
    would-be formula)."""
    if isinstance(text, bytes):
        text = text.decode("utf-8-sig")
    rows = csv.DictReader(io.StringIO(text.removeprefix("\ufeff"), newline=""))
    return [_for_spreadsheet(row, _text_value) for row in rows]


# ---------- thumbnails ----------


def _jpeg(image: Any, width: int) -> bytes:
    image = image.convert("RGB")
    if image.width > width:
        image = image.resize((width, max(1, round(image.height * width / image.width))))
    out = io.BytesIO()
    image.save(out, "JPEG", quality=80)
    return out.getvalue()


def thumbnail_of(source: str | Path | bytes, width: int = THUMBNAIL_WIDTH_PX) -> bytes | None:
    """A JPEG `width` pixels wide of an image (PNG, JPEG, ...) or of a video's first frame (PyAV):
    a path or the file's bytes. None when it cannot be read. Kept copies came from an upstream or a
    bucket: an image is checked from its header first (formats, no bomb), a video opened only through
    `spec.media.open_untrusted`."""
    from PIL import Image, UnidentifiedImageError

    from .spec.media import IMAGE_FORMATS, open_untrusted, read_image_info

    source = source if isinstance(source, bytes) else Path(source)
    try:
        read_image_info(source)
        with Image.open(io.BytesIO(source) if isinstance(source, bytes) else source, formats=IMAGE_FORMATS) as image:
            return _jpeg(image, width)
    except (UnidentifiedImageError, OSError, ValueError):
        pass
    try:
        with open_untrusted(source, "video") as container:
            for frame in container.decode(video=0):
                return _jpeg(frame.to_image(), width)
    except Exception:  # not a video PyAV can decode (its errors differ between versions)
        return None
    return None


def thumbnail_from_kept(kept: Mapping[str, KeptFile], width: int = THUMBNAIL_WIDTH_PX) -> bytes | None:
    """A thumbnail of a result from its kept copies: the last frame where kept (small), else the
    video's first frame. None when neither is kept or readable."""
    from .spec.results import LAST_FRAME_NAME, VIDEO_NAME

    for name in (LAST_FRAME_NAME, VIDEO_NAME):
        file = kept.get(name)
        if file is None:
            continue
        try:
            source: str | Path | bytes = file.path if file.path is not None else file.read_bytes()
        except Exception:  # a bucket that cannot be read now: no thumbnail, the report still builds
            continue
        thumbnail = thumbnail_of(source, width)
        if thumbnail is not None:
            return thumbnail
    return None


def video_from_kept(kept: Mapping[str, KeptFile]) -> Path | bytes | None:
    """The kept copy of a result's video, for the frames its drawings are on: the file here, else the
    bucket's bytes; None when it is not kept or cannot be read now."""
    from .spec.results import VIDEO_NAME

    file = kept.get(VIDEO_NAME)
    if file is None:
        return None
    try:
        return file.path if file.path is not None else file.read_bytes()
    except Exception:  # a bucket that cannot be read now: no drawn frames, the report still builds
        return None


# ---------- PDF ----------


def _font_files() -> tuple[str | None, str | None, str | None]:
    """Regular, bold and CJK TrueType fonts installed here (None for each one missing)."""
    from .generator.typography import _BOLD_FONTS, _CJK_FONTS, _LATIN_FONTS

    def first(paths: Iterable[str]) -> str | None:
        return next((p for p in paths if Path(p).is_file()), None)

    return first(_LATIN_FONTS), first(_BOLD_FONTS), first(_CJK_FONTS)


def _code_points(font_file: str) -> set[int] | None:
    try:
        from fontTools.ttLib import TTFont

        with TTFont(font_file, lazy=True, fontNumber=0) as font:
            return set(font.getBestCmap() or {})
    except Exception:
        return None


class _Writer:
    """fpdf2 with the report's fonts and a few layout helpers."""

    def __init__(self, title: str) -> None:
        from fpdf import FPDF

        pdf = FPDF(format="A4", unit="mm")
        pdf.set_auto_page_break(True, margin=15)
        pdf.set_margins(15, 15, 15)
        pdf.set_title(title)
        pdf.set_creator("Dailies")
        regular, bold, cjk = _font_files()
        self.unicode = regular is not None
        # The code points each style can show ("" and "B"): its font's and the CJK fallback's. Anything
        # else (an emoji, a script neither font has) is shown as MISSING with the note, also when a CJK
        # font is installed: fpdf2 would drop it with a warning on stderr only, and a comment that is
        # just "👍" would read as an empty one. None: not known (a font fontTools cannot read), as is.
        self.covered: dict[str, set[int] | None] = {"": None, "B": None}
        self.missing = False  # some character was shown as MISSING
        self._style = ""
        if regular is not None:
            pdf.add_font("Report", "", regular)
            pdf.add_font("Report", "B", bold or regular)
            if cjk is not None:
                try:
                    pdf.add_font("ReportCJK", "", cjk)
                    pdf.add_font("ReportCJK", "B", cjk)
                    pdf.set_fallback_fonts(["ReportCJK"], exact_match=False)
                except Exception:  # a font fpdf2 cannot read: as without one
                    cjk = None
            fallback = _code_points(cjk) if cjk is not None else set()
            for style, font in (("", regular), ("B", bold or regular)):
                own = _code_points(font)
                self.covered[style] = None if own is None or fallback is None else own | fallback
            self.family = "Report"
        else:
            self.family = "Helvetica"
        self.pdf = pdf

    def text(self, value: str) -> str:
        if not self.unicode:
            return value.encode("latin-1", "replace").decode("latin-1")
        covered = self.covered[self._style]
        if covered is None:
            return value
        shown = "".join(ch if ord(ch) in covered or ch.isspace() else MISSING for ch in value)
        self.missing = self.missing or shown != value
        return shown

    def para(self, value: str, size: float = 10, bold: bool = False, indent: float = 0, gray: bool = False) -> None:
        pdf = self.pdf
        self._style = "B" if bold else ""
        pdf.set_font(self.family, self._style, size)
        pdf.set_text_color(100 if gray else 0)
        left = pdf.l_margin
        pdf.set_x(left + indent)
        pdf.multi_cell(pdf.epw - indent, size * 0.5, self.text(value),
                       new_x="LEFT", new_y="NEXT", align="L")
        pdf.set_x(left)

    @property
    def margin(self) -> float:
        return 15.0


def _entry_heading(entry: ReportEntry) -> str:
    shot = f" (shot {entry.shot_id})" if entry.shot_id and entry.shot_id != entry.task_id else ""
    return f"{entry.version} · {entry.task_id}{shot}"


def _image_size(data: bytes, width: float, height: float) -> tuple[Any, float, float] | None:
    """The image and its size in the box (width, height in mm) keeping its aspect; None if unreadable
    (checked from its header first: a caller's thumbnail may be any bytes)."""
    from PIL import Image

    from .spec.media import IMAGE_FORMATS, read_image_info

    try:
        read_image_info(data)
        image = Image.open(io.BytesIO(data), formats=IMAGE_FORMATS)
        image.load()
    except Exception:
        return None
    scale = min(width / max(1, image.width), height / max(1, image.height))
    return image, image.width * scale, image.height * scale


DRAWN_FRAME_WIDTH_MM = 80.0


def _drawn_frame_image(w: _Writer, data: bytes, indent: float) -> None:
    """A comment's frame with its drawing, under its text, on the next page when it does not fit."""
    image = _image_size(data, DRAWN_FRAME_WIDTH_MM, DRAWN_FRAME_WIDTH_MM)
    if image is None:
        return
    pdf = w.pdf
    if pdf.get_y() + image[2] + 2 > pdf.h - pdf.b_margin:
        pdf.add_page()
    pdf.image(image[0], x=w.margin + indent, y=pdf.get_y() + 1, w=image[1], h=image[2])
    pdf.set_y(pdf.get_y() + image[2] + 2)


def to_pdf(entries: Iterable[ReportEntry], title: str = "Review report", now: float | None = None) -> bytes:
    """The report as a PDF: the title and date, then per version its thumbnail beside the version,
    id, model and date, the prompt, the status line, the stars, and the comments with their
    timecodes (replies indented)."""
    entries = list(entries)
    w = _Writer(title)
    pdf = w.pdf
    pdf.add_page()
    w.para(title, size=16, bold=True)
    generated = datetime.now(UTC).timestamp() if now is None else now
    w.para(f"{_readable(generated)} · {len(entries)} version{'s' if len(entries) != 1 else ''}", size=9, gray=True)
    pdf.ln(4)
    thumb_w, thumb_h = 45.0, 40.0  # the box a thumbnail fits in (mm)
    for entry in entries:
        image = _image_size(entry.thumbnail, thumb_w, thumb_h) if entry.thumbnail else None
        needed = max(image[2] if image else 0, 30) + 10
        if pdf.get_y() + needed > pdf.h - pdf.b_margin:
            pdf.add_page()
        pdf.set_draw_color(200)
        pdf.line(w.margin, pdf.get_y(), pdf.w - w.margin, pdf.get_y())
        pdf.ln(2)
        top = pdf.get_y()
        bottom = top
        if image is not None:
            pdf.image(image[0], x=w.margin, y=top, w=image[1], h=image[2])
            bottom = top + image[2]
            pdf.set_left_margin(w.margin + thumb_w + 5)
            pdf.set_xy(w.margin + thumb_w + 5, top)
        w.para(_entry_heading(entry), size=12, bold=True)
        details = " · ".join(p for p in (entry.model, _readable(entry.created_at)) if p)
        if details:
            w.para(details, size=9, gray=True)
        status = entry.status
        if entry.status_by or entry.status_at is not None:
            status += " — " + " ".join(p for p in (entry.status_by, _readable(entry.status_at)) if p)
        w.para(f"Status: {status}", size=10, bold=True)
        if entry.ratings:
            w.para(f"Stars: {_average_text(entry.average_stars)} average "
                   f"({', '.join(f'{who} {stars}' for who, stars in entry.ratings.items())})", size=10)
        else:
            w.para("Stars: none", size=10, gray=True)
        pdf.set_left_margin(w.margin)
        pdf.set_xy(w.margin, max(pdf.get_y(), bottom) + 2)
        w.para("Prompt", size=9, bold=True, gray=True)
        w.para(entry.prompt or "(no prompt recorded)", size=10)
        pdf.ln(2)
        if entry.comments:
            w.para(f"Comments ({len(entry.comments)})", size=9, bold=True, gray=True)
        else:
            w.para("No comments", size=9, gray=True)
        for c in entry.comments:
            indent = 8.0 * min(c.depth, 6)
            head = " · ".join(p for p in (
                f"[{_timecode_text(c.timecode)}]" if is_timecode(c.timecode) else "",
                c.author, _readable(c.created_at), "resolved" if c.resolved else "") if p)
            w.para(("↳ " if c.depth and w.unicode else "") + head, size=9, bold=True, indent=indent)
            w.para(c.body, size=10, indent=indent + 3)
            if c.drawn_frame:
                _drawn_frame_image(w, c.drawn_frame, indent + 3)
            pdf.ln(1)
        pdf.ln(4)
    if w.missing:
        w.para(MISSING_NOTE, size=8, gray=True)
    return bytes(pdf.output())
