"""`dailies export`: the approved, kept versions of a selection as OTIO / EDL / FCPXML, read as the
key's journal (a service that does not answer names no project: the key's own scope)."""

from __future__ import annotations

import json

import opentimelineio as otio
import pytest

from dailies.cli.reel import JOURNAL_NAME
from dailies.journal import Journal, Scope
from dailies.journal.statuses import APPROVED, REJECTED
from dailies.spec.results import VIDEO_NAME
from tests.support.servers import free_port

from .running import run

ANA, BEN = "key-ana-export-1", "key-ben-export-2"


@pytest.fixture
def no_env(monkeypatch):
    for name in ("ARK_BASE_URL", "ARK_API_KEY", "DAILIES_DATABASE_URL", "DAILIES_STORAGE", "DAILIES_DASHBOARD_TEAM"):
        monkeypatch.delenv(name, raising=False)


def _version(view, task_id: str, status: str, *, kept: bool = True) -> None:
    view.save_records([{"id": task_id, "status": "succeeded", "duration": 5, "framespersecond": 24,
                        "created_at": 1, "updated_at": 2, "model": "m"}])
    view.set_status(task_id, status)
    if kept:
        path = view.keep_path(task_id, VIDEO_NAME)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"not played here")  # the hand-off names the file; it does not open it
        view.mark_kept(task_id, VIDEO_NAME, path)


@pytest.fixture
def reviewed(tmp_path, no_env):
    base_url = f"http://127.0.0.1:{free_port()}/api/v3"  # nothing listens there
    data_dir = tmp_path / "data"
    journal = Journal(data_dir / JOURNAL_NAME)
    ana = journal.scoped(Scope.of(base_url, ANA, author="Ana"))
    ids = ["cgt-20261128000000-shot1", "cgt-20261128000000-shot2", "cgt-20261128000000-shot3",
           "cgt-20261128000000-shot4"]
    _version(ana, ids[0], APPROVED)
    _version(ana, ids[1], REJECTED)
    _version(ana, ids[2], APPROVED, kept=False)
    _version(ana, ids[3], APPROVED)
    ana.add_comment(ids[0], "the hand flickers", timecode=1.04, frame=25, out_frame=31,
                    drawing=[{"kind": "arrow", "x1": 0.9, "y1": 0.9, "x2": 0.5, "y2": 0.5}])
    ana.add_comment(ids[3], "hold here", timecode=2.0)
    ben = journal.scoped(Scope.of(base_url, BEN, author="Ben"))
    _version(ben, "cgt-20261128000000-bens1", APPROVED)
    journal.close()
    return base_url, data_dir, ids


def test_export_writes_the_approved_kept_cut_in_each_format(reviewed, tmp_path):
    base_url, data_dir, ids = reviewed
    common = ["--base-url", base_url, "--api-key", ANA, "--data-dir", str(data_dir)]
    tasks = [arg for tid in ids for arg in ("--task", tid)]
    code, out, err = run("export", *tasks, "-o", str(tmp_path / "cut.otio"), "--json", *common)
    assert code == 0, err
    said = json.loads(out)
    assert said["clips"] == [ids[0], ids[3]] and said["markers"] == 2 and said["format"] == "otio"
    assert f"left out {ids[1]}: not approved" in err and f"left out {ids[2]}: no kept copy" in err
    cut = otio.adapters.read_from_file(str(tmp_path / "cut.otio"))
    clips = list(cut.find_clips())
    assert [c.metadata["dailies"]["task_id"] for c in clips] == [ids[0], ids[3]]
    media = clips[0].media_reference.target_url  # the kept copy, as a file URL
    assert media.startswith("file:///") and ids[0] in media and media.endswith(VIDEO_NAME)
    assert [(m.name, m.marked_range.start_time.value, m.marked_range.duration.value) for m in clips[0].markers] == [
        ("Ana: the hand flickers", 25, 7)]
    assert [m.marked_range.start_time.value for m in clips[1].markers] == [48]  # 2.0 s at 24 fps

    code, out, err = run("export", *tasks, "-o", str(tmp_path / "cut.edl"), *common)
    assert code == 0 and "edl: 2 clips, 2 markers" in out, err
    edl = otio.adapters.read_from_file(str(tmp_path / "cut.edl"), rate=24)
    assert len(list(edl.find_clips())) == 2
    code, out, err = run("export", *tasks, "-o", str(tmp_path / "cut.xml"), "--format", "fcpxml", *common)
    assert code == 0, err
    assert (tmp_path / "cut.xml").read_text().count("<marker ") == 2


def test_export_refuses_what_it_cannot_do_and_writes_nothing(reviewed, tmp_path):
    base_url, data_dir, ids = reviewed
    common = ["--base-url", base_url, "--data-dir", str(data_dir)]
    code, _, err = run("export", "--task", ids[0], "-o", str(tmp_path / "cut.mov"), "--api-key", ANA, *common)
    assert code == 2 and "end it in .otio, .edl or .fcpxml" in err
    # Another key's approved, kept version is not this key's to hand off.
    code, _, err = run("export", "--task", "cgt-20261128000000-bens1", "-o", str(tmp_path / "bens.otio"),
                       "--api-key", ANA, *common)
    assert code == 1 and "no shot to hand off" in err and not (tmp_path / "bens.otio").exists()
    code, _, err = run("export", "--task", ids[0], "-o", str(tmp_path / "nokey.otio"), *common)
    assert code == 2 and "no API key" in err
    code, _, err = run("export", "--task", ids[0], "-o", str(tmp_path / "none.otio"), "--api-key", ANA,
                       "--base-url", base_url, "--data-dir", str(tmp_path / "empty"))
    assert code == 2 and "no journal" in err


def test_export_with_media_dir_packages_the_clips_beside_the_timeline(reviewed, tmp_path):
    base_url, data_dir, ids = reviewed
    common = ["--base-url", base_url, "--api-key", ANA, "--data-dir", str(data_dir)]
    tasks = [arg for tid in ids for arg in ("--task", tid)]
    package = tmp_path / "for-the-editor"
    package.mkdir()
    code, out, err = run("export", *tasks, "-o", str(package / "cut.otio"), "--media-dir", str(package / "media"),
                         *common)
    assert code == 0, err
    copies = sorted(p.name for p in (package / "media").iterdir())
    assert copies == [f"001-{ids[0]}.mp4", f"002-{ids[3]}.mp4"]  # in the cut's order
    assert (package / "media" / copies[0]).read_bytes() == b"not played here"
    # The timeline names its clips relative to its own folder: the folder moves whole to the editor.
    moved = tmp_path / "on-the-editors-disk"
    package.rename(moved)
    cut = otio.adapters.read_from_file(str(moved / "cut.otio"))
    urls = [c.media_reference.target_url for c in cut.find_clips()]
    assert urls == [f"media/{name}" for name in copies]
    assert all((moved / url).read_bytes() == b"not played here" for url in urls)
    # FCPXML takes URLs only: the copies' file URLs.
    code, _, err = run("export", *tasks, "-o", str(tmp_path / "cut.fcpxml"), "--media-dir", str(tmp_path / "m"),
                       *common)
    assert code == 0, err
    assert (tmp_path / "m" / copies[0]).as_uri() in (tmp_path / "cut.fcpxml").read_text()


class _Bucket:
    def __init__(self, answer: bytes | Exception) -> None:
        self.answer = answer

    def read(self, location: str) -> bytes:
        if isinstance(self.answer, Exception):
            raise self.answer
        return self.answer


def test_media_dir_fetches_bucket_copies_and_names_the_shot_that_cannot_be(tmp_path):
    from dailies.cli.export import _copy_media
    from dailies.cli.tasks import CommandRefused
    from dailies.edit_handoff import HandoffShot
    from dailies.journal import KeptFile

    shot = HandoffShot("cgt-20261128000000-buck1", "shot", "https://bucket.example/presigned", 120, 24)
    kept = {shot.task_id: KeptFile(shot.task_id, VIDEO_NAME, None, 5, 1.0, location="s3://kept/a.mp4",
                                   bucket=_Bucket(b"from the bucket"))}
    [moved] = _copy_media([shot], kept, tmp_path / "media", tmp_path / "cut.otio", "otio")
    assert moved.media == f"media/001-{shot.task_id}.mp4"
    assert (tmp_path / moved.media).read_bytes() == b"from the bucket"
    kept[shot.task_id] = KeptFile(shot.task_id, VIDEO_NAME, None, 5, 1.0, location="s3://kept/a.mp4",
                                  bucket=_Bucket(OSError("connection refused")))
    with pytest.raises(CommandRefused, match=f"{shot.task_id}: its kept copy could not be copied.*connection refused"):
        _copy_media([shot], kept, tmp_path / "media2", tmp_path / "cut.otio", "otio")
