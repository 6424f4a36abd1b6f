"""Two people on one team dashboard (AppTest), each with their own key, against one service whose keys
are in two projects: neither session sees the other's tasks, charts, prompts, verdicts, stars,
notes, batches or kept videos, although both run in one process (one set of Streamlit caches) and
write one journal file.

Each AppTest run is a fresh session, as a new browser tab would be; the key is put where the
Settings page puts it. The keys share their first 13 characters, as keys often do.
"""

from __future__ import annotations

import io
import re
import time
from pathlib import Path

import pyarrow as pa
import pytest
from streamlit.testing.v1 import AppTest

from components.common import connection, keep
from components.tasks import table as task_table
from components.tasks.state_keys import VIEW_KEY
from dailies.client import Client
from dailies.journal import Journal, Scope, Submission
from tests.support.live_service import start_live_service, wait_until_listed

from ..support.legacy_reviews import write_review

VIEWS = Path(__file__).resolve().parents[2] / "dashboard" / "views"
V2 = "doubao-seedance-2-0-260128"
V15 = "doubao-seedance-1-5-pro-251215"
KEY_A = "team-key-0001-alpha-7f3a9c"
KEY_B = "team-key-0002-bravo-41d2e8"
SECRET_PROMPT = "alpha's unreleased trailer shot"
SECRET_NOTES = "alpha: keep the wide shot"
SECRET_ENDPOINT = "ep-alpha-private-endpoint"


def small(prompt: str, model: str, **fields) -> dict:
    return {"model": model, "content": [{"type": "text", "text": prompt}], "resolution": "480p", "duration": 4,
            **fields}


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    svc = start_live_service(tmp_path_factory.mktemp("two-projects"), workers=1,
                             api_keys={KEY_A: "alpha", KEY_B: "bravo"})
    yield svc
    svc.stop()


@pytest.fixture(scope="module")
def tasks(service) -> dict[str, list[str]]:
    """Project alpha: two succeeded 2.0 tasks. Project bravo: one succeeded 1.5 Pro task."""
    made: dict[str, list[str]] = {}
    for key, bodies in ((KEY_A, [small("alpha one", V2), small("alpha two", V2, return_last_frame=True)]),
                        (KEY_B, [small("bravo one", V15)])):
        with Client(base_url=service.base_url, api_key=key) as client:
            ids = [client.tasks.create(body).id for body in bodies]
            for task_id in ids:
                client.wait(task_id, timeout=120, poll_interval=0.1)
        # The list window ends at the current second: every test here lists them, so wait until it does.
        wait_until_listed(service.base_url, key, set(ids))
        made[key] = ids
    return made


@pytest.fixture
def team_env(monkeypatch, tmp_path, service):
    """One team dashboard: the service's address, no key of its own (even with one in the environment)."""
    monkeypatch.setenv("ARK_BASE_URL", service.base_url)
    monkeypatch.setenv("ARK_API_KEY", KEY_A)  # ignored in team mode: nobody may act as it by default
    monkeypatch.setenv("DAILIES_DASHBOARD_TEAM", "1")
    monkeypatch.setenv("DAILIES_DATA_DIR", str(tmp_path / "dashboard-data"))
    return service


def session(page: str, key: str | None, **query: str) -> AppTest:
    at = AppTest.from_file(str(VIEWS / page), default_timeout=30)
    if key is not None:
        at.session_state[connection.API_KEY_KEY] = key  # as Settings leaves it after Save
    at.query_params.update(query)
    return at.run()


def no_errors(at: AppTest) -> None:
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]


def table_ids(at: AppTest) -> set[str]:
    found = [d for d in at.dataframe if d.key == task_table.TABLE_KEY]
    return set(found[0].value["id"]) if found else set()


def chart_models(at: AppTest) -> set[str]:
    """The models in the charts' data (the tokens-by-model chart carries one row per model)."""
    models: set[str] = set()
    for chart in at.get("vega_lite_chart") or at.get("arrow_vega_lite_chart"):
        for dataset in chart.proto.datasets:
            frame = pa.ipc.open_stream(io.BytesIO(dataset.data.data)).read_all().to_pandas()
            if "model" in frame:
                models |= set(frame["model"])
    return models


def charted_count(at: AppTest) -> str:
    return next(c.value for c in at.caption if "most recent task(s)" in c.value)


def as_read(markdown: str) -> str:
    """Markdown's text as a person reads it: typed text is escaped (components/common/markdown_text.py), and
    a search for what must not be shown must not miss it for a backslash."""
    return re.sub(r"\\([!-/:-@\[-`{-~])", r"\1", markdown).replace("\u2060", "").replace("\u00a0", " ")


def everything_shown(at: AppTest) -> str:
    """Every text the page shows or holds in a widget, to search for what must not be there."""
    parts = [as_read(str(e.value)) for kind in ("markdown", "caption", "info", "warning", "error", "success",
                                                "subheader")
             for e in getattr(at, kind)]
    parts += [str(w.value) for w in [*at.text_area, *at.text_input]]
    parts += [str(o) for box in [*at.selectbox, *at.multiselect] for o in box.options]
    return "\n".join(parts)


def test_tasks_and_charts_show_each_session_its_own_project_only(team_env, tasks):
    alpha = session("tasks.py", KEY_A)
    bravo = session("tasks.py", KEY_B)  # within the listing cache's life: the same query, another key
    for at in (alpha, bravo):
        no_errors(at)
    assert table_ids(alpha) == set(tasks[KEY_A])
    assert table_ids(bravo) == set(tasks[KEY_B])
    for at in (alpha, bravo):
        at.session_state[VIEW_KEY] = "📊 Charts"  # as a click on the tab leaves it
        at.run()
        no_errors(at)
    assert charted_count(alpha).startswith("The 2 most recent")
    assert charted_count(bravo).startswith("The 1 most recent")
    assert chart_models(alpha) == {V2}
    assert chart_models(bravo) == {V15}
    # And back: alpha's next runs, still inside the cache's life, are alpha's own again.
    alpha.run()
    assert chart_models(alpha) == {V2}
    alpha.session_state[VIEW_KEY] = "📋 Tasks"
    alpha.run()
    assert table_ids(alpha) == set(tasks[KEY_A])


def test_a_session_without_a_key_sees_nothing_and_is_asked_for_one(team_env, tasks):
    for page in ("tasks.py", "review.py"):
        at = session(page, None)
        assert not at.exception
        assert any("No API key yet. This dashboard is shared" in w.value for w in at.warning)
        assert not table_ids(at) and not at.get("video")


def review_players(at) -> list:
    return [e for e in at.get("bidi_component") if str(e.key).startswith("review.player.")]


def status_keys(at) -> list[str]:
    return [w.key for w in at.selectbox if str(w.key).startswith("review.status.")]


def test_journal_prompts_reviews_batches_and_kept_videos_stay_with_their_key(team_env, tasks):
    kept_id, other_id = tasks[KEY_A]
    # Alpha's session: its prompt and batch are journaled (as Compose journals a submission) ...
    alpha_journal = journal_of(team_env.base_url, KEY_A)
    batch = alpha_journal.new_batch(SECRET_PROMPT, "text")
    alpha_journal.record_submission(Submission(
        task_id=kept_id, batch_id=batch, submitted_at=time.time(), base_url=team_env.base_url,
        model=SECRET_ENDPOINT, mode="text", prompt=SECRET_PROMPT, request=small(SECRET_PROMPT, V2)))
    # ... it keeps a result, then reviews it on the Review page ...
    at = session("tasks.py", KEY_A, task=kept_id)
    at.button(key="tasks.detail.keep").click().run()
    no_errors(at)
    at = session("review.py", KEY_A)
    at.selectbox(key=f"review.status.{kept_id}").set_value("approved").run()
    at.feedback(key=f"review.stars.{kept_id}").set_value(4).run()
    at.text_area(key=f"review.comment.{kept_id}").input(SECRET_NOTES)
    at.button(key=f"review.post.{kept_id}").click().run()
    no_errors(at)
    # ... and deletes the task: from now on only the journal knows it.
    with Client(base_url=team_env.base_url, api_key=KEY_A) as client:
        client.tasks.delete(kept_id)

    # Alpha still sees all of it (so what bravo does not see is there to be seen).
    alpha = session("review.py", KEY_A)
    no_errors(alpha)
    assert status_keys(alpha) == [f"review.status.{other_id}", f"review.status.{kept_id}"]
    assert alpha.selectbox(key=f"review.status.{kept_id}").value == "approved"
    assert alpha.feedback(key=f"review.stars.{kept_id}").value == 4
    assert SECRET_PROMPT in everything_shown(alpha) and SECRET_NOTES in everything_shown(alpha)
    assert len(review_players(alpha)) == 2
    assert SECRET_ENDPOINT in session("tasks.py", KEY_A).selectbox(key="tasks.model").options

    # Bravo sees its own result only: no card, prompt, note, batch, video or model of alpha's.
    bravo = session("review.py", KEY_B)
    no_errors(bravo)
    assert status_keys(bravo) == [f"review.status.{tasks[KEY_B][0]}"]
    shown = everything_shown(bravo)
    assert SECRET_PROMPT not in shown and SECRET_NOTES not in shown and kept_id not in shown
    assert len(review_players(bravo)) == 1
    assert SECRET_ENDPOINT not in session("tasks.py", KEY_B).selectbox(key="tasks.model").options
    # Alpha's links, opened with bravo's key, find nothing: the service answers 404, and the journal's
    # saved record and kept copy of alpha's task are not bravo's to fall back on.
    for page in ("tasks.py", "review.py"):
        deep = session(page, KEY_B, task=kept_id)
        assert not deep.exception
        assert not deep.get("video") and not deep.get("bidi_component") and not status_keys(deep)
        assert any(f"No task {kept_id}" in e.value or f"No result {kept_id}" in e.value for e in deep.error)
        assert SECRET_PROMPT not in everything_shown(deep)


def test_an_automatic_keep_preference_is_per_key(team_env, tasks):
    at = session("tasks.py", KEY_A)
    at.toggle(key=keep.AUTO_KEEP_KEY).set_value(True).run()
    no_errors(at)
    assert session("tasks.py", KEY_A).toggle(key=keep.AUTO_KEEP_KEY).value is True
    assert session("tasks.py", KEY_B).toggle(key=keep.AUTO_KEEP_KEY).value is False


def test_rows_from_before_scopes_are_nobodys_on_a_team_dashboard(team_env, tasks):
    bravo_task = tasks[KEY_B][0]
    old = Journal(journal_path())  # the unscoped view writes as the journal did before scopes
    old.record_submission(Submission(
        task_id=bravo_task, batch_id=None, submitted_at=time.time(), base_url=team_env.base_url, model=V15,
        mode="text", prompt="a prompt from the old shared journal", request=small("x", V15)))
    write_review(old, bravo_task, verdict="rejected", notes="an old note")  # the previous release's
    bravo = session("review.py", KEY_B)
    no_errors(bravo)
    assert "old shared journal" not in everything_shown(bravo) and "an old note" not in everything_shown(bravo)
    assert bravo.selectbox(key=f"review.status.{bravo_task}").value == "pending"


def journal_path() -> Path:
    return connection.data_dir() / "dashboard" / "journal.sqlite3"


def journal_of(base_url: str, key: str) -> Journal:
    """The journal as the dashboard opens it for a session with this key: its project's (the service
    says which project a key is in)."""
    return Journal(journal_path()).scoped(Scope.of_project(base_url, {KEY_A: "alpha", KEY_B: "bravo"}[key]))
