"""Every action of the task detail (AppTest, live service): cancel, delete, keep (and the kept copy
outliving the task), automatic keeping, and each hand-off to Compose.

Compose is another page: run alone, the Tasks page has no router to switch with, so the hand-off
stays in `st.session_state["compose.prefill"]` where these tests read it; one test runs the whole
app and checks that the switch to Compose happens.
"""

from __future__ import annotations

import os
import re
import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from components.common import handoff, keep
from dailies.client import Client, NotFoundError
from dailies.journal import Journal, Scope, Submission
from tests.support.live_service import start_live_service
from tests.support.waiting import wait_past_second

ROOT = Path(__file__).resolve().parents[2]
PAGE = ROOT / "dashboard" / "views" / "tasks.py"
APP = ROOT / "dashboard" / "app.py"
V2 = "doubao-seedance-2-0-260128"
V15 = "doubao-seedance-1-5-pro-251215"


def small(prompt: str, model: str = V2, **fields) -> dict:
    return {"model": model, "content": [{"type": "text", "text": prompt}], "resolution": "480p", "duration": 4,
            **fields}


@pytest.fixture
def client(dashboard_env):
    with Client(base_url=dashboard_env.base_url, api_key=dashboard_env.api_key) as c:
        yield c


def finished(client: Client, body: dict) -> str:
    task_id = client.tasks.create(body).id
    client.wait(task_id, timeout=120, poll_interval=0.1)
    return task_id


def journal() -> Journal:
    return Journal(Path(os.environ["DAILIES_DATA_DIR"]) / "dashboard" / "journal.sqlite3")


def detail(task_id: str) -> AppTest:
    at = AppTest.from_file(str(PAGE), default_timeout=30)
    at.query_params["task"] = task_id
    return at.run()


def prefill(at: AppTest) -> dict:
    return at.session_state[handoff.PREFILL_KEY]


# ---------- cancel and delete ----------


def test_cancel_a_queued_task(dashboard_env, tmp_path, monkeypatch):
    idle = start_live_service(tmp_path / "idle", workers=0)  # no worker: the task stays queued
    try:
        monkeypatch.setenv("ARK_BASE_URL", idle.base_url)
        with Client(base_url=idle.base_url, api_key=idle.api_key) as c:
            task_id = c.tasks.create(small("to be cancelled")).id
            at = detail(task_id)
            assert not at.exception
            assert "tasks.detail.confirm_delete" not in {b.key for b in at.button}
            assert any("Execution deadline in 47 h" in m.value for m in at.markdown)
            # Listed from the next second on: the click's run is the first to see a queued row, so the
            # table turns active in that very run, which must not swallow the click.
            wait_past_second(time.time())
            at.button(key="tasks.detail.confirm_cancel").click().run()
            assert not at.exception
            assert c.tasks.get(task_id).status == "cancelled"
            assert any(f"Cancelled {task_id}" in s.value for s in at.success)
            # A cancelled task offers neither cancel nor delete, and says why.
            assert not {"tasks.detail.confirm_cancel", "tasks.detail.confirm_delete"} & {b.key for b in at.button}
            assert any("cancelled task's record stays" in c.value for c in at.caption)
    finally:
        idle.stop()


def stale_cancel_page(base_url: str, api_key: str, record_json: str, data_dir: str) -> None:
    """The detail's cancel, offered for a record read while the task was queued."""
    from pathlib import Path

    from components.tasks import actions as task_actions
    from dailies.client import Client
    from dailies.journal import Journal
    from dailies.spec.models import TaskRecord

    record = TaskRecord.model_validate_json(record_json)
    with Client(base_url=base_url, api_key=api_key) as client:
        task_actions.cancel_or_delete(client, Journal(Path(data_dir) / "journal.sqlite3"), record, "stale")


def test_a_cancel_confirmed_after_the_task_finished_deletes_nothing(dashboard_env, tmp_path):
    """The popover offers to cancel the queued task shown; the task runs and succeeds meanwhile; "Yes,
    cancel it" sent the spec's DELETE, which deleted the finished task and its result."""
    idle = start_live_service(tmp_path / "idle", workers=0)
    try:
        with Client(base_url=idle.base_url, api_key=idle.api_key) as c:
            task_id = c.tasks.create(small("finishes before the click")).id
            queued = c.tasks.get(task_id)
            at = AppTest.from_function(stale_cancel_page, args=(idle.base_url, idle.api_key, queued.model_dump_json(),
                                                               str(tmp_path)), default_timeout=30).run()
            store = idle.app.state.services.store
            assert store.claim_next("w1", time.time()).id == task_id
            store.fail(task_id, "w1", time.time(), "InternalServiceError", "ended before the click")
            at.button(key="stale.confirm_cancel").click().run()
            assert not at.exception
            assert c.tasks.get(task_id).status == "failed"  # still there
            assert any("could not be cancelled" in w.value and "Nothing was deleted" in w.value for w in at.warning)
    finally:
        idle.stop()


def test_delete_a_terminal_task(dashboard_env, client, keep_on_request):
    task_id = finished(client, small("to be deleted"))
    at = detail(task_id)
    assert any("Nothing is kept locally" in w.value for w in at.warning)
    at.button(key="tasks.detail.confirm_delete").click().run()
    assert not at.exception
    with pytest.raises(NotFoundError):
        client.tasks.get(task_id)
    assert any(f"Deleted {task_id}" in s.value for s in at.success)
    # The detail now stands on the journal's last record: no video left, and it says why.
    assert any("no longer has this task" in i.value for i in at.info)
    assert not at.get("video")


# ---------- keep ----------


def test_keep_downloads_into_the_archive_and_survives_deleting_the_task(dashboard_env, client, keep_on_request):
    task_id = finished(client, small("keep me", return_last_frame=True))
    at = detail(task_id)
    at.button(key="tasks.detail.keep").click().run()
    assert not at.exception
    kept = journal().kept(task_id)
    assert set(kept) == {keep.VIDEO_NAME, keep.LAST_FRAME_NAME}
    video = kept[keep.VIDEO_NAME].path
    # In the archive folder of the project that kept it (the service says the key is in "tests").
    assert video == journal().scoped(Scope.of_project(client.base_url, "tests")).keep_path(
        task_id, keep.VIDEO_NAME)
    assert video.read_bytes()[4:8] == b"ftyp"  # an MP4
    assert any("Kept" in s.value for s in at.success)
    assert at.get("progress"), "the download showed a progress bar"

    client.tasks.delete(task_id)
    at = detail(task_id)
    assert not at.exception
    videos = at.get("video")
    assert len(videos) == 1 and "/media/" in videos[0].proto.url  # served from the kept file, not the service
    assert any("kept copy" in c.value for c in at.caption)
    frames = [img for img in at.image if "Last frame (kept copy)" in img.captions]
    assert len(frames) == 1
    table = "\n".join(m.value for m in at.markdown)
    assert "| Resolution · ratio | 480p · 16:9 |" in table  # the record, from the journal


def test_keep_is_not_offered_once_kept(dashboard_env, client, keep_on_request):
    task_id = finished(client, small("kept once"))
    at = detail(task_id)
    at.button(key="tasks.detail.keep").click().run()
    at = detail(task_id)
    assert "tasks.detail.keep" not in {b.key for b in at.button}
    assert any("Kept in the archive" in s.value for s in at.success)


def test_one_persons_local_dailies_keeps_what_succeeds_unless_told_otherwise(dashboard_env, client,
                                                                               keeping_by_default):
    """Issue 37: results vanished after 24 h unless someone thought of keeping them."""
    task_id = finished(client, small("kept by default"))
    wait_past_second(time.time())  # listed from the second after its creation
    at = AppTest.from_file(str(PAGE), default_timeout=30)
    at.run()
    at.text_area(key="tasks.task_ids").input(task_id).run()
    assert at.toggle(key=keep.AUTO_KEEP_KEY).value is True
    assert keep.VIDEO_NAME in journal().kept(task_id)
    # The disk it takes, and where (one person's own machine).
    assert any(re.fullmatch(r"Kept copies: [\d,]+\.\d MB in .+", c.value) for c in at.caption)
    at.toggle(key=keep.AUTO_KEEP_KEY).set_value(False).run()
    assert journal().preference(keep.AUTO_KEEP_PREFERENCE) is False
    later = finished(client, small("not kept once told"))
    wait_past_second(time.time())
    at = AppTest.from_file(str(PAGE), default_timeout=30).run()
    at.text_area(key="tasks.task_ids").input(later).run()
    assert at.toggle(key=keep.AUTO_KEEP_KEY).value is False and journal().kept(later) == {}


def test_keep_every_result_automatically(dashboard_env, client, keep_on_request):
    task_id = finished(client, small("auto kept"))
    wait_past_second(time.time())  # listed from the second after its creation
    at = AppTest.from_file(str(PAGE), default_timeout=30)
    at.run()
    at.text_area(key="tasks.task_ids").input(task_id).run()
    assert journal().kept(task_id) == {}
    at.toggle(key=keep.AUTO_KEEP_KEY).set_value(True).run()
    assert not at.exception
    assert journal().preference(keep.AUTO_KEEP_PREFERENCE) is True
    assert keep.VIDEO_NAME in journal().kept(task_id)
    frame = next(d for d in at.dataframe if d.key == "tasks.table").value
    assert frame.loc[0, "kept"] == "💾"
    # The preference outlives the session.
    at = AppTest.from_file(str(PAGE), default_timeout=30).run()
    assert at.toggle(key=keep.AUTO_KEEP_KEY).value is True


# ---------- hand-offs to Compose ----------


def test_open_in_compose_with_the_same_inputs(dashboard_env, client):
    body = small("rerun me", ratio="9:16")
    task_id = finished(client, body)
    journal().record_submission(Submission(task_id=task_id, batch_id=None, submitted_at=time.time(),
                                           base_url=dashboard_env.base_url, model=V2, mode="text",
                                           prompt="rerun me", request=body))
    at = detail(task_id)
    assert any("rerun me" in m.value for m in at.markdown)
    at.button(key="tasks.detail.compose").click().run()
    assert not at.exception
    assert prefill(at) == {"request": body, "note": f"Same inputs as task {task_id}",
                           "lineage": {"parent": task_id, "how": None}}  # the next submission joins its shot
    assert any("Sent to Compose" in s.value for s in at.success)


def test_a_task_made_elsewhere_opens_in_compose_from_the_services_stored_request(dashboard_env, client):
    task_id = finished(client, small("made elsewhere", ratio="9:16"))
    at = detail(task_id)
    at.button(key="tasks.detail.compose").click().run()
    assert not at.exception
    sent = prefill(at)
    assert sent["request"]["content"] == [{"type": "text", "text": "made elsewhere"}]
    assert sent["request"]["ratio"] == "9:16" and sent["request"]["model"] == small("x")["model"]
    assert sent["lineage"] == {"parent": task_id, "how": None}


def test_open_in_compose_explains_when_the_inputs_are_unknown(dashboard_env, client):
    """An inline image comes back from the service as a thumbnail only: not enough to send again."""
    import base64
    import io

    from PIL import Image

    png = io.BytesIO()
    Image.new("RGB", (640, 360), (10, 20, 30)).save(png, "PNG")
    image = {"type": "image_url", "role": "first_frame",
             "image_url": {"url": "data:image/png;base64," + base64.b64encode(png.getvalue()).decode()}}
    body = small("made elsewhere")
    task_id = finished(client, {**body, "content": [*body["content"], image]})
    at = detail(task_id)
    assert at.button(key="tasks.detail.compose").disabled
    assert any("Its inputs are not known whole" in c.value for c in at.caption)


def test_make_the_final_from_a_draft(dashboard_env, client):
    draft_id = finished(client, {"model": V15, "content": [{"type": "text", "text": "draft"}], "draft": True,
                                 "duration": 4})
    at = detail(draft_id)
    at.button(key="tasks.detail.final").click().run()
    assert prefill(at)["request"] == {"model": V15, "content": [{"type": "draft_task", "draft_task": {"id": draft_id}}]}
    assert prefill(at)["lineage"] == {"parent": draft_id, "how": "final"}
    # A normal (non-draft) task offers no final.
    task_id = finished(client, small("not a draft"))
    assert "tasks.detail.final" not in {b.key for b in detail(task_id).button}


def test_use_the_video_or_the_last_frame_in_a_new_task(dashboard_env, client):
    task_id = finished(client, small("chain me", return_last_frame=True))
    record = client.tasks.get(task_id)
    at = detail(task_id)
    at.button(key="tasks.detail.use_video").click().run()
    assert prefill(at)["input"] == {"url": record.content.video_url, "kind": "video_url", "role": "reference_video"}
    at = detail(task_id)
    at.button(key="tasks.detail.use_frame").click().run()
    assert prefill(at)["input"] == {"url": record.content.last_frame_url, "kind": "image_url", "role": "first_frame"}
    assert prefill(at)["lineage"] == {"parent": task_id, "how": "chain"}


def test_in_the_whole_app_the_hand_off_switches_to_compose(dashboard_env, client):
    task_id = finished(client, small("switch"))
    at = AppTest.from_file(str(APP), default_timeout=30)
    at.query_params["task"] = task_id
    at.run()
    at.switch_page("views/tasks.py").run()
    assert [h.value for h in at.header] == ["Tasks"]
    at.button(key="tasks.detail.use_video").click().run()
    # The router switched pages: the Tasks page is gone (Compose reads and clears the hand-off itself).
    assert "Tasks" not in [h.value for h in at.header]
    assert not any("Sent to Compose" in s.value for s in at.success)
