"""The Review page (AppTest, live service): the grid of succeeded results, verdicts, stars and notes
persisting in the journal across sessions, the filters, side-by-side comparison, the deep link, and
kept results outliving their task.

The module has a service of its own, so the grid holds exactly the results made here.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from components import catalogs, review_panel
from components.compose_form import BY_ENDPOINT, ENDPOINT_ID, ENDPOINT_RULES, MODEL
from components.keep import keep_result
from dailies.client import Client, Tasks
from dailies.journal import Journal, Submission
from dailies.spec.catalog import Region

from ..live_service import start_live_service, wait_until_listed
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
            time.sleep(1.05)  # distinct creation seconds: a fixed newest-first order
        failed = client.tasks.create({"model": V2, "content": [
            {"type": "text", "text": "x"},
            {"type": "image_url", "image_url": {"url": "http://nowhere.invalid/x.png"}, "role": "first_frame"}]}).id
        for task_id in [*ids, failed]:
            client.wait(task_id, timeout=120, poll_interval=0.1)
    time.sleep(1.05)
    return list(reversed(ids))


@pytest.fixture
def env(monkeypatch, tmp_path, service):
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
    """Task ids of the cards shown, in order (each card has one verdict control)."""
    return [w.key.removeprefix("review.verdict.") for w in at.segmented_control]


def test_grid_shows_each_succeeded_result_with_player_and_review_controls(env, results):
    at = open_review()
    assert not at.exception
    assert cards(at) == results  # newest first; the failed task is not there
    assert len(at.get("video")) == 3
    assert [f.key for f in at.feedback] == [f"review.stars.{t}" for t in results]
    assert [t.key for t in at.text_area] == [f"review.notes.{t}" for t in results]
    assert all(":green-badge[🟢 Result link expires in 23 h" in m.value for m in at.markdown if "badge" in m.value)
    # Each card says what its task cost, from the usage at the model's list price.
    assert len([c for c in at.caption if re.search(r" · ¥\d+\.\d{2} · ", c.value)]) == 3


def test_prompt_comes_from_the_journal(env, results):
    env.record_submission(Submission(task_id=results[0], batch_id=None, submitted_at=time.time(), base_url="x",
                                     model=V2, mode="text", prompt="take three", request=small("take three")))
    at = open_review()
    assert any(m.value == "**take three**" for m in at.markdown)


def test_verdict_stars_and_notes_persist_across_sessions(env, results):
    task_id = results[1]
    at = open_review()
    at.segmented_control(key=f"review.verdict.{task_id}").set_value("approved").run()
    at.feedback(key=f"review.stars.{task_id}").set_value(3).run()  # the fourth star
    at.text_area(key=f"review.notes.{task_id}").input("keep the wide shot").run()
    assert not at.exception
    review = env.review(task_id)
    assert (review.verdict, review.stars, review.notes) == ("approved", 4, "keep the wide shot")

    again = open_review()  # a new session: the widgets start from the journal
    assert again.segmented_control(key=f"review.verdict.{task_id}").value == "approved"
    assert again.feedback(key=f"review.stars.{task_id}").value == 3
    assert again.text_area(key=f"review.notes.{task_id}").value == "keep the wide shot"
    assert again.segmented_control(key=f"review.verdict.{results[0]}").value is None

    # Changing one part keeps the others; clearing the verdict clears only the verdict.
    again.segmented_control(key=f"review.verdict.{task_id}").set_value("rejected").run()
    assert (env.review(task_id).verdict, env.review(task_id).stars) == ("rejected", 4)
    again.segmented_control(key=f"review.verdict.{task_id}").set_value(None).run()
    again.feedback(key=f"review.stars.{task_id}").set_value(None).run()
    assert (env.review(task_id).verdict, env.review(task_id).stars) == (None, 0)
    assert env.review(task_id).notes == "keep the wide shot"


def test_reviewing_reads_nothing_from_the_service_and_the_grid_follows_the_filter(env, results, monkeypatch):
    # Each card is a fragment (in the browser a verdict reruns that card alone); the page's own runs
    # take the listing it read when it opened. Either way, reviewing lists nothing anew.
    at = open_review()
    reads = []
    real_list = Tasks.list
    monkeypatch.setattr(Tasks, "list", lambda self, **query: reads.append(query) or real_list(self, **query))
    at.selectbox(key=review_panel.VERDICT_FILTER_KEY).select("unreviewed").run()
    at.feedback(key=f"review.stars.{results[0]}").set_value(2).run()
    at.text_area(key=f"review.notes.{results[0]}").input("tighter crop").run()
    assert cards(at) == results  # neither a star nor a note is a verdict
    at.segmented_control(key=f"review.verdict.{results[0]}").set_value("approved").run()
    assert not at.exception
    assert cards(at) == results[1:]  # approved: no longer "not reviewed"
    assert reads == []
    assert env.review(results[0]).stars == 3


def test_verdict_filter(env, results):
    env.set_review(results[0], verdict="approved")
    env.set_review(results[2], verdict="rejected")
    at = open_review()
    at.selectbox(key=review_panel.VERDICT_FILTER_KEY).select("approved").run()
    assert cards(at) == [results[0]]
    at.selectbox(key=review_panel.VERDICT_FILTER_KEY).select("rejected").run()
    assert cards(at) == [results[2]]
    at.selectbox(key=review_panel.VERDICT_FILTER_KEY).select("unreviewed").run()
    assert cards(at) == [results[1]]
    at.selectbox(key=review_panel.VERDICT_FILTER_KEY).select("all").run()
    assert cards(at) == results


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
    assert {"seed", "resolution", "ratio", "duration"} <= set(table.index)
    assert table.loc["resolution", "differs"] == "" and table.loc["seed", "differs"] == "≠"
    assert len(at.get("video")) == 4  # two compared, two cards


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
    assert len(at.get("video")) == 1
    at.button(key="review.back").click().run()
    assert cards(at) == results and "task" not in at.query_params


def test_open_alone_from_the_grid(env, results):
    at = open_review()
    at.button(key=f"review.open.{results[1]}").click().run()
    assert cards(at) == [results[1]] and at.query_params["task"] == results[1]


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
            env.set_review(task_id, verdict="approved", stars=5)
            client.tasks.delete(task_id)
        at = open_review()
        assert not at.exception
        assert cards(at) == [task_id]
        assert any(":gray-badge[no longer on the service]" in m.value and "💾 kept" in m.value for m in at.markdown)
        videos = [v.proto.url for v in at.get("video")]
        assert len(videos) == 1 and "/media/" in videos[0]  # the kept copy, served by Streamlit
        alone = open_review(task=task_id)
        assert cards(alone) == [task_id] and alone.feedback(key=f"review.stars.{task_id}").value == 4
        assert "480p · 16:9 · 4 s" in " ".join(c.value for c in alone.caption)
    finally:
        svc.stop()
    # With the service gone altogether, the kept result is still there to review.
    at = open_review()
    assert cards(at) == [task_id]
    assert any("Could not list" in w.value for w in at.warning)
