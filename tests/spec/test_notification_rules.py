"""Who a happening reaches, under which reason, and the words its message carries."""

from __future__ import annotations

from dailies.spec import notifications as N

PEOPLE = ["Ana", "Ana Lima", "Bo", "Cy"]


def target(owner: str = "", *events: str, kind: str = "webhook") -> N.Target:
    return N.Target(id=f"nt-{owner or 'project'}", project="studio", kind=kind, address="https://example.com/",
                    events=events or N.EVENT_KINDS, owner=owner)


def comment(text: str, actor: str = "Bo", **more) -> N.Happening:
    return N.Happening(kind="comment", task_id="cgt-1", text=text, actor=actor, **more).with_mentions(PEOPLE)


def test_a_person_hears_of_a_comment_under_its_strongest_reason():
    happening = comment("@Ana Lima see", reply_to="Ana Lima", maker="Ana Lima")
    assert N.reason_for(happening, "Ana Lima") == "mention"
    assert N.reason_for(happening, "Ana") is None  # the longer name was mentioned, not hers
    assert N.reason_for(comment("fine", reply_to="Cy", maker="Cy"), "Cy") == "reply"
    assert N.reason_for(comment("fine", maker="cy"), "Cy") == "comment"
    assert N.reason_for(comment("fine", maker="Cy"), "Ana") is None


def test_nobody_hears_of_what_they_did_themselves():
    assert N.reason_for(comment("@Bo note to self", maker="Bo", reply_to="Bo"), "Bo") is None


def test_a_project_target_takes_its_kinds_and_a_persons_target_only_what_concerns_them():
    channel, anas_mentions, cys_all = target("", "comment"), target("Ana", "mention"), target("Cy")
    routed = N.route(comment("@Ana look", maker="Cy"), [channel, anas_mentions, cys_all])
    assert [(t.id, kind) for t, kind in routed] == [("nt-project", "comment"), ("nt-Ana", "mention"),
                                                    ("nt-Cy", "comment")]
    assert N.route(N.Happening(kind="status", task_id="t", actor="Bo", maker="Ana", status="approved"),
                   [channel, anas_mentions]) == []  # neither takes statuses
    budget = N.Happening(kind="budget", maker="Cy", text="80%")
    assert [t.id for t, _ in N.route(budget, [target("", "budget"), target("Ana"), cys_all])] == ["nt-project", "nt-Cy"]


def test_slack_words_escape_what_slack_reads_as_markup_and_link_the_shot():
    item = N.item(comment("a <b> & c", shot="Fox | <dawn>", link="https://d.example/review?task=cgt-1"), "comment")
    assert N.slack_body("studio", [item])["text"] == (
        "*Dailies · studio*\n• Bo commented on <https://d.example/review?task=cgt-1|Fox ¦ &lt;dawn&gt;>: a <b> & c")
    unlinked = N.item(comment("a <b>", shot="Fox"), "comment")
    assert N.slack_body("studio", [unlinked])["text"].endswith("• Bo commented on Fox: a &lt;b&gt;")


def test_a_burst_is_worded_as_one_message_and_long_text_is_cut():
    items = [N.item(comment(f"note {n}" + "x" * 400, shot="Fox"), "comment") for n in range(3)]
    assert N.subject("studio", items) == "[Dailies · studio] 3 updates"
    text = N.email_text("studio", items)
    assert text.count("Bo commented on Fox: note") == 3 and "x" * 300 not in text
    assert N.subject("studio", items[:1]) == "[Dailies · studio] Bo commented on Fox"


def test_a_target_body_is_checked_field_by_field():
    problems, fields = N.check_target({"kind": "email", "address": "ana@studio.example", "events": ["mention"],
                                       "owner": "Ana"})
    assert problems == [] and fields["events"] == ("mention",) and fields["owner"] == "Ana"
    problems, _ = N.check_target({"kind": "webhook", "address": "https://ok.example/\nx", "events": ["comment"]})
    assert [p.path for p in problems] == ["address"]
    assert N.budget_reached(79, 100) is None and N.budget_reached(80, 100) == 80 and N.budget_reached(150, 100) == 100
