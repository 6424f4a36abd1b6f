"""The cut handed to the editor (dailies/edit_handoff.py): OTIO read back by OTIO with its clips and
markers, the EDL parsed back by OTIO's CMX 3600 reader, the FCPXML well-formed and read back; the
shots gathered from a journal are the approved ones with kept copies, their comments on their frames."""

from __future__ import annotations

import xml.etree.ElementTree as ET

import opentimelineio as otio
import pytest

from dailies.edit_handoff import HandoffNote, HandoffShot, notes_of, shots_from_journal, timeline, write
from dailies.journal import Journal, Scope
from dailies.journal.statuses import APPROVED, CHANGES_REQUESTED

SHOTS = [
    HandoffShot("cgt-20261128101010-boat1", "paper boat · v2", "/data/kept/boat.mp4", 120, 24, (
        HandoffNote("Ana", "the hand flickers", 25, 31, drawn=True),
        HandoffNote("Bo", "hold on the reflection", 96))),
    HandoffShot("cgt-20261128101010-kite2", "kite over dunes · v1", "/data/kept/kite.mp4", 96, 24, (
        HandoffNote("Dee (guest)", "love this", 0),)),
]


def test_the_otio_timeline_reads_back_with_its_clips_media_and_markers(tmp_path):
    text = write(timeline(SHOTS, "Dailies approved"), "otio")
    cut = otio.adapters.read_from_string(text, "otio_json")
    clips = list(cut.find_clips())
    assert [c.name for c in clips] == ["paper boat · v2", "kite over dunes · v1"]
    assert clips[0].media_reference.target_url == "file:///data/kept/boat.mp4"
    assert clips[0].source_range.duration == otio.opentime.RationalTime(120, 24)
    assert clips[1].range_in_parent().start_time == otio.opentime.RationalTime(120, 24)  # one after the other
    first = clips[0].markers
    assert [(m.name, m.comment) for m in first] == [("Ana: the hand flickers", "the hand flickers"),
                                                     ("Bo: hold on the reflection", "hold on the reflection")]
    assert first[0].marked_range == otio.opentime.TimeRange(otio.opentime.RationalTime(25, 24),
                                                            otio.opentime.RationalTime(7, 24))  # frames 25 to 31
    assert first[0].metadata["dailies"]["timecode"] == "00:00:01:01" and first[0].metadata["dailies"]["drawn"]
    assert first[0].color == otio.schema.MarkerColor.RED and first[1].color == otio.schema.MarkerColor.YELLOW
    assert clips[0].metadata["dailies"]["task_id"] == "cgt-20261128101010-boat1"


def test_the_edl_parses_back_with_each_shots_reel_length_and_notes():
    text = write(timeline(SHOTS), "edl")
    assert "* LOC: 00:00:01:01 RED     ANA: THE HAND FLICKERS" in text.upper()
    cut = otio.adapters.read_from_string(text, "cmx_3600", rate=24)
    clips = list(cut.find_clips())
    assert [c.source_range.duration.value for c in clips] == [120, 96]
    assert [c.metadata["cmx_3600"]["reel"] for c in clips] == ["010BOAT1", "010KITE2"]
    assert [m.marked_range.start_time.value for m in clips[0].markers] == [25, 96]
    assert "/data/kept/kite.mp4" in text


def test_the_fcpxml_is_well_formed_and_reads_back():
    text = write(timeline(SHOTS), "fcpxml")
    root = ET.fromstring(text.split("\n", 2)[2] if text.startswith("<?xml") else text)
    assert root.tag == "fcpxml"
    markers = [m.get("value") for m in root.iter("marker")]
    assert markers == ["Ana: the hand flickers", "Bo: hold on the reflection", "Dee (guest): love this"]
    assert {a.get("src") for a in root.iter("asset")} == {"file:///data/kept/boat.mp4", "file:///data/kept/kite.mp4"}
    cut = otio.adapters.read_from_string(text, "fcpx_xml")
    assert len(list(cut.find_clips())) == 2


def test_a_note_beyond_the_clips_end_is_left_off_and_an_unknown_format_is_refused():
    short = HandoffShot("cgt-x", "x", "/k/x.mp4", 48, 24, (HandoffNote("Ana", "late", 48),))
    assert len(list(timeline([short]).find_clips())[0].markers) == 0
    with pytest.raises(ValueError, match="format: one of otio, edl, fcpxml"):
        write(timeline([short]), "aaf")
    for fmt in ("otio", "edl", "fcpxml"):  # an empty cut is refused, not written (OTIO's EDL writer would crash)
        with pytest.raises(ValueError, match="no shot to hand off"):
            write(timeline([]), fmt)


BASE = "http://127.0.0.1:8000/api/v3"


@pytest.fixture
def studio(tmp_path):
    journal = Journal(tmp_path / "journal.sqlite3", database_url="", storage="")
    yield journal.scoped(Scope.of_project(BASE, "studio", author="Ana"))
    journal.close()


def test_from_the_journal_only_approved_shots_with_kept_copies_go_with_their_pinned_comments(studio):
    for task_id, duration in (("cgt-a", 5), ("cgt-b", 4), ("cgt-c", 5), ("cgt-d", 5)):
        studio.save_records([{"id": task_id, "status": "succeeded", "duration": duration, "framespersecond": 24,
                              "created_at": 1, "updated_at": 2, "model": "m"}])
    for task_id in ("cgt-a", "cgt-b", "cgt-d"):
        studio.set_status(task_id, APPROVED)
    studio.set_status("cgt-c", CHANGES_REQUESTED)
    top = studio.add_comment("cgt-a", "the hand flickers", timecode=1.04, frame=25, out_frame=31,
                             drawing=[{"kind": "rect", "x1": 0.1, "y1": 0.1, "x2": 0.3, "y2": 0.3}])
    studio.add_comment("cgt-a", "agreed", parent_id=top.id)  # a reply: conversation, not a mark
    studio.add_comment("cgt-a", "no place in the video")  # unpinned
    studio.add_comment("cgt-a", "from before frames", timecode=2.5)
    kept = {"cgt-a": "/k/a.mp4", "cgt-b": "/k/b.mp4", "cgt-c": "/k/c.mp4"}
    shots, left = shots_from_journal(studio, ["cgt-b", "cgt-a", "cgt-c", "cgt-d", "cgt-e"], media_of=kept.get)
    assert [s.task_id for s in shots] == ["cgt-b", "cgt-a"]  # the order asked for
    assert left == ["cgt-c: not approved", "cgt-d: no kept copy (keep it from Review or Tasks first)",
                    "cgt-e: not approved"]
    a = shots[1]
    assert (a.frames, a.fps, a.media) == (120, 24, "/k/a.mp4")
    assert a.notes == (HandoffNote("Ana", "the hand flickers", 25, 31, True),
                       HandoffNote("Ana", "from before frames", 60))
    everything, _ = shots_from_journal(studio, ["cgt-c"], media_of=kept.get, approved_only=False)
    assert [s.task_id for s in everything] == ["cgt-c"]
    assert notes_of(studio.comments(["cgt-b"]).get("cgt-b", []), 24) == ()
