"""The reel maker's order list (components/review/reel_order.py): the picked versions as rows named by their
shot labels, each with its last frame when one is at hand, in the order the list last answered (a drag or
↑ ↓ in the browser: tests/browser/test_reel_order.py); versions picked or dropped since join or leave it."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from PIL import Image
from streamlit.testing.v1 import AppTest

from components.review.reel_order import arranged
from dailies.journal import Journal
from dailies.spec.results import LAST_FRAME_NAME, VIDEO_NAME
from tests.support.hostile_media import small_mp4
from tests.support.waiting import wait_for

IDS = ["cgt-20261125000001-aaaa1", "cgt-20261125000002-bbbb2", "cgt-20261125000003-cccc3"]
BOAT = "A paper boat drifting down a rain-soaked street at dusk, camera"
PROMPTS = [f"{BOAT} pushes in", f"{BOAT} orbits left", "A lantern rising over a dark river"]
ORDER = "reel.order"  # the list's key (components/review/state_keys.py ORDER_KEY)


def test_the_order_answered_is_kept_and_picks_since_join_at_the_end():
    assert arranged(["a", "b", "c"], None) == ["a", "b", "c"]  # nothing answered yet: the picking order
    assert arranged(["a", "b", "c"], ["c", "a", "b"]) == ["c", "a", "b"]
    assert arranged(["a", "b", "c", "d"], ["c", "a", "b"]) == ["c", "a", "b", "d"]  # d picked since
    assert arranged(["a", "c"], ["c", "a", "b"]) == ["c", "a"]  # b dropped since
    assert arranged(["b", "a", "c"], ["c", "a", "b"]) == ["c", "a", "b"]  # and picked again: where it was
    assert arranged(["a", "b"], ["x", "b", "b"]) == ["b", "a"]  # what is not picked, or twice, counts once or not


def order_page():
    import json
    import os
    import time
    from pathlib import Path

    from components.review.reel_maker import render_reel_maker
    from components.review.results import Result
    from dailies.journal import Journal

    journal = Journal(Path(os.environ["REEL_TEST_JOURNAL"]), database_url="", storage="")
    prompts = json.loads(os.environ["REEL_TEST_PROMPTS"])
    statuses = journal.statuses(list(prompts))
    results = [Result(t, None, status=statuses.get(t), kept=journal.kept(t), listed=False, stored_prompt=p)
               for t, p in prompts.items()]
    render_reel_maker(results, journal, None, time.time())


@pytest.fixture
def page(tmp_path, monkeypatch):
    """Three approved versions; the first and the last have a kept last frame, the second none."""
    journal_path = tmp_path / "dashboard" / "journal.sqlite3"
    journal = Journal(journal_path, database_url="", storage="")
    for task_id in (IDS[0], IDS[2]):
        path = journal.keep_path(task_id, LAST_FRAME_NAME)
        path.parent.mkdir(parents=True)
        Image.new("RGB", (64, 36), (200, 40, 40)).save(path)
        journal.mark_kept(task_id, LAST_FRAME_NAME, path)
    for task_id in IDS:
        journal.set_status(task_id, "approved")
    journal.close()
    monkeypatch.setenv("REEL_TEST_JOURNAL", str(journal_path))
    monkeypatch.setenv("REEL_TEST_PROMPTS", json.dumps(dict(zip(IDS, PROMPTS, strict=True))))
    monkeypatch.delenv("DAILIES_DATABASE_URL", raising=False)
    monkeypatch.delenv("DAILIES_STORAGE", raising=False)
    return AppTest.from_function(order_page, default_timeout=30)


def shown(at: AppTest) -> list[dict]:
    """The rows the list was given, in order."""
    [element] = [e for e in at.get("bidi_component") if e.key == ORDER]
    return json.loads(element.proto.json)["rows"]


def test_the_picked_versions_are_rows_named_by_their_shot_labels_with_their_frames(page):
    at = page.run()
    assert not at.exception, [e.message for e in at.exception]
    assert not at.get("arrow_data_frame") and not at.get("data_editor")  # no table of order numbers
    assert [r["id"] for r in shown(at)] == at.multiselect(key="reel.picked").value  # in picking order
    rows = {r["id"]: r for r in shown(at)}
    assert [rows[t]["name"] for t in IDS] == ["A paper boat drifti… · … pushes in",
                                              "A paper boat drifti… · … orbits left",
                                              "A lantern rising over a dark river"]
    assert rows[IDS[0]]["detail"] == "…000001-aaaa1 · Approved"
    # A kept last frame is served by Streamlit; the second version has none, and says nothing false.
    assert all("/media/" in rows[t]["frame"] and rows[t]["frame"].endswith(".png") for t in (IDS[0], IDS[2]))
    assert rows[IDS[1]]["frame"] == ""



def test_a_version_kept_without_a_last_frame_shows_its_videos_first_frame(page):
    """A kept video and no last frame: the row shows a thumbnail of the video's first frame, made once
    beside the page (a run may come before it is made; a later run has it)."""
    journal = Journal(Path(os.environ["REEL_TEST_JOURNAL"]), database_url="", storage="")
    try:
        path = journal.keep_path(IDS[1], VIDEO_NAME)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(small_mp4())
        journal.mark_kept(IDS[1], VIDEO_NAME, path)
    finally:
        journal.close()

    def framed():
        at = page.run()
        assert not at.exception, [e.message for e in at.exception]
        frame = {r["id"]: r["frame"] for r in shown(at)}[IDS[1]]
        return frame if frame.startswith("data:image/jpeg;base64,") else None

    wait_for(framed, "the thumbnail of the kept video", 60)


def test_the_list_answers_the_order_and_picks_join_or_leave_it(page):
    at = page.run()
    at.multiselect(key="reel.picked").set_value([IDS[0], IDS[2]]).run()
    at.session_state[ORDER] = {"order": [IDS[2], IDS[0]]}  # as a drag of the last row to the top answers
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    assert [r["id"] for r in shown(at)] == [IDS[2], IDS[0]]
    at.multiselect(key="reel.picked").set_value([IDS[0], IDS[2], IDS[1]]).run()  # picked since: at the end
    assert [r["id"] for r in shown(at)] == [IDS[2], IDS[0], IDS[1]]
    at.multiselect(key="reel.picked").set_value([IDS[2], IDS[1]]).run()  # dropped: the others keep their order
    assert [r["id"] for r in shown(at)] == [IDS[2], IDS[1]]
    at.multiselect(key="reel.picked").set_value([]).run()
    assert not at.get("bidi_component") and at.button(key="reel.make").disabled
