"""A person's inbox (dailies/journal/inbox.py), on both backends: mentions, replies, comments and
statuses on the versions they made, their versions' ends; never their own doing, never another
project's; read one by one or all at once; kept across a rename."""

from __future__ import annotations

import time

from dailies.journal import Journal, Scope, Submission
from dailies.journal.statuses import APPROVED

BASE = "http://127.0.0.1:8000/api/v3"
NOW = time.time()  # records are saved at the real time: the inbox reads the recent ones


def view(journal: Journal, project: str, author: str) -> Journal:
    return journal.scoped(Scope.of_project(BASE, project, author=author))


def made(person: Journal, task_id: str) -> None:
    person.record_submission(Submission(task_id=task_id, batch_id=None, submitted_at=NOW - 500, base_url=BASE,
                                        model="m", mode="text", prompt="a shot", request={"model": "m"}))


def test_what_needs_a_person_arrives_newest_first_and_nothing_of_their_own(journal):
    ana, bo, cy = view(journal, "studio", "Ana"), view(journal, "studio", "Bo"), view(journal, "studio", "Cy")
    made(ana, "cgt-ana-1")
    made(bo, "cgt-bo-1")
    first = ana.add_comment("cgt-bo-1", "the sky is flat", at=NOW - 400)
    bo.add_comment("cgt-bo-1", "fixed in v2", parent_id=first.id, at=NOW - 300)  # a reply to Ana
    cy.add_comment("cgt-bo-1", "@ana lima? no: @Ana, look at frame 12", at=NOW - 250, frame=12, timecode=0.5)
    bo.add_comment("cgt-ana-1", "lovely", at=NOW - 200)  # on Ana's version
    cy.set_status("cgt-ana-1", APPROVED, at=NOW - 150)  # on Ana's version
    ana.add_comment("cgt-ana-1", "thanks @Ana", at=NOW - 100)  # her own: never in her inbox
    ana.set_status("cgt-bo-1", APPROVED, at=NOW - 90)
    ana.save_records([{"id": "cgt-ana-1", "status": "succeeded", "created_at": NOW - 500, "updated_at": NOW - 450,
                       "model": "m"}])
    items = ana.inbox("Ana", now=NOW)
    assert [(i.kind, i.actor, i.text) for i in items] == [
        ("status", "Cy", APPROVED), ("comment", "Bo", "lovely"),
        ("mention", "Cy", "@ana lima? no: @Ana, look at frame 12"), ("reply", "Bo", "fixed in v2"),
        ("ended", "", "succeeded")]
    assert items[2].frame == 12 and items[2].task_id == "cgt-bo-1"
    assert ana.unread("Ana", now=NOW) == 5
    # Bo's: Ana's status, Cy's and Ana's comments on his version; not his own reply.
    assert [(i.kind, i.actor) for i in bo.inbox("Bo", now=NOW)] == [("status", "Ana"), ("comment", "Cy"),
                                                                     ("comment", "Ana")]
    assert ana.people() == ["Ana", "Bo", "Cy"]


def test_reading_one_by_one_and_all_at_once(journal):
    ana, bo = view(journal, "studio", "Ana"), view(journal, "studio", "Bo")
    made(ana, "cgt-ana-1")
    bo.add_comment("cgt-ana-1", "one", at=NOW - 30)
    bo.add_comment("cgt-ana-1", "two", at=NOW - 20)
    one, two = sorted(ana.inbox("Ana", now=NOW), key=lambda i: i.at)
    ana.mark_read("Ana", [one.id], at=NOW - 10)
    assert [(i.text, i.read) for i in ana.inbox("Ana", now=NOW)] == [("two", False), ("one", True)]
    assert bo.inbox("Bo", now=NOW) == []  # Ana's reads are hers
    ana.mark_all_read("Ana", at=NOW - 5)
    bo.add_comment("cgt-ana-1", "three", at=NOW - 1)  # after: unread
    assert [(i.text, i.read) for i in ana.inbox("Ana", now=NOW)] == [("three", False), ("two", True), ("one", True)]
    assert ana.unread("Ana", now=NOW) == 1
    # A rename keeps what was read.
    ana.rename_author("Ana", "Ana Lima")
    renamed = view(journal, "studio", "Ana Lima")
    assert [(i.text, i.read) for i in renamed.inbox("Ana Lima", now=NOW)] == [
        ("three", False), ("two", True), ("one", True)]


def test_no_item_crosses_projects_and_guests_are_no_one_to_mention(journal):
    ana, other = view(journal, "studio", "Ana"), view(journal, "other", "Cy")
    made(ana, "cgt-ana-1")
    # A guest of the other project names Ana and comments on a task id that is Ana's in hers.
    other.add_comment("cgt-ana-1", "@Ana hello from elsewhere", author="Dee (guest)", at=NOW - 10)
    other.set_status("cgt-ana-1", APPROVED, at=NOW - 9)
    assert ana.inbox("Ana", now=NOW) == []
    # In her own project a guest's comment on her version reaches her; the guest is not a person to mention.
    ana.add_comment("cgt-ana-1", "from a share", author="Eve (guest)", at=NOW - 5)
    assert [(i.kind, i.actor) for i in ana.inbox("Ana", now=NOW)] == [("comment", "Eve (guest)")]
    assert "Eve (guest)" not in ana.people() and other.people() == ["Cy"]


def test_old_news_is_left_out(journal):
    ana, bo = view(journal, "studio", "Ana"), view(journal, "studio", "Bo")
    made(ana, "cgt-ana-1")
    bo.add_comment("cgt-ana-1", "last month", at=NOW - 31 * 86400)
    bo.add_comment("cgt-ana-1", "today", at=NOW - 60)
    assert [i.text for i in ana.inbox("Ana", now=NOW)] == ["today"]
    assert ana.inbox("", now=NOW) == []


def test_names_the_service_knows_count_and_late_news_is_unread_after_mark_all_read(journal):
    ana, bo = view(journal, "studio", "Ana"), view(journal, "studio", "Bo")
    made(ana, "cgt-ana-1")
    bo.add_comment("cgt-bo-2", "@Ana Lima has the plate", at=NOW - 30)  # a member the journal has not met
    assert [i.kind for i in ana.inbox("Ana", now=NOW)] == ["mention"]
    assert ana.inbox("Ana", now=NOW, members=["Ana Lima"]) == []
    ana.mark_all_read("Ana", at=NOW - 10)
    # Her version ended before she marked all read, but the journal learns of it only now: news to her.
    ana.save_records([{"id": "cgt-ana-1", "status": "failed", "created_at": NOW - 500, "updated_at": NOW - 400,
                       "model": "m"}])
    assert [(i.kind, i.text, i.read) for i in ana.inbox("Ana", now=NOW + 60)] == [
        ("mention", "@Ana Lima has the plate", True), ("ended", "failed", False)]


def test_a_rename_onto_a_name_that_read_too_keeps_the_later_reads(journal):
    ana, bo = view(journal, "studio", "Ana"), view(journal, "studio", "Bo")
    made(ana, "cgt-ana-1")
    bo.add_comment("cgt-ana-1", "one", at=NOW - 50)
    ana.mark_all_read("Ana", at=NOW - 40)
    ana.mark_all_read("Ana L", at=NOW - 60)  # the name she moves to read earlier
    ana.rename_author("Ana", "Ana L")
    renamed = view(journal, "studio", "Ana L")
    assert [(i.text, i.read) for i in renamed.inbox("Ana L", now=NOW)] == [("one", True)]
