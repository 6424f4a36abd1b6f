"""`dailies reel`: a task's video downloaded from a live service and another's kept copy from the dashboard's
journal, in the order given, in one MP4 with slates; the journal's version and status on the slate."""

from __future__ import annotations

import json

import av
import pytest

from dailies.cli.reel import JOURNAL_NAME, short_title, status_label, version_label
from dailies.journal import Journal, Scope
from dailies.spec.results import VIDEO_NAME
from tests.support.live_service import start_live_service

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


ANA, BEN = "reel-key-ana", "reel-key-ben"  # of projects alpha and beta


@pytest.fixture(scope="module")
def two_projects(tmp_path_factory):
    live = start_live_service(tmp_path_factory.mktemp("cli-reel-projects"), workers=0,
                              api_keys={ANA: "alpha", BEN: "beta"})
    yield live
    live.stop()


@pytest.fixture
def no_env(monkeypatch):
    for name in ("ARK_BASE_URL", "ARK_API_KEY", "DAILIES_DATABASE_URL", "DAILIES_STORAGE", "DAILIES_DASHBOARD_TEAM"):
        monkeypatch.delenv(name, raising=False)


def _keep(journal: Journal, task_id: str, colour: tuple[int, int, int], status: str | None = None) -> None:
    kept = journal.keep_path(task_id, VIDEO_NAME)
    kept.parent.mkdir(parents=True, exist_ok=True)
    make_clip(kept, (320, 180), 24, 1.0, colour)
    journal.mark_kept(task_id, VIDEO_NAME, kept)
    if status is not None:
        journal.set_status(task_id, status)


def test_reel_with_one_projects_key_refuses_another_projects_kept_copy(two_projects, no_env, tmp_path):
    """Audit F5: Ana's key (alpha) must not put beta's kept video, status and version in her reel; each
    key reads its own project's journal scope, as the dashboard does."""
    base_url = two_projects.base_url
    ids = {}
    for key in (ANA, BEN):
        code, out, err = run("create", "--base-url", base_url, "--api-key", key, "--prompt", "a harbour at dawn",
                             "--json")
        assert code == 0, err
        ids[key] = json.loads(out)["id"]  # queued (no render slots): the service has it, for its project only
    alpha_task, beta_task = ids[ANA], ids[BEN]

    data_dir = tmp_path / "data"
    journal = Journal(data_dir / JOURNAL_NAME)
    _keep(journal.scoped(Scope.of_project(base_url, "alpha")), alpha_task, (200, 30, 30))
    _keep(journal.scoped(Scope.of_project(base_url, "beta")), beta_task, (30, 30, 200), status="approved")
    journal.close()

    def reel(key: str, *tasks: str, name: str = "reel.mp4") -> tuple[int, str, str]:
        return run("reel", "--base-url", base_url, "--api-key", key, *(a for t in tasks for a in ("--task", t)),
                   "-o", str(tmp_path / name), "--size", "320x180", "--slates", "--data-dir", str(data_dir),
                   "--quiet", "--json")

    code, out, err = reel(ANA, alpha_task, beta_task)
    assert code == 1, (out, err)
    refusal = [line for line in err.splitlines() if beta_task in line]
    assert len(refusal) == 1 and "not one this key can read" in refusal[0] and "404" in refusal[0], err
    assert "the kept copy" not in refusal[0]
    assert not (tmp_path / "reel.mp4").exists() and out == ""

    # Each key's own project's kept copy is its reel's, without a download.
    code, out, err = reel(ANA, alpha_task, name="alpha.mp4")
    assert code == 0, err
    assert f"{alpha_task}: the kept copy" in err and json.loads(out)["seconds"] == 2.5  # slate + shot
    code, out, err = reel(BEN, beta_task, name="beta.mp4")
    assert code == 0, err
    assert f"{beta_task}: the kept copy" in err and json.loads(out)["seconds"] == 2.5  # slate + shot


def test_reel_without_a_service_reads_the_keys_own_journal(no_env, tmp_path):
    """A service that does not answer names no project: the key's own scope's kept copies still make a
    reel; another key's are refused, naming the task; without a key no scope is the reel's."""
    from tests.support.servers import free_port

    base_url = f"http://127.0.0.1:{free_port()}/api/v3"  # nothing listens there
    mine, theirs = "cgt-20261125000000-mine1", "cgt-20261125000000-other"
    data_dir = tmp_path / "data"
    journal = Journal(data_dir / JOURNAL_NAME)
    _keep(journal.scoped(Scope.of(base_url, ANA)), mine, (30, 200, 30))
    _keep(journal.scoped(Scope.of(base_url, BEN)), theirs, (30, 30, 200))
    journal.close()

    common = ("--base-url", base_url, "--size", "320x180", "--data-dir", str(data_dir), "--quiet")
    code, out, err = run("reel", "--api-key", ANA, "--task", mine, "-o", str(tmp_path / "mine.mp4"), *common)
    assert code == 0, err
    assert "does not say which project this key is in" in err and f"{mine}: the kept copy" in err
    code, _, err = run("reel", "--api-key", ANA, "--task", theirs, "-o", str(tmp_path / "theirs.mp4"), *common)
    assert code == 1 and f"dailies reel: task {theirs}: this key's journal keeps no copy of it" in err, err
    assert not (tmp_path / "theirs.mp4").exists()
    code, _, err = run("reel", "--task", mine, "-o", str(tmp_path / "nokey.mp4"), *common)
    assert code == 2 and "no API key" in err
