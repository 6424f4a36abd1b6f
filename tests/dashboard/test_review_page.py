"""The Review page (AppTest, live service): one card per shot (versions newest on top), review status
with history, stars per person, comments, all persisting in the journal across sessions; the inbox
filters, side-by-side comparison in sync, the deep link, and kept results outliving their task.

The module has a service of its own, so the grid holds exactly the results made here.
"""

from __future__ import annotations

import csv
import io
import os
import re
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from components.common import catalogs
from components.common.keep import keep_result
from components.compose.form import BY_ENDPOINT, ENDPOINT_ID, ENDPOINT_RULES, MODEL
from components.review import panel as review_panel
from components.review import state_keys as review_panel_keys
from components.review.card import short_id
from dailies.client import Client, Tasks
from dailies.journal import Journal, Scope, Submission
from dailies.spec.catalog import Region
from tests.support.live_service import start_live_service, wait_until_listed
from tests.support.waiting import wait_past_second

from ..support.legacy_reviews import write_review
from .test_compose import compose, created_ids, rerun, send
from .test_compose import setup as compose_setup

PAGE = Path(__file__).resolve().parents[2] / "dashboard" / "views" / "review.py"
V2 = "doubao-seedance-2-0-260128"


def small(prompt: str, **fields) -> dict:
    return {"model": V2, "content": [{"type": "text", "text": prompt}], "resolution": "480p", "duration": 4,
            **fields}


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    svc = start_live_service(tmp_path_factory.mktemp("review-service"), workers=1)
    yield svc
    svc.stop()


@pytest.fixture(scope="module")
def results(service) -> list[str]:
    """Three succeeded tasks, newest first, and one failed one (never on the Review page)."""
    with Client(base_url=service.base_url, api_key=service.api_key) as client:
        ids = []
        for prompt in ("take one", "take two", "take three"):
            ids.append(client.tasks.create(small(prompt)).id)
            wait_past_second(time.time())  # distinct creation seconds: a fixed newest-first order
        failed = client.tasks.create({"model": V2, "content": [
            {"type": "text", "text": "x"},
            {"type": "image_url", "image_url": {"url": "http://nowhere.invalid/x.png"}, "role": "first_frame"}]}).id
        for task_id in [*ids, failed]:
            client.wait(task_id, timeout=120, poll_interval=0.1)
    wait_past_second(time.time())
    return list(reversed(ids))


@pytest.fixture
def env(monkeypatch, tmp_path, service):
    SERVICE_URL[:] = [service.base_url]
    monkeypatch.setenv("ARK_BASE_URL", service.base_url)
    monkeypatch.setenv("ARK_API_KEY", service.api_key)
    monkeypatch.setenv("DAILIES_DATA_DIR", str(tmp_path / "dashboard-data"))
    journal = Journal(tmp_path / "dashboard-data" / "dashboard" / "journal.sqlite3")
    yield journal
    journal.close()


def open_review(**query: str) -> AppTest:
    at = AppTest.from_file(str(PAGE), default_timeout=30)
    at.query_params.update(query)
    return at.run()


def cards(at: AppTest) -> list[str]:
    """Task ids of the versions shown, in order (each card shows one version, with one status control)."""
    return [w.key.removeprefix("review.status.") for w in at.selectbox if str(w.key).startswith("review.status.")]


def players(at: AppTest) -> list[str]:
    """The URLs the page's players play: the timecode players (a custom component) and Streamlit's own."""
    import json

    urls = [json.loads(e.proto.json)["url"] for e in at.get("bidi_component")
            if str(e.key).startswith("review.player.")]
    return urls + [v.proto.url for v in at.get("video")]


def player_data(at: AppTest, task_id: str) -> dict:
    import json

    [element] = [e for e in at.get("bidi_component") if e.key == f"review.player.{task_id}"]
    return json.loads(element.proto.json)


def comment_form(at: AppTest, task_id: str):
    """The card's "💬 Comment" popover holding this version's comment box."""
    [form] = [p for p in at.get("popover") if [t.key for t in p.text_area] == [f"review.comment.{task_id}"]]
    return form


def history_control(at: AppTest) -> list[tuple[str, str]]:
    """(label, tooltip) of each card's status history control."""
    return [(p.proto.popover.label, p.proto.popover.help) for p in at.get("popover")
            if p.proto.popover.icon == ":material/history:"]


def member(env: Journal, name: str) -> Journal:
    """Another member of the page's project ("tests", as the local service says of its key)."""
    return env.scoped(Scope.of_project(SERVICE_URL[0], "tests", author=name))


SERVICE_URL: list[str] = []


def test_grid_shows_each_succeeded_result_with_player_and_review_controls(env, results):
    at = open_review()
    assert not at.exception
    assert cards(at) == results  # newest first; the failed task is not there
    assert len(players(at)) == 3
    assert [f.key for f in at.feedback] == [f"review.stars.{t}" for t in results]
    assert [t.key for t in at.text_area] == [f"review.comment.{t}" for t in results]
    # Each box is behind its card's one "💬 Comment" control, closed until asked for (issue 37).
    assert [comment_form(at, t).proto.popover.label for t in results] == ["💬 Comment"] * 3
    assert not any(comment_form(at, t).proto.popover.open for t in results)
    assert all(at.selectbox(key=f"review.status.{t}").value == "pending" for t in results)
    # Each card says what its task cost, from the usage at the model's list price.
    assert len([c for c in at.caption if re.search(r" · ¥\d+\.\d{2} · ", c.value)]) == 3


def test_prompts_come_from_the_journal_or_the_service(env, results):
    """Submitted here: the journal's prompt. Made with the API (these were): the service's stored request."""
    env.record_submission(Submission(task_id=results[0], batch_id=None, submitted_at=time.time(), base_url="x",
                                     model=V2, mode="text", prompt="take three, from here",
                                     request=small("take three")))
    at = open_review()
    shown = [m.value for m in at.markdown]
    assert "**take three, from here**" in shown and "**take two**" in shown and "**take one**" in shown


def test_status_stars_and_comments_persist_across_sessions_with_who_and_when(env, results):
    task_id = results[1]
    at = open_review()
    at.selectbox(key=f"review.status.{task_id}").set_value("changes_requested").run()
    at.feedback(key=f"review.stars.{task_id}").set_value(3).run()  # the fourth star
    at.text_area(key=f"review.comment.{task_id}").input("keep the wide shot").run()
    at.button(key=f"review.post.{task_id}").click().run()
    assert not at.exception
    journal = Journal(env.path)
    assert journal.status_of(task_id) == "changes_requested"
    [(author, stars)] = journal.ratings([task_id])[task_id].items()
    assert stars == 4 and author.startswith("key ")
    assert [(c.author, c.body) for c in journal.comments([task_id])[task_id]] == [(author, "keep the wide shot")]

    again = open_review()  # a new session: the widgets start from the journal
    assert again.selectbox(key=f"review.status.{task_id}").value == "changes_requested"
    assert again.feedback(key=f"review.stars.{task_id}").value == 3
    assert any("keep the wide shot" in m.value and author in m.value for m in again.markdown)
    # Who set the status is the label of its history's control (the select says the status itself).
    [(label, tooltip)] = history_control(again)
    assert label == f"by {author}" and tooltip.startswith(f"Changes requested by {author}, ")
    assert any(c.value == "★ 4.0 (1)" and f"{author} 4★" in c.help for c in again.caption)
    assert again.text_area(key=f"review.comment.{task_id}").value == ""
    # Approving later keeps the history: who, from what, to what.
    again.selectbox(key=f"review.status.{task_id}").set_value("approved").run()
    assert [(c.previous, c.status) for c in journal.status_history(task_id)] == [
        ("pending", "changes_requested"), ("changes_requested", "approved")]
    # An empty comment is not posted; it says why.
    again.button(key=f"review.post.{task_id}").click().run()
    assert any("Write something to post" in c.value for c in again.caption)
    assert len(journal.comments([task_id])[task_id]) == 1


def test_the_status_select_follows_another_members_change_and_picking_its_old_value_writes_it(env, results):
    """The card reads the journal's statuses at every run: its select (the card's one status display)
    shows the journal's (another member's change included), and picking the value it showed before is a
    change that writes."""
    task_id = results[0]
    at = open_review()
    assert at.selectbox(key=f"review.status.{task_id}").value == "pending"
    member(env, "Bob").set_status(task_id, "approved")
    at.run()  # any later run of this page (a filter, Refresh, another card's change)
    assert at.selectbox(key=f"review.status.{task_id}").value == "approved"
    at.selectbox(key=f"review.status.{task_id}").select("pending").run()
    assert not at.exception
    journal = Journal(env.path)
    assert journal.status_of(task_id) == "pending"
    assert [(c.previous, c.status) for c in journal.status_history(task_id)][-1] == ("approved", "pending")
    assert at.selectbox(key=f"review.status.{task_id}").value == "pending"  # my own pick stands


def test_reviewing_lists_nothing_anew(env, results, monkeypatch):
    # Each card is a fragment (in the browser a status reruns that card alone); the page's own runs
    # take the listing it read when it opened. Either way, reviewing lists nothing anew.
    at = open_review()
    reads = []
    real_list = Tasks.list
    monkeypatch.setattr(Tasks, "list", lambda self, **query: reads.append(query) or real_list(self, **query))
    at.selectbox(key=review_panel.INBOX_KEY).select("pending").run()
    at.feedback(key=f"review.stars.{results[0]}").set_value(2).run()
    at.text_area(key=f"review.comment.{results[0]}").input("tighter crop")
    at.button(key=f"review.post.{results[0]}").click().run()
    assert cards(at) == results  # neither a star nor a comment is a status
    at.selectbox(key=f"review.status.{results[0]}").set_value("approved").run()
    assert not at.exception
    assert cards(at) == results[1:]  # approved: no longer pending
    assert reads == []


def test_a_reply_and_resolving_a_comment(env, results):
    task_id = results[0]
    note = member(env, "Bo").add_comment(
        task_id, "too dark here", timecode=2.0)
    at = open_review()
    assert at.button(key=f"review.tc.{note.id}").label == "00:02.00"
    at.button(key=f"review.reply.{note.id}").click().run()
    # Reply opens the card's comment box, saying what it answers.
    form = comment_form(at, task_id)
    assert form.proto.popover.open and "replying to Bo" in form.text_area[0].placeholder
    at.text_area(key=f"review.comment.{task_id}").input("brighter next take")
    at.button(key=f"review.post.{task_id}").click().run()
    assert not at.exception
    comments = Journal(env.path).comments([task_id])[task_id]
    reply = next(c for c in comments if c.body == "brighter next take")
    assert reply.parent_id == note.id
    at.button(key=f"review.resolve.{note.id}").click().run()
    assert next(c for c in Journal(env.path).comments([task_id])[task_id] if c.id == note.id).resolved
    # A timecode asks the card's player to seek there (once: a second click goes there again).
    at.button(key=f"review.tc.{note.id}").click().run()
    assert player_data(at, task_id)["seek_to"] == 2.0
    at.button(key=f"review.post.{task_id}").click().run()  # any other run: the request is handed over once
    assert player_data(at, task_id)["seek_to"] is None


def test_inbox_filters(env, results):
    journal = Journal(env.path)
    bo = member(journal, "Bo")
    bo.set_status(results[0], "approved")
    bo.set_status(results[2], "rejected")
    at = open_review()
    for inbox, expected in (("approved", [results[0]]), ("rejected", [results[2]]), ("pending", [results[1]]),
                            ("needs_me", [results[1]]), ("all", results)):
        at.selectbox(key=review_panel.INBOX_KEY).select(inbox).run()
        assert cards(at) == expected, inbox
    # A status change that takes a card out of the filter reruns the page.
    at.selectbox(key=review_panel.INBOX_KEY).select("pending").run()
    at.selectbox(key=f"review.status.{results[1]}").set_value("changes_requested").run()
    assert cards(at) == []


def test_needs_my_review_leaves_out_my_own_shots_and_changes_requested_on_mine(env, results):
    journal = Journal(env.path)
    at = open_review()
    author = next(c.value for c in at.caption if c.value.startswith("Reviewing as ")).split("**")[1]
    mine = member(journal, author)
    mine.record_submission(Submission(task_id=results[1], batch_id=None, submitted_at=time.time(), base_url="x",
                                      model=V2, mode="text", prompt="mine", request=small("mine")))
    at = open_review()
    at.selectbox(key=review_panel.INBOX_KEY).select("needs_me").run()
    assert cards(at) == [results[0], results[2]]
    member(journal, "Bo").set_status(results[1], "changes_requested")
    at = open_review()
    at.selectbox(key=review_panel.INBOX_KEY).select("my_changes").run()
    assert cards(at) == [results[1]]
    at.selectbox(key=review_panel.MEMBER_KEY).select(author).run()
    assert cards(at) == [results[1]]


def test_versions_of_a_shot_show_on_one_card_newest_on_top_and_compare_with_the_previous(env, results):
    journal = Journal(env.path)
    journal.link_version(results[1], results[2], "edit")  # take two is v2 of take one
    journal.link_version(results[0], results[1], "rerun")  # take three is v3
    at = open_review()
    assert cards(at) == [results[0]]  # one shot, its newest version on top
    picker = at.segmented_control(key=f"review.version.{results[2]}")
    assert picker.options[0].startswith("v3") and picker.value == results[0]
    picker.set_value(results[2]).run()
    assert cards(at) == [results[2]]  # v1 chosen
    at.segmented_control(key=f"review.version.{results[2]}").set_value(results[0]).run()
    at.button(key=f"review.compare_prev.{results[0]}").click().run()
    assert at.multiselect(key=review_panel.COMPARE_KEY).value == [results[1], results[0]]
    synced = [e for e in at.get("bidi_component") if "sync" in str(e.key)]
    assert len(synced) == 1


def test_batch_filter_and_compare_the_whole_batch(env, results):
    batch = env.new_batch("three takes", "text")
    for task_id in results[:2]:
        env.record_submission(Submission(task_id=task_id, batch_id=batch, submitted_at=time.time(), base_url="x",
                                         model=V2, mode="text", prompt=f"variation {task_id[-5:]}",
                                         request=small("v")))
    at = open_review()
    at.selectbox(key=review_panel.BATCH_KEY).select(batch).run()
    assert cards(at) == results[:2]
    at.button(key="review.compare_batch").click().run()
    assert not at.exception
    assert at.multiselect(key=review_panel.COMPARE_KEY).value == results[:2]
    table = at.dataframe[0].value
    assert list(table.columns) == [review_panel.short_id(t) for t in results[:2]] + ["differs"]
    assert {"seed", "resolution", "ratio", "duration", "status"} <= set(table.index)
    assert table.loc["resolution", "differs"] == "" and table.loc["seed", "differs"] == "≠"


def test_compare_up_to_four_side_by_side(env, results):
    at = open_review()
    at.multiselect(key=review_panel.COMPARE_KEY).set_value(results).run()
    assert not at.exception
    assert any(m.value == "**Comparing 3 results**" for m in at.markdown)
    table = at.dataframe[0].value
    assert len(table.columns) == 4 and table.loc["duration"].tolist()[:3] == ["4 s"] * 3
    assert at.multiselect(key=review_panel.COMPARE_KEY).max_selections == review_panel.COMPARE_MAX
    at.multiselect(key=review_panel.COMPARE_KEY).set_value(results[:1]).run()
    assert not at.dataframe  # one result is not a comparison


def test_deep_link_opens_one_result(env, results):
    at = open_review(task=results[2])
    assert not at.exception
    assert cards(at) == [results[2]]
    assert len(players(at)) == 1
    at.button(key="review.back").click().run()
    assert cards(at) == results and "task" not in at.query_params


def test_a_deep_link_asks_for_its_task_alone_and_shows_its_review(env, results, monkeypatch):
    # A deep link is a new session: it must not wait for the listing of every result (issue 26), yet
    # show what the grid would show of that task: its status, the stars, the comments.
    env.set_status(results[1], "approved")
    env.rate(results[1], 3)
    env.add_comment(results[1], "lovely light", timecode=1.5)
    reads = []
    real_list = Tasks.list
    monkeypatch.setattr(Tasks, "list", lambda self, **query: reads.append(query) or real_list(self, **query))
    at = open_review(task=results[1])
    assert not at.exception
    assert reads == []
    assert cards(at) == [results[1]] and len(players(at)) == 1
    assert at.selectbox(key=f"review.status.{results[1]}").value == "approved"
    assert any(c.value == "★ 3.0 (1)" for c in at.caption)
    assert any("lovely light" in m.value for m in at.markdown)
    at.button(key="review.back").click().run()
    assert cards(at) == results and reads  # the grid lists the service's results


def test_open_alone_from_the_grid(env, results):
    at = open_review()
    at.button(key=f"review.open.{results[1]}").click().run()
    assert cards(at) == [results[1]] and at.query_params["task"] == results[1]


def test_open_alone_is_a_focused_view_of_the_shot_at_the_top_of_the_page(env, results):
    """Issue 37: "Open alone" opened scrolled part-way down (where the card was) with a letterboxed 320 px
    player beside the grid's page options. Now the page goes to its top, shows the way back first, and
    the player is as wide as the page in the video's own shape (no fixed height, nothing letterboxed)."""
    from dailies.spec.pixels import dimensions

    at = open_review()
    at.button(key=f"review.open.{results[1]}").click().run()
    assert not at.exception
    assert at.button[0].key == "review.back"  # the first control of the view
    assert any("scrollTo(0, 0)" in h.proto.body for h in at.get("html"))
    data = player_data(at, results[1])
    width, height = dimensions(V2, "480p", "16:9")
    assert data["height"] is None and data["max_height"] and data["aspect"] == pytest.approx(width / height)
    assert "Keep every succeeded result automatically" not in [t.label for t in at.toggle]  # the grid's option
    assert [f"review.comment.{results[1]}"] == [t.key for t in comment_form(at, results[1]).text_area]
    at.button(key="review.back").click().run()
    assert cards(at) == results and "Keep every succeeded result automatically" in [t.label for t in at.toggle]


def test_comment_at_opens_the_comment_box_pinned_to_that_time(env, results, monkeypatch):
    """The player's "Comment at 00:02.00" leads straight to writing: that card's box opens, pinned there
    (the player itself is a browser component: here it reports the press, as it does in the browser)."""
    from components.common.timecode_player import PlayerState
    from components.review import card as review_card

    task_id = results[0]
    pressed = {f"review.player.{task_id}": 2.0}
    real = review_card.timecode_player

    def player(url, *, key, **sizing):
        real(url, key=key, **sizing)
        at_time = pressed.pop(key, None)
        # The frame on screen comes with the time (48 at 24 fps is 2.0 s).
        return PlayerState(comment_at=at_time, position=at_time, comment_frame=None if at_time is None else 48)

    monkeypatch.setattr(review_card, "timecode_player", player)
    at = open_review()
    form = comment_form(at, task_id)
    assert form.proto.popover.open and "(at 00:02.00)" in form.text_area[0].placeholder
    assert not any(comment_form(at, t).proto.popover.open for t in results[1:])
    at.text_area(key=f"review.comment.{task_id}").input("too dark here")
    at.button(key=f"review.post.{task_id}").click().run()
    assert not at.exception
    assert [(c.body, c.timecode, c.frame) for c in Journal(env.path).comments([task_id])[task_id]] == [
        ("too dark here", 2.0, 48)]
    # Its timecode button shows that frame: the player is asked for the frame, not only the time.
    seeks = []

    def seeking(url, *, key, **options):
        seeks.append((key, options.get("seek_to"), options.get("seek_frame")))
        return real(url, key=key, **options)

    monkeypatch.setattr(review_card, "timecode_player", seeking)
    [comment] = Journal(env.path).comments([task_id])[task_id]
    at.button(key=f"review.tc.{comment.id}").click().run()
    assert (f"review.player.{task_id}", 2.0, 48) in seeks
    # Posted: the box stays open for another, empty and no longer pinned (the player says where it is now).
    form = comment_form(at, task_id)
    assert form.proto.popover.open and form.text_area[0].value == "" and "(at " not in form.text_area[0].placeholder


def test_refresh_lists_the_services_results_anew(env, tmp_path, monkeypatch):
    svc = start_live_service(tmp_path / "refresh-service", workers=1)
    monkeypatch.setenv("ARK_BASE_URL", svc.base_url)
    try:
        at = open_review()
        assert cards(at) == []
        with Client(base_url=svc.base_url, api_key=svc.api_key) as client:
            task_id = client.tasks.create(small("just finished")).id
            client.wait(task_id, timeout=120, poll_interval=0.1)
        wait_until_listed(svc.base_url, svc.api_key, {task_id})
        at.button(key=review_panel.REFRESH_KEY).click().run()
        assert not at.exception
        assert cards(at) == [task_id]
    finally:
        svc.stop()


def test_a_result_submitted_here_through_an_endpoint_shows_the_endpoint_id(env, tmp_path, monkeypatch):
    # A service of its own: the new result must not join the other tests' grid.
    svc = start_live_service(tmp_path / "endpoint-service", workers=1)
    monkeypatch.setenv("ARK_BASE_URL", svc.base_url)
    endpoint = "ep-local-seedance-2-0-260128"
    try:
        # Submitted from the Compose page, so the dashboard's journal holds the model as written.
        at = compose(**{catalogs.CATALOG_KEY: Region.VOLCENGINE.value})
        at.selectbox(key=MODEL).set_value(BY_ENDPOINT)
        rerun(at)
        at.text_input(key=ENDPOINT_ID).input(endpoint)
        at.selectbox(key=ENDPOINT_RULES).set_value(V2)
        send(compose_setup(at, mode="text", prompt="a heron through an endpoint"))
        [task_id] = created_ids(at)
        with Client(base_url=svc.base_url, api_key=svc.api_key) as client:
            assert client.wait(task_id, timeout=120, poll_interval=0.1).model == V2  # the record's model
        wait_until_listed(svc.base_url, svc.api_key, {task_id})
        as_written = f"{endpoint} ({V2})"

        grid = open_review()
        assert not grid.exception
        assert cards(grid) == [task_id]
        assert any(as_written in c.value for c in grid.caption), [c.value for c in grid.caption]
        alone = open_review(task=task_id)
        assert not alone.exception
        assert any(c.value.startswith(f"{as_written} · 480p") for c in alone.caption), [c.value for c in alone.caption]
    finally:
        svc.stop()


def test_kept_result_stays_after_its_task_is_deleted_and_the_service_stops(env, tmp_path, monkeypatch):
    # A service of its own: the deleted task must not leak into the other tests' grid.
    svc = start_live_service(tmp_path / "kept-service", workers=1)
    monkeypatch.setenv("ARK_BASE_URL", svc.base_url)
    try:
        with Client(base_url=svc.base_url, api_key=svc.api_key) as client:
            task_id = client.tasks.create(small("kept forever")).id
            record = client.wait(task_id, timeout=120, poll_interval=0.1)
            keep_result(client, env, record)
            write_review(env, task_id, verdict="approved", stars=5)  # the previous release's: adopted
            client.tasks.delete(task_id)
        at = open_review()
        assert not at.exception
        assert cards(at) == [task_id]
        assert any(":gray-badge[no longer on the service]" in c.value and "💾 kept" in c.value for c in at.caption)
        videos = players(at)
        assert len(videos) == 1 and "/media/" in videos[0]  # the kept copy, served by Streamlit
        assert at.selectbox(key=f"review.status.{task_id}").value == "approved"
        alone = open_review(task=task_id)
        assert cards(alone) == [task_id] and alone.feedback(key=f"review.stars.{task_id}").value == 4
        assert "480p · 16:9 · 4 s" in " ".join(c.value for c in alone.caption)
    finally:
        svc.stop()
    # With the service gone altogether, the kept result is still there to review.
    at = open_review()
    assert cards(at) == [task_id]
    assert any("Could not list" in w.value for w in at.warning)


def test_the_reel_maker_opens_from_review_with_the_approved_versions(env, results):
    member(env, "Bo").set_status(results[1], "approved")
    at = open_review()
    assert [m.key for m in at.multiselect] == [review_panel.COMPARE_KEY]  # closed: the reel maker is not drawn
    at.session_state[review_panel.REEL_KEY] = True  # as opening the expander does
    at.run()
    assert not at.exception
    picked = [m for m in at.multiselect if m.key != review_panel.COMPARE_KEY]
    assert [m.value for m in picked] == [[results[1]]]  # the approved version, picked at first
    # Not kept: nothing to hand to the edit yet; kept, its order goes as an OTIO timeline.
    assert not [b for b in at.get("download_button") if "for the edit" in b.proto.label]
    with Client(base_url=SERVICE_URL[0], api_key=os.environ["ARK_API_KEY"]) as client:
        keep_result(client, env, client.tasks.get(results[1]))
    at.run()
    [handoff] = [b for b in at.get("download_button") if "for the edit" in b.proto.label]
    assert handoff.proto.label == "🎞️ This order for the edit (OTIO, 1 approved shot)"



def test_the_reels_order_is_presented_live(env, results):
    """From the reel maker, a live session on the reel's versions in its order, labelled as its slates
    name them; the page goes to it (here, without the router, it says where it is)."""
    member(env, "Bo").set_status(results[1], "approved")
    at = open_review()
    at.session_state[review_panel.REEL_KEY] = True
    at.run()
    at.button(key=review_panel_keys.PRESENT_LIVE_KEY).click().run()
    assert not at.exception
    [said] = [e.value for e in at.info]
    session_id = re.search(r"/live\?session=(live-[0-9a-f]+)", said).group(1)
    with Client(base_url=SERVICE_URL[0], api_key=os.environ["ARK_API_KEY"]) as client:
        session = client.live_session(session_id)
    assert [v.task_id for v in session.versions] == [results[1]]
    assert session.versions[0].label == "take two v1" and session.title.startswith("Reel ")


def test_a_report_of_the_notes_of_the_versions_shown(env, results):
    member(env, "Bo").add_comment(results[0], "too dark here", timecode=2.0)
    at = open_review()
    at.session_state[review_panel.REPORT_KEY] = True  # as opening the expander does
    at.run()
    at.button(key="review.report.prepare").click().run()
    assert not at.exception
    labels = sorted(b.proto.label for b in at.get("download_button"))
    assert labels == ["Report (CSV)", "Report (PDF)"]  # their content: tests/dashboard/test_review_report.py


def test_the_reel_and_the_report_name_the_prompts_the_service_stored(env, results):
    """Tasks made with the API (these were) have no journal prompt: the reel's picker and slates and
    the report take the service's stored request's, as the cards do, before any card is drawn."""
    from components.review.report_download import KEY as REPORT_BUILT

    member(env, "Bo").set_status(results[1], "approved")
    at = open_review()
    at.session_state[review_panel.REEL_KEY] = True
    at.session_state[review_panel.REPORT_KEY] = True
    at.run()
    [picker] = [m for m in at.multiselect if m.key != review_panel.COMPARE_KEY]
    assert picker.value == [results[1]]
    assert sorted(picker.options) == sorted([f"{short_id(results[0])} · Pending review · take three",
                                             f"{short_id(results[1])} · Approved · take two",
                                             f"{short_id(results[2])} · Pending review · take one"])
    at.button(key="review.report.prepare").click().run()
    assert not at.exception
    csv_text = at.session_state[f"{REPORT_BUILT}.built"][3].decode("utf-8-sig")
    rows = {row["task_id"]: row["prompt"] for row in csv.DictReader(io.StringIO(csv_text))}
    assert rows == {results[0]: "take three", results[1]: "take two", results[2]: "take one"}


def test_the_cards_ask_their_pages_stored_prompts_side_by_side(env, results, monkeypatch):
    """The page's versions made with the API have their stored requests asked at once before the cards
    are drawn, not one card after the other (each card waiting on the service in turn). Here every read
    but the first (which a connection may ask alone, stored_requests.py) waits until another is under
    way too: asked card by card, the second read waits alone and the barrier breaks."""
    import threading
    from collections import OrderedDict

    from components.common import stored_requests

    monkeypatch.setattr(stored_requests, "_kept", OrderedDict())  # nothing read yet in this process
    monkeypatch.setattr(stored_requests, "WAIT_S", 120.0)  # the reads themselves are waited for
    together = threading.Barrier(len(results) - 1, timeout=60)
    first = threading.Lock()
    real = Client.task_request

    def task_request(self, task_id):
        if not first.acquire(blocking=False):
            together.wait()
        return real(self, task_id)

    monkeypatch.setattr(Client, "task_request", task_request)
    at = open_review()
    assert not at.exception, at.exception
    shown = [m.value for m in at.markdown]
    for prompt in ("take one", "take two", "take three"):
        assert f"**{prompt}**" in shown
    assert not together.broken


def test_sharing_the_shots_shown_with_a_guest(env, results, monkeypatch):
    from components.review import share_panel

    monkeypatch.setenv("DAILIES_DASHBOARD_URL", "https://dailies.example")
    # This page's dashboard has the environment's key; shares are made where guests stay guests (a
    # team dashboard or sign-in: test_share_panel.py), which this module's single service stands for.
    monkeypatch.setattr(share_panel, "guests_stay_guests", lambda: True)
    at = open_review()
    at.session_state[review_panel.SHARE_KEY] = True  # as opening the expander does
    at.run()
    assert not at.exception
    [create] = [b for b in at.button if "review.share" in str(b.key) or b.label.startswith("Create")]
    create.click().run()
    assert not at.exception and not at.error
    [link] = [c.value for c in at.code]
    assert link.startswith("https://dailies.example/guest?share=")
    share = Journal(env.path).open_share(link.split("share=", 1)[1])
    assert sorted(share.task_ids) == sorted(results)  # the newest version of each shot shown; kept for it
    assert all("video.mp4" in Journal(env.path).kept(t) for t in results)


def test_cards_per_page_is_a_choice_and_changing_it_goes_back_to_the_first_page(env, results, monkeypatch):
    # Three shots here: pages of one card, or of two, stand for the page's 6, 12 and 24.
    monkeypatch.setattr(review_panel, "PER_PAGE_CHOICES", (1, 2, 3))
    at = open_review()
    assert not at.exception
    per_page = at.selectbox(key=review_panel.PER_PAGE_KEY)
    assert per_page.value == 1 and per_page.options == ["1", "2", "3"]
    assert cards(at) == results[:1]
    assert any("page 1 of 3" in c.value for c in at.caption)
    at.session_state[review_panel.PAGE_KEY] = 3
    at.run()
    assert cards(at) == results[2:]
    at.selectbox(key=review_panel.PER_PAGE_KEY).select(2).run()
    assert cards(at) == results[:2]  # back on the first page, two cards on it
    assert any("page 1 of 2" in c.value for c in at.caption)
    at.selectbox(key=review_panel.PER_PAGE_KEY).select(3).run()
    assert cards(at) == results and any("page 1 of 1" in c.value for c in at.caption)


def test_a_page_that_fits_on_one_page_has_no_page_size_choice(env, results):
    at = open_review()
    assert not at.exception and cards(at) == results
    assert review_panel.PER_PAGE_KEY not in [w.key for w in at.selectbox]


def test_the_compare_picker_names_the_prompts_the_cards_have_asked_the_service_for(env, results):
    """Versions made with the API: the picker's labels name the stored prompt once a card (or a tool)
    has asked the service for it, and never ask for every result themselves."""
    at = open_review()
    assert not at.exception
    at.run()  # the first run's cards asked for the three stored requests
    picker = at.multiselect(key=review_panel.COMPARE_KEY)
    assert sorted(picker.options) == sorted([f"{short_id(results[0])} · take three",
                                             f"{short_id(results[1])} · take two",
                                             f"{short_id(results[2])} · take one"])
    never_asked = review_panel._picker_labels([review_panel.Result("cgt-never-asked-x", None)], "nowhere")
    assert never_asked == {"cgt-never-asked-x": short_id("cgt-never-asked-x")}


def test_a_guests_name_and_comment_show_as_typed_on_the_members_cards(env, results):
    """A share link's guest (no key, anyone with the link) writes a name and a comment meant as
    Markdown: a tracking image, a link under a label, a bold line that passes for Ana's comment. The
    members' cards show those characters as typed (escaped), making nothing of them."""
    from components.common.markdown_text import markdown_text
    from dailies.spec.results import VIDEO_NAME

    task_id = results[0]
    ana = member(env, "Ana")
    path = ana.keep_path(task_id, VIDEO_NAME)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x00" * 64)
    ana.mark_kept(task_id, VIDEO_NAME, path)
    _, token = ana.create_share([task_id], 86_400, allow_comments=True, allow_status=True)
    guest = env.guest_view(env.open_share(token), "![](https://attacker.example/beacon.png)")
    guest.add_comment(task_id, "fine\n\n**Ana** · 10:00  \nShip it: [the master](https://attacker.example/phish)")
    guest.set_status(task_id, "approved")
    at = open_review()
    assert not at.exception
    shown = ([m.value for m in at.markdown] + [c.value for c in at.caption] + [c.help or "" for c in at.caption]
             + [text for control in history_control(at) for text in control])
    assert not [s for s in shown if "](https://attacker" in s or "**Ana**" in s]
    name = markdown_text(guest.author)
    [comment] = [m.value for m in at.markdown if m.value.startswith(f"**{name}** · ")]
    assert comment.endswith("  \nfine  \n\u00a0  \n\\*\\*Ana\\*\\* · 10\\:00  \nShip it\\: "
                            "\\[the master\\]\\(https\\:\\/\\/attacker.example\\/phish\\)")
    assert [label for label, _ in history_control(at)] == [f"by {name}"]
    assert history_control(at)[0][1].startswith(f"Approved by {name}, ")
    assert any(f"· **{name}**: Pending review → Approved" in m.value for m in at.markdown)  # the status history


def test_a_key_nobody_named_is_asked_for_a_name_and_keeps_its_stars(env, results):
    """Issue 37: a reviewer whose key has no member name signed as "key df95cea8"; Review asks for a
    name, and what they did before stays theirs under it."""
    at = open_review()
    assert not at.exception
    ask = at.text_input(key=review_panel_keys.NAME_KEY)
    assert "you appear as “key " in ask.label
    at.feedback(key=review_panel_keys.STARS_KEY.format(results[0])).set_value(3).run()  # 4 stars, as key …
    ask.input("Maya").run()
    assert not at.exception
    assert review_panel_keys.NAME_KEY not in [w.key for w in at.text_input]
    stars = env.ratings([results[0]])[results[0]]
    assert list(stars.values()) == [4] and next(iter(stars)).startswith("Maya (key ")


def test_a_card_shows_its_status_once_and_cards_come_two_a_row(env, results):
    """Issue 37: cards showed the status twice (a badge and the select) and came three a row with 275 px
    players; two a row give each player about 440 px across on a 1440 px screen."""
    at = open_review()
    assert not at.exception
    assert at.selectbox(key=f"review.status.{results[0]}").value == "pending"
    assert not any("Pending review]" in m.value for m in at.markdown)
    assert review_panel.CARDS_PER_ROW == 2


def test_the_approved_kept_versions_shown_are_handed_off_to_the_edit(env, results):
    with Client(base_url=SERVICE_URL[0], api_key=os.environ["ARK_API_KEY"]) as client:
        keep_result(client, env, client.tasks.get(results[2]))
    bo = member(env, "Bo")
    bo.set_status(results[2], "approved")
    bo.set_status(results[1], "approved")  # approved but not kept: named as left out
    bo.add_comment(results[2], "the light pops", timecode=1.0, frame=24,
                   drawing=[{"kind": "ellipse", "x1": 0.2, "y1": 0.2, "x2": 0.4, "y2": 0.4}])
    at = open_review()
    assert not [b for b in at.get("download_button") if "cut" in b.proto.label]  # closed: nothing built
    at.session_state[review_panel.HANDOFF_KEY] = True  # as opening the expander does
    at.run()
    assert not at.exception
    [download] = [b for b in at.get("download_button") if "cut" in b.proto.label]
    assert download.proto.label == "Download the cut (1 approved shot)"
    left = " ".join(c.value for c in at.caption if c.value.startswith("Left out"))
    assert f"{results[1]}: no kept copy" in left and results[0] not in left  # the pending one is not listed
    # What the button hands over: the kept copy as the clip, the comment on its frame, drawn (red).
    from components.review.handoff_download import handed_off
    from components.review.results import Result

    with Client(base_url=SERVICE_URL[0], api_key=os.environ["ARK_API_KEY"]) as client:
        shown = [Result(t, client.tasks.get(t), kept=env.kept(t)) for t in results]  # where keep_result put it
    text, clips, _ = handed_off(shown, bo, "edl", time.time())
    assert clips == 1 and "* LOC: 00:00:01:00 RED     BO: THE LIGHT POPS" in text.upper()
    assert str(env.kept(results[2])["video.mp4"].path) in text


def test_the_one_shot_view_takes_verdicts_and_moves_between_shots_from_buttons_with_shortcuts(env, results):
    at = open_review(task=results[1])
    keys = {b.key: b.proto.shortcut for b in at.button if str(b.key).startswith("review.keys.")}
    assert keys == {"review.keys.approved": "a", "review.keys.changes_requested": "e", "review.keys.rejected": "x",
                    "review.keys.comment": "m", "review.keys.previous": "p", "review.keys.next": "n"}
    at.button(key="review.keys.approved").click().run()
    assert not at.exception
    assert Journal(env.path).status_of(results[1]) == "approved"
    assert at.selectbox(key=f"review.status.{results[1]}").value == "approved"
    at.button(key="review.keys.rejected").click().run()
    assert Journal(env.path).status_of(results[1]) == "rejected"
    # The grid's neighbours, newest first.
    at.button(key="review.keys.next").click().run()
    assert at.query_params["task"] == results[2] and cards(at) == [results[2]] and not at.exception
    at.button(key="review.keys.previous").click().run()
    at.button(key="review.keys.previous").click().run()
    assert at.query_params["task"] == results[0]
    at.button(key="review.keys.previous").click().run()  # the newest: nothing before it
    assert at.query_params["task"] == results[0] and [t.value for t in at.toast] == ["No previous shot."]
    at.button(key="review.keys.comment").click().run()
    assert comment_form(at, results[0]).proto.popover.open


def test_links_hold_the_filters_the_comparison_and_the_shot_and_frame(env, results, monkeypatch):
    """Review's filters and comparison are read from the address (and written to it); a shot's link
    with &frame=N opens its player on that frame."""
    at = open_review(**{"show": "all", "compare": f"{results[0]},nope"})
    assert not at.exception
    assert at.selectbox(key="review.inbox").value == "all"
    assert at.multiselect(key="review.compare").value == [results[0]]  # an id no result has is left out
    at.multiselect(key="review.compare").select(results[1]).run()
    assert at.query_params["compare"] == f"{results[0]},{results[1]}"
    at.multiselect(key="review.compare").unselect(results[0]).unselect(results[1]).run()
    assert "compare" not in at.query_params

    from components.review import card as review_card

    seeks = []
    real = review_card.timecode_player

    def player(url, *, key, **options):
        seeks.append((key, options.get("seek_frame")))
        return real(url, key=key, **options)

    monkeypatch.setattr(review_card, "timecode_player", player)
    open_review(task=results[2], frame="30")
    assert (f"review.player.{results[2]}", 30) in seeks
    seeks.clear()
    open_review(task=results[2], frame="-3")  # not a frame: the player opens where it would
    assert seeks == [(f"review.player.{results[2]}", None)]
