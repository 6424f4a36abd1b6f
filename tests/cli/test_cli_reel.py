"""`dailies reel`: a task's video downloaded from a live service and another's kept copy from the dashboard's
journal, in the order given, in one MP4 with slates; the journal's version and status on the slate."""

from __future__ import annotations

import json

import av
import pytest

from dailies.cli_reel import JOURNAL_NAME, short_title, status_label, version_label
from dailies.journal import Journal
from dailies.spec.results import VIDEO_NAME

from ..live_service import start_live_service
from ..reel.clips import make_clip
from .running import run

KEPT_ID = "cgt-20261125000000-kept1"


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    live = start_live_service(tmp_path_factory.mktemp("cli-reel"), workers=1)
    yield live
    live.stop()


@pytest.fixture
def ark_env(monkeypatch, service):
    monkeypatch.setenv("ARK_BASE_URL", service.base_url)
    monkeypatch.setenv("ARK_API_KEY", service.api_key)
    monkeypatch.delenv("DAILIES_DATABASE_URL", raising=False)
    monkeypatch.delenv("DAILIES_STORAGE", raising=False)
    return service


def test_reel_of_a_downloaded_task_and_a_kept_copy(ark_env, tmp_path):
    code, out, err = run("create", "--prompt", "a lighthouse in the fog", "--resolution", "480p", "--duration", "4",
                         "--wait", "--json")
    assert code == 0, err
    task = json.loads(out)
    assert task["status"] == "succeeded"

    data_dir = tmp_path / "data"
    journal = Journal(data_dir / JOURNAL_NAME)
    kept = journal.keep_path(KEPT_ID, VIDEO_NAME)
    kept.parent.mkdir(parents=True)
    make_clip(kept, (240, 320), 30, 1.5, (30, 200, 30))  # portrait, 30 fps, no sound
    journal.mark_kept(KEPT_ID, VIDEO_NAME, kept)
    journal.save_records([task])  # seen by the dashboard, as its Review page saves what it lists
    journal.link_version(KEPT_ID, task["id"], "rerun")
    journal.set_status(KEPT_ID, "approved")
    assert version_label(journal, KEPT_ID) == "v2" and version_label(journal, task["id"]) == "v1"
    assert status_label(journal, KEPT_ID) == "Approved" and status_label(journal, task["id"]) == "Pending review"
    journal.close()

    out_path = tmp_path / "reel.mp4"
    code, out, err = run("reel", "--task", task["id"], "--task", KEPT_ID, "-o", str(out_path), "--slates",
                         "--burn-in", "--size", "320x180", "--fps", "24", "--data-dir", str(data_dir))
    assert code == 0, err
    assert out.strip() == str(out_path)
    assert f"{task['id']}: downloading" in err and f"{KEPT_ID}: the kept copy" in err
    assert "Rendering the reel: 100%" in err
    with av.open(str(out_path)) as container:
        sizes = {(f.width, f.height) for f in container.decode(video=0)}
        frames = container.streams.video[0].frames
    assert sizes == {(320, 180)}
    assert abs(frames / 24 - (4 + 1.5 + 2 * 1.5)) <= 1 / 24
    assert short_title(KEPT_ID) == "…000000-kept1"

    code, out, err = run("reel", "--task", KEPT_ID, "-o", str(tmp_path / "one.mp4"), "--size", "320x180",
                         "--data-dir", str(data_dir), "--quiet", "--json")
    assert code == 0, err
    assert "Rendering" not in err
    assert json.loads(out) == {"output": str(tmp_path / "one.mp4"), "tasks": [KEPT_ID], "seconds": 1.5}


def test_reel_names_a_task_it_cannot_find(ark_env, tmp_path):
    code, _, err = run("reel", "--task", "cgt-20261125000000-nope1", "-o", str(tmp_path / "r.mp4"),
                       "--data-dir", str(tmp_path))
    assert code == 1 and "cgt-20261125000000-nope1" in err
    assert not (tmp_path / "r.mp4").exists()
