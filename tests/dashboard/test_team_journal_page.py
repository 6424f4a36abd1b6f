"""A dashboard given a database URL and a bucket (DAILIES_DATABASE_URL, DAILIES_STORAGE) shows what another
machine's dashboard journaled: the Tasks page of a task deleted from the service plays the copy the other
machine kept, from its presigned URL, with the record and status the other machine wrote."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from components.common import data
from dailies.client import Client
from dailies.journal import DATABASE_ENV, STORAGE_ENV, Journal, Scope
from dailies.journal.statuses import APPROVED
from dailies.spec.results import VIDEO_NAME

from ..conftest import open_backend

PAGE = Path(__file__).resolve().parents[2] / "dashboard" / "views" / "tasks.py"


@pytest.fixture
def team_backend(request):
    with open_backend(request, "pg+s3") as opened:
        yield opened


def test_a_copy_kept_on_another_machine_plays_here(dashboard_env, team_backend, tmp_path, monkeypatch):
    monkeypatch.setenv(DATABASE_ENV, team_backend.database_url)
    monkeypatch.setenv(STORAGE_ENV, team_backend.storage)
    with Client(base_url=dashboard_env.base_url, api_key=dashboard_env.api_key) as client:
        task_id = client.tasks.create({"model": "doubao-seedance-2-0-260128", "resolution": "480p", "duration": 4,
                                       "content": [{"type": "text", "text": "kept on machine A"}]}).id
        record = client.wait(task_id, timeout=120, poll_interval=0.1)
        # Machine A (its own data directory) journals the task, a status and a kept copy.
        machine_a = Journal(tmp_path / "machine-a" / "journal.sqlite3")
        mine = machine_a.scoped(Scope.of(dashboard_env.base_url, dashboard_env.api_key))
        data.remember(mine, [record])
        mine.set_status(task_id, APPROVED)
        mine.add_comment(task_id, "from machine A")
        copy = mine.keep_path(task_id, VIDEO_NAME)
        copy.parent.mkdir(parents=True)
        client.download(record.content.video_url, copy)
        kept = mine.mark_kept(task_id, VIDEO_NAME, copy)
        machine_a.close()
        client.tasks.delete(task_id)

    # This dashboard (DAILIES_DATA_DIR of the test: another machine) opens the task.
    at = AppTest.from_file(str(PAGE), default_timeout=30)
    at.query_params["task"] = task_id
    at.run()
    assert not at.exception
    videos = at.get("video")
    assert len(videos) == 1 and videos[0].proto.url == kept.media(time.time())  # the bucket's presigned URL
    assert "X-Amz-Signature=" in videos[0].proto.url
    assert any("kept copy" in c.value for c in at.caption)
    assert "| Resolution · ratio | 480p · 16:9 |" in "\n".join(m.value for m in at.markdown)  # A's record
