"""The Review page's reel maker in a page of its own: the approved versions are picked, the reel is made
from their kept copies in the order set, kept beside the journal, played and offered for download."""

from __future__ import annotations

import av
import pytest
from streamlit.testing.v1 import AppTest

from dailies.journal import Journal
from dailies.spec.results import VIDEO_NAME

from .clips import make_clip

IDS = ["cgt-20261125000001-aaaa1", "cgt-20261125000002-bbbb2", "cgt-20261125000003-cccc3"]


def reel_page():
    import os
    import time
    from pathlib import Path

    from components.review.reel_maker import render_reel_maker
    from components.review.results import Result
    from dailies.journal import Journal

    journal = Journal(Path(os.environ["REEL_TEST_JOURNAL"]))
    ids = os.environ["REEL_TEST_IDS"].split(",")
    statuses = journal.statuses(ids)
    results = [Result(t, None, status=statuses.get(t), kept=journal.kept(t), listed=False) for t in ids]
    render_reel_maker(results, journal, None, time.time())


@pytest.fixture
def page(tmp_path, monkeypatch):
    journal_path = tmp_path / "dashboard" / "journal.sqlite3"
    journal = Journal(journal_path, database_url="", storage="")
    colours = [(220, 30, 30), (30, 200, 30), (30, 30, 220)]
    for task_id, colour, size in zip(IDS, colours, [(320, 180), (240, 320), (200, 200)], strict=True):
        path = journal.keep_path(task_id, VIDEO_NAME)
        path.parent.mkdir(parents=True)
        make_clip(path, size, 24, 1.0, colour, 48000)
        journal.mark_kept(task_id, VIDEO_NAME, path)
    journal.set_status(IDS[0], "approved")
    journal.set_status(IDS[2], "approved")
    journal.set_status(IDS[1], "rejected")
    journal.close()
    monkeypatch.setenv("REEL_TEST_JOURNAL", str(journal_path))
    monkeypatch.setenv("REEL_TEST_IDS", ",".join(IDS))
    monkeypatch.delenv("DAILIES_DATABASE_URL", raising=False)
    monkeypatch.delenv("DAILIES_STORAGE", raising=False)
    return tmp_path


def test_make_a_reel_of_the_approved_versions(page):
    at = AppTest.from_function(reel_page, default_timeout=60).run()
    assert not at.exception, [e.message for e in at.exception]
    assert at.multiselect(key="reel.picked").value == [IDS[0], IDS[2]]  # the approved ones, oldest first
    at.selectbox(key="reel.size").set_value("854x480")
    at.toggle(key="reel.burn_in").set_value(True)
    at.button(key="reel.make").click().run()
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]
    reels = list((page / "dashboard" / "reels").glob("reel-*.mp4"))
    assert len(reels) == 1
    with av.open(str(reels[0])) as container:
        stream = container.streams.video[0]
        assert (stream.width, stream.height) == (854, 480)
        assert abs(stream.frames / 24 - (2 * 1.0 + 2 * 1.5)) <= 1 / 24
    assert at.success and "2 shot(s)" in at.success[0].value
    assert any(b.label == "⬇️ Download the reel" for b in at.get("download_button"))


def test_the_reel_is_made_in_the_order_the_list_shows(page):
    """The list answers the order a drag or ↑ ↓ set (components/review/reel_order.py): the last picked first."""
    at = AppTest.from_function(reel_page, default_timeout=60).run()
    assert at.multiselect(key="reel.picked").value == [IDS[0], IDS[2]]
    at.session_state["reel.order"] = {"order": [IDS[2], IDS[0]]}  # as the list answers a drag to the top
    at.button(key="reel.make").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    [reel] = list((page / "dashboard" / "reels").glob("reel-*.mp4"))
    # Each shot after its 1.5 s slate: blue (the third version) from 1.5 s, then red from 4 s.
    wanted = [round(seconds * 24) for seconds in (2.0, 4.5)]
    with av.open(str(reel)) as container:
        middles = [frame.to_ndarray(format="rgb24")[360, 640].astype(int)
                   for number, frame in zip(range(wanted[-1] + 1), container.decode(video=0), strict=False)
                   if number in wanted]
    assert [int(colour.argmax()) for colour in middles] == [2, 0]  # blue, then red


def test_slates_number_versions_as_the_review_page_does(page):
    from components.review.reel_maker import version_labels
    from components.review.results import Result

    journal = Journal(page / "dashboard" / "journal.sqlite3", database_url="", storage="")
    journal.link_version(IDS[2], IDS[0], "rerun")
    results = [Result(t, None, kept=journal.kept(t), listed=False) for t in IDS]
    assert version_labels(journal, results) == {IDS[0]: "v1", IDS[1]: "v1", IDS[2]: "v2"}
    journal.close()


def reel_share_page():
    import os
    import time
    from pathlib import Path

    from components.review.reel_maker import render_reel_maker
    from components.review.results import Result
    from dailies.journal import Journal, Scope

    base = Journal(Path(os.environ["REEL_TEST_JOURNAL"]))
    journal = base.scoped(Scope.of_project("http://127.0.0.1:8000/api/v3", "studio", include_unscoped=True,
                                           author="Ana"))
    ids = os.environ["REEL_TEST_IDS"].split(",")
    statuses = journal.statuses(ids)
    results = [Result(t, None, status=statuses.get(t), kept=journal.kept(t), listed=False) for t in ids]
    render_reel_maker(results, journal, None, time.time())


def test_a_reel_can_itself_be_shared_and_is_never_taken_for_a_result(page, monkeypatch):
    from components.review.results import gather

    monkeypatch.setenv("DAILIES_DASHBOARD_URL", "https://dailies.example")
    monkeypatch.setenv("DAILIES_DASHBOARD_TEAM", "1")  # where guests stay guests (test_share_panel.py)
    at = AppTest.from_function(reel_share_page, default_timeout=60).run()
    at.button(key="reel.make").click().run()
    [reel] = list((page / "dashboard" / "reels").rglob("reel-*.mp4"))
    at.toggle(key=f"reel.share.{reel.stem}").set_value(True).run()
    [create] = [b for b in at.button if b.label.startswith("Create")]
    create.click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    [link] = [c.value for c in at.code]
    journal = Journal(page / "dashboard" / "journal.sqlite3")
    share = journal.open_share(link.split("share=", 1)[1])
    assert share.task_ids == (reel.stem,)
    kept = journal.kept(reel.stem)[VIDEO_NAME]
    assert kept.read_bytes() == reel.read_bytes()  # the share holds its own kept copy of the reel
    # The Review page lists kept results: a reel kept to be shared is not one of them.
    results, _ = gather(journal, online=False)
    assert reel.stem not in {r.task_id for r in results} and set(IDS) <= {r.task_id for r in results}


def test_two_reels_in_one_second_are_two_files_and_old_reels_do_not_pile_up(page, monkeypatch):
    """A reel's name was checked against finished files only, so two begun in one second (two people)
    were one file; and no reel was ever deleted."""
    import os

    from components.review import reel_maker

    folder = page / "dashboard" / "reels"
    folder.mkdir(parents=True, exist_ok=True)
    for n in range(reel_maker.REELS_KEPT + 5):  # older reels, oldest first
        old = folder / f"reel-20260101-0000{n:02d}.mp4"
        old.write_bytes(b"old")
        os.utime(old, (1_700_000_000 + n, 1_700_000_000 + n))

    class SameSecond:
        @staticmethod
        def now():
            from datetime import datetime

            return datetime(2026, 11, 25, 14, 28, 29)

    monkeypatch.setattr(reel_maker, "datetime", SameSecond)
    at = AppTest.from_function(reel_page, default_timeout=60).run()
    at.button(key="reel.make").click().run()
    at.button(key="reel.make").click().run()
    assert not at.exception and not at.error
    made = sorted(folder.glob("reel-20261125-142829*.mp4"))
    assert len(made) == 2 and all(p.stat().st_size > 1000 for p in made)
    left = sorted(folder.glob("reel-*.mp4"))
    assert len(left) == reel_maker.REELS_KEPT and set(made) <= set(left)
    assert not (folder / "reel-20260101-000000.mp4").exists()  # the oldest went
