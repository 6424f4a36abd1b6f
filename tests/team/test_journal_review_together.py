"""Review together in the journal, on both backends (SQLite file; PostgreSQL + bucket): one scope per
project shared by its members, each change signed by its author; statuses with history, each person's
stars, comments at a timecode with replies and resolution, versions of a shot; the per-key journals
and verdicts of the previous release adopted into the project's scope."""

from __future__ import annotations

import json
import math

import pytest

from dailies.journal import Journal, Scope, Submission, group_versions, thread
from dailies.journal.statuses import APPROVED, CHANGES_REQUESTED, PENDING, STATUSES

from ..support.legacy_reviews import legacy_reviews, write_review

BASE = "http://127.0.0.1:8000/api/v3"
ANA_KEY, BO_KEY, CY_KEY = "key-ana-0001", "key-bo-0002", "key-cy-0003"


def project_view(journal: Journal, project: str, author: str) -> Journal:
    return journal.scoped(Scope.of_project(BASE, project, author=author))


def submission(task_id: str, prompt: str) -> Submission:
    return Submission(task_id=task_id, batch_id=None, submitted_at=1.0, base_url=BASE, model="m", mode="text",
                      prompt=prompt, request={"model": "m", "content": [{"type": "text", "text": prompt}]})


def test_members_of_a_project_share_statuses_stars_and_comments_and_other_projects_see_none(journal):
    ana, bo, cy = (project_view(journal, "studio", "Ana"), project_view(journal, "studio", "Bo"),
                   project_view(journal, "other", "Cy"))
    ana.record_submission(submission("cgt-1", "lantern over the river"))
    assert bo.submission("cgt-1").prompt == "lantern over the river"
    assert bo.status_of("cgt-1") == PENDING
    bo.set_status("cgt-1", CHANGES_REQUESTED, at=10.0)
    ana.set_status("cgt-1", APPROVED, at=20.0)
    assert [(c.author, c.previous, c.status) for c in ana.status_history("cgt-1")] == [
        ("Bo", PENDING, CHANGES_REQUESTED), ("Ana", CHANGES_REQUESTED, APPROVED)]
    assert bo.status_of("cgt-1") == APPROVED
    ana.rate("cgt-1", 4)
    bo.rate("cgt-1", 2)
    bo.rate("cgt-1", 3)  # Bo changes his mind: one rating per person
    assert ana.ratings(["cgt-1"]) == {"cgt-1": {"Ana": 4, "Bo": 3}}
    bo.rate("cgt-1", None)
    assert ana.ratings(["cgt-1"]) == {"cgt-1": {"Ana": 4}}

    note = bo.add_comment("cgt-1", "too dark here", timecode=2.0, at=30.0)
    reply = ana.add_comment("cgt-1", "brighter in v2", parent_id=note.id, at=40.0)
    ana.add_comment("cgt-1", "general note", at=35.0)
    shown = [(c.author, c.body, c.timecode, depth) for c, depth in thread(ana.comments(["cgt-1"])["cgt-1"])]
    assert shown == [("Bo", "too dark here", 2.0, 0), ("Ana", "brighter in v2", None, 1),
                     ("Ana", "general note", None, 0)]
    resolved = ana.set_resolved(note.id, True)
    assert resolved.resolved and resolved.resolved_by == "Ana"
    assert bo.comments(["cgt-1"])["cgt-1"][0].resolved
    assert not bo.set_resolved(note.id, False).resolved
    assert reply.parent_id == note.id

    # Another project sees nothing of it.
    assert cy.submission("cgt-1") is None and cy.status_of("cgt-1") == PENDING
    assert cy.comments(["cgt-1"]) == {} and cy.ratings(["cgt-1"]) == {}


def test_comments_and_statuses_refuse_what_is_not_one(journal):
    ana = project_view(journal, "studio", "Ana")
    with pytest.raises(ValueError, match="some text"):
        ana.add_comment("cgt-1", "   ")
    with pytest.raises(ValueError, match="timecode"):
        ana.add_comment("cgt-1", "x", timecode=-1)
    with pytest.raises(ValueError, match="status must be one of"):
        ana.set_status("cgt-1", "maybe")
    with pytest.raises(ValueError, match="stars"):
        ana.rate("cgt-1", 6)


def test_a_comment_keeps_its_frame_its_range_and_its_drawing_for_every_member(journal):
    ana, bo = project_view(journal, "studio", "Ana"), project_view(journal, "studio", "Bo")
    drawing = [{"kind": "arrow", "x1": 0.9, "y1": 0.9, "x2": 0.5, "y2": 0.5},
               {"kind": "text", "x": 0.5, "y": 0.45, "text": "this hand", "colour": "#ffcc00"}]
    made = ana.add_comment("cgt-1", "the hand flickers", timecode=1.04, frame=25, out_frame=31, drawing=drawing)
    drawn_only = ana.add_comment("cgt-1", "", timecode=2.0, frame=48, drawing=json.dumps(drawing[:1]))
    seen = {c.id: c for c in bo.comments(["cgt-1"])["cgt-1"]}
    assert (seen[made.id].frame, seen[made.id].out_frame) == (25, 31)
    assert [s.kind for s in seen[made.id].drawing] == ["arrow", "text"] and seen[made.id].drawing[1].text == "this hand"
    assert seen[drawn_only.id].body == "" and seen[drawn_only.id].drawing[0].kind == "arrow"
    # Resolving keeps all of it.
    resolved = bo.set_resolved(made.id, True)
    assert (resolved.frame, resolved.out_frame, resolved.drawing) == (25, 31, seen[made.id].drawing)
    assert {c.id: c for c in ana.comments(["cgt-1"])["cgt-1"]}[made.id].drawing == seen[made.id].drawing


@pytest.mark.parametrize(("fields", "says"), [
    ({"frame": -1}, "frame: a frame number"), ({"frame": 2.5}, "frame: a frame number"),
    ({"frame": True}, "frame: a frame number"), ({"out_frame": 3}, "needs its first frame"),
    ({"frame": 10, "out_frame": 9}, "out_frame: the range's last frame"),
    ({"drawing": [{"kind": "pen", "points": [[2, 0]]}]}, r"drawing\[0\]\.points\[0\]\[0\]"),
    ({"drawing": "not json"}, "a drawing is a JSON list"),
])
def test_a_frame_or_a_drawing_that_is_not_one_is_refused_and_nothing_is_written(journal, fields, says):
    ana = project_view(journal, "studio", "Ana")
    with pytest.raises(ValueError, match=says):
        ana.add_comment("cgt-1", "x", **fields)
    assert ana.comments(["cgt-1"]) == {}


DAY = 24 * 3600.0  # the latest timecode (dailies.timecodes.MAX_SECONDS): beyond any clip or reel


@pytest.mark.parametrize("bad", [math.inf, -math.inf, math.nan, 1e300, DAY + 1, -0.01])
def test_a_timecode_that_is_no_time_in_a_video_is_refused(journal, bad):
    ana = project_view(journal, "studio", "Ana")
    with pytest.raises(ValueError, match="timecode is a time in the video"):
        ana.add_comment("cgt-1", "pinned nowhere", timecode=bad)
    assert ana.comments(["cgt-1"]) == {}
    assert ana.add_comment("cgt-1", "the last second of a long reel", timecode=DAY).timecode == DAY


def test_a_stored_timecode_no_video_has_is_read_as_none_and_every_report_still_comes(journal):
    """Rows an older release let through (it refused only negatives and NaN): the comment is read
    unpinned, so its card and the reports of its version are not lost to it."""
    from dailies.review_report import entries_from_journal, from_csv, to_csv, to_pdf

    ana = project_view(journal, "studio", "Ana")
    for n, value in enumerate((math.inf, 1e300)):
        ana._write("comments", [{"scope": ana.scope.name, "id": f"old-{n}", "task_id": "cgt-1", "author": "Ana",
                                 "body": f"pinned at {value!r}", "created_at": 1.0 + n, "timecode": value,
                                 "parent_id": None, "resolved_at": None, "resolved_by": None}])
    ana.add_comment("cgt-1", "a good one", timecode=2.5, at=3.0)
    assert [(c.body, c.timecode) for c in ana.comments(["cgt-1"])["cgt-1"]] == [
        ("pinned at inf", None), ("pinned at 1e+300", None), ("a good one", 2.5)]
    entries = entries_from_journal(ana, ["cgt-1"])
    assert [row["timecode"] for row in from_csv(to_csv(entries))] == ["", "", "00:02.50"]
    assert to_pdf(entries, "report").startswith(b"%PDF")


def test_each_status_change_is_from_the_one_before_it_when_reviewers_change_it_at_once(journal):
    """Eight members set one version's status at once, over and over: every change of the history is
    "from" the status of the change before it (read apart from the write, 35 of 160 were not)."""
    import threading

    members = [project_view(journal, "studio", f"member-{n}") for n in range(8)]
    start, errors, written = threading.Barrier(len(members)), [], []

    def review(view: Journal, n: int) -> None:
        try:
            start.wait()
            for i in range(12):
                # A status the version already has (another member's, just before) writes nothing.
                if view.set_status("cgt-1", STATUSES[(n + i) % len(STATUSES)]) is not None:
                    written.append(n)
        except Exception as exc:  # reported below, not lost in the thread
            errors.append(exc)

    threads = [threading.Thread(target=review, args=(view, n)) for n, view in enumerate(members)]
    for thread_ in threads:
        thread_.start()
    for thread_ in threads:
        thread_.join()
    assert errors == []
    history = members[0].status_history("cgt-1")
    assert len(history) == len(written) > 0
    before = [PENDING] + [change.status for change in history[:-1]]
    assert [change.previous for change in history] == before
    assert all(change.status != change.previous for change in history)
    assert members[0].status_of("cgt-1") == history[-1].status


def test_versions_join_the_shot_of_the_task_they_came_from(journal):
    ana = project_view(journal, "studio", "Ana")
    ana.link_version("cgt-2", "cgt-1", "edit", at=2.0)
    ana.link_version("cgt-3", "cgt-2", "rerun", at=3.0)  # a version of a version: still shot cgt-1
    ana.link_version("cgt-9", "cgt-8", "chain", at=4.0)
    links = ana.shot_links(["cgt-1", "cgt-2", "cgt-3", "cgt-8", "cgt-9"])
    assert links["cgt-3"].shot_id == "cgt-1" and links["cgt-3"].parent_id == "cgt-2"
    assert group_versions(["cgt-1", "cgt-8", "cgt-2", "cgt-9", "cgt-3", "cgt-7"], links) == {
        "cgt-1": ["cgt-1", "cgt-2", "cgt-3"], "cgt-8": ["cgt-8", "cgt-9"], "cgt-7": ["cgt-7"]}
    assert ana.shot_members(["cgt-1"]) == {"cgt-1": ["cgt-2", "cgt-3"]}
    with pytest.raises(ValueError, match="how must be one of"):
        ana.link_version("cgt-4", "cgt-1", "copy")


def test_a_per_key_journal_of_the_previous_release_joins_its_projects_scope(journal):
    """Verdicts become statuses, stars the member's rating, notes the member's comment; submissions and
    preferences move; a row the project already has stays; it runs once."""
    ana_key = journal.scoped(Scope.of(BASE, ANA_KEY))
    ana_key.record_submission(submission("cgt-1", "lantern over the river"))
    write_review(ana_key, "cgt-1", verdict="approved", stars=5, notes="lovely light")
    write_review(ana_key, "cgt-2", verdict="rejected")
    ana_key.set_preference("compose.model", "m-ana")
    bo = project_view(journal, "studio", "Bo")
    bo.record_submission(submission("cgt-3", "bo's own"))

    ana = project_view(journal, "studio", "Ana")
    assert ana.adopt(Scope.of(BASE, ANA_KEY)) > 0
    assert bo.submission("cgt-1").prompt == "lantern over the river"
    assert bo.status_of("cgt-1") == APPROVED and bo.status_of("cgt-2") == "rejected"
    assert bo.status_history("cgt-1")[0].author == "Ana"
    assert bo.ratings(["cgt-1"]) == {"cgt-1": {"Ana": 5}}
    assert [(c.author, c.body) for c in bo.comments(["cgt-1"])["cgt-1"]] == [("Ana", "lovely light")]
    assert ana.preference("compose.model") == "m-ana"
    # The key's own scope is empty now, and a second adoption brings nothing twice.
    assert ana_key.submission("cgt-1") is None and legacy_reviews(ana_key, ["cgt-1", "cgt-2"]) == {}
    assert ana.adopt(Scope.of(BASE, ANA_KEY)) == 0
    assert len(bo.comments(["cgt-1"])["cgt-1"]) == 1


def test_a_key_scope_migrates_its_own_verdicts_in_place(journal):
    """Against a service that says nothing of projects (the real Ark) the scope stays the key's: its
    verdicts still become statuses, signed with the display name the person gave."""
    scope = Scope.of(BASE, CY_KEY, author="Cy")
    mine = journal.scoped(scope)
    write_review(mine, "cgt-5", verdict="approved", notes="ship it")
    assert mine.adopt() == 1
    assert legacy_reviews(mine, ["cgt-5"]) == {}  # converted once: the legacy row is gone
    assert mine.status_of("cgt-5") == APPROVED
    assert [(c.author, c.body) for c in mine.comments(["cgt-5"])["cgt-5"]] == [("Cy", "ship it")]


def test_two_dashboards_on_the_teams_database_see_the_same_statuses_and_comments(backend, tmp_path):
    """Two dashboards (two Journal objects, two data directories: on pg+s3 they share only the database;
    on sqlite, one file) see each other's statuses, stars, comments and versions at once."""
    def dashboard(machine: str) -> Journal:
        if backend.team:
            return Journal(tmp_path / machine / "journal.sqlite3", database_url=backend.database_url,
                           storage=backend.storage)
        return Journal(tmp_path / "shared" / "journal.sqlite3", database_url="", storage="")

    first, second = dashboard("one"), dashboard("two")
    try:
        ana, bo = project_view(first, "studio", "Ana"), project_view(second, "studio", "Bo")
        ana.record_submission(submission("cgt-7", "a kite over dunes"))
        bo.set_status("cgt-7", CHANGES_REQUESTED)
        bo.add_comment("cgt-7", "the kite is cut off", timecode=1.5)
        bo.rate("cgt-7", 2)
        ana.link_version("cgt-8", "cgt-7", "edit")
        assert ana.status_of("cgt-7") == CHANGES_REQUESTED
        assert [(c.author, c.timecode) for c in ana.comments(["cgt-7"])["cgt-7"]] == [("Bo", 1.5)]
        assert ana.ratings(["cgt-7"]) == {"cgt-7": {"Bo": 2}}
        assert bo.shot_links(["cgt-8"])["cgt-8"].shot_id == "cgt-7"
        assert bo.authors(["cgt-7"]) == {"cgt-7": "Ana"}
    finally:
        first.close()
        second.close()
