"""The journal's scopes: each connection (base URL + key fingerprint) reads and writes its own rows and
files; rows from before scopes (a version 0 file) are migrated with the empty scope and seen only by
a view that asks for them; the unscoped view sees every scope."""

from __future__ import annotations

import json
import sqlite3
import time
from pathlib import Path

import pytest

from dailies.journal import Journal, Scope, Submission
from dailies.journal.schema import JOURNAL
from dailies.journal.statuses import APPROVED, PENDING, REJECTED
from dailies.service.db import migrate
from dailies.spec.media import encode_data_url

from ..support.legacy_reviews import legacy_review, legacy_reviews

BASE = "http://127.0.0.1:8000/api/v3"
KEY_A = "team-key-0001-alpha-7f3a9c"
KEY_B = "team-key-0002-bravo-41d2e8"
TASK = "cgt-20260101120000-abcde"


def submission(task_id: str, prompt: str, batch_id: str | None = None, request: dict | None = None) -> Submission:
    return Submission(task_id=task_id, batch_id=batch_id, submitted_at=time.time(), base_url=BASE,
                      model="doubao-seedance-2-0-260128", mode="text", prompt=prompt,
                      request=request or {"content": [{"type": "text", "text": prompt}]})


@pytest.fixture
def journal(tmp_path):
    j = Journal(tmp_path / "dashboard" / "journal.sqlite3")
    yield j
    j.close()


def kept_file(journal: Journal, task_id: str, content: bytes) -> Path:
    path = journal.keep_path(task_id, "video.mp4")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    journal.mark_kept(task_id, "video.mp4", path)
    return path


def test_two_keys_share_nothing(journal):
    a, b = journal.scoped(Scope.of(BASE, KEY_A)), journal.scoped(Scope.of(BASE, KEY_B))
    batch = a.new_batch("alpha batch", "text")
    a.record_submission(submission(TASK, "alpha prompt", batch))
    a.set_status(TASK, APPROVED)
    a.rate(TASK, 5)
    a.add_comment(TASK, "alpha notes")
    a.save_records([{"id": TASK, "status": "succeeded"}])
    kept_file(a, TASK, b"alpha video")
    a.set_preference("keep.auto", True)

    assert a.submission(TASK).prompt == "alpha prompt" and [s.task_id for s in a.batch(batch)] == [TASK]
    assert [x["size"] for x in a.batches()] == [1] and [c.body for c in a.comments([TASK])[TASK]] == ["alpha notes"]
    assert a.status_of(TASK) == APPROVED and list(a.ratings([TASK])[TASK].values()) == [5]
    assert a.record(TASK) and set(a.kept(TASK)) == {"video.mp4"} and a.preference("keep.auto") is True
    assert a.submitted_models() == [a.submission(TASK).model]

    assert b.submission(TASK) is None and b.submissions([TASK]) == {} and b.submitted_models() == []
    assert b.batches() == [] and b.batch(batch) == []
    assert b.status_of(TASK) == PENDING and b.statuses([TASK]) == {} and b.status_history(TASK) == []
    assert b.ratings([TASK]) == {} and b.comments([TASK]) == {}
    assert b.record(TASK) is None and b.kept(TASK) == {} and b.all_kept() == []
    assert b.preference("keep.auto", False) is False


def test_two_keys_of_one_project_review_and_keep_one_task_apart(journal):
    """Both keys see the task on the service; each has its own status, notes and kept copy."""
    a, b = journal.scoped(Scope.of(BASE, KEY_A)), journal.scoped(Scope.of(BASE, KEY_B))
    a.set_status(TASK, APPROVED)
    a.add_comment(TASK, "a")
    b.set_status(TASK, REJECTED)
    b.add_comment(TASK, "b")
    path_a, path_b = kept_file(a, TASK, b"copy a"), kept_file(b, TASK, b"copy b")
    assert (a.status_of(TASK), b.status_of(TASK)) == (APPROVED, REJECTED)
    assert [c.body for c in a.comments([TASK])[TASK]] == ["a"] and [c.body for c in b.comments([TASK])[TASK]] == ["b"]
    assert path_a != path_b and path_a.read_bytes() == b"copy a" and path_b.read_bytes() == b"copy b"
    assert a.kept(TASK)["video.mp4"].path == path_a and b.kept(TASK)["video.mp4"].path == path_b
    assert KEY_A not in str(path_a) and "alpha" not in str(path_a)  # folders are named by a hash


def test_one_key_on_two_services_keeps_two_journals(journal):
    here, there = Scope.of(BASE, KEY_A), Scope.of("https://ark.example.com/api/v3", KEY_A)
    journal.scoped(here).add_comment(TASK, "local")
    journal.scoped(here).set_status(TASK, APPROVED)
    assert journal.scoped(there).comments([TASK]) == {} and journal.scoped(there).status_of(TASK) == PENDING


def test_scope_names_hold_a_fingerprint_never_the_key():
    scope = Scope.of(BASE, KEY_A)
    assert KEY_A not in scope.name and KEY_A[:8] not in scope.name
    assert scope.name.endswith("@" + BASE) and scope != Scope.of(BASE, KEY_B)


def test_uploads_are_stored_per_scope_and_restored(journal):
    a, b = journal.scoped(Scope.of(BASE, KEY_A)), journal.scoped(Scope.of(BASE, KEY_B))
    image = encode_data_url(b"\x89PNG\r\n\x1a\n" + b"0" * 64, "image/png")
    request = {"content": [{"type": "text", "text": "x"}, {"type": "image_url", "image_url": {"url": image}}]}
    a.record_submission(submission(TASK, "with an upload", request=request))
    stored = a.submission(TASK).request
    assert stored["content"][1]["image_url"]["url"].startswith("journal-input:")
    assert a.restore_request(stored) == request
    assert list(a.inputs_dir.iterdir()) and not b.inputs_dir.exists()
    assert journal.restore_request(stored) == request  # the unscoped view finds every scope's uploads
    with pytest.raises(FileNotFoundError):
        b.restore_request(stored)  # another key holding the reference still cannot read the file


def test_a_stored_input_name_cannot_leave_the_inputs_folder(journal):
    forged = {"content": [{"type": "image_url", "image_url": {"url": "journal-input:../../journal.sqlite3;x/y"}}]}
    with pytest.raises(ValueError):
        journal.scoped(Scope.of(BASE, KEY_A)).restore_request(forged)


def test_a_task_id_cannot_leave_the_archive(journal):
    with pytest.raises(ValueError):
        journal.scoped(Scope.of(BASE, KEY_A)).keep_path("../elsewhere", "video.mp4")


# ---------- rows from before scopes ----------

VERSION_0 = """
CREATE TABLE batches (id TEXT PRIMARY KEY, created_at REAL NOT NULL, label TEXT NOT NULL, mode TEXT NOT NULL);
CREATE TABLE submissions (task_id TEXT PRIMARY KEY, batch_id TEXT, submitted_at REAL NOT NULL, base_url TEXT NOT NULL,
    model TEXT NOT NULL, mode TEXT NOT NULL, prompt TEXT NOT NULL, request TEXT NOT NULL, inputs TEXT NOT NULL);
CREATE INDEX ix_submissions_batch ON submissions (batch_id);
CREATE INDEX ix_submissions_time ON submissions (submitted_at);
CREATE TABLE reviews (task_id TEXT PRIMARY KEY, verdict TEXT, stars INTEGER, notes TEXT NOT NULL DEFAULT '',
    updated_at REAL NOT NULL);
CREATE TABLE kept (task_id TEXT NOT NULL, name TEXT NOT NULL, path TEXT NOT NULL, size INTEGER NOT NULL,
    kept_at REAL NOT NULL, PRIMARY KEY (task_id, name));
CREATE TABLE records (task_id TEXT PRIMARY KEY, record TEXT NOT NULL, saved_at REAL NOT NULL);
CREATE TABLE preferences (name TEXT PRIMARY KEY, value TEXT NOT NULL);
"""


@pytest.fixture
def old_file(tmp_path) -> Path:
    """A journal as the dashboard wrote it before scopes: one of each row, and a kept file."""
    path = tmp_path / "dashboard" / "journal.sqlite3"
    path.parent.mkdir(parents=True)
    video = tmp_path / "dashboard" / "archive" / TASK / "video.mp4"
    video.parent.mkdir(parents=True)
    video.write_bytes(b"old video")
    db = sqlite3.connect(path)
    db.executescript(VERSION_0)
    now = time.time()
    db.execute("INSERT INTO batches VALUES ('b-old', ?, 'old batch', 'text')", (now,))
    db.execute("INSERT INTO submissions VALUES (?, 'b-old', ?, ?, 'm', 'text', 'old prompt', ?, '[]')",
               (TASK, now, BASE, json.dumps({"content": []})))
    db.execute("INSERT INTO reviews VALUES (?, 'approved', 3, 'old notes', ?)", (TASK, now))
    db.execute("INSERT INTO kept VALUES (?, 'video.mp4', ?, 9, ?)", (TASK, str(video), now))
    db.execute("INSERT INTO records VALUES (?, ?, ?)", (TASK, json.dumps({"id": TASK}), now))
    db.execute("INSERT INTO preferences VALUES ('keep.auto', 'true')")
    db.commit()
    db.close()
    return path


def test_a_version_0_file_is_migrated_with_its_rows_unscoped(old_file):
    journal = Journal(old_file)
    db = sqlite3.connect(old_file)
    # At the journal's head revision, and marked as version 1 for the releases before migrations.
    assert db.execute("SELECT version_num FROM journal_version").fetchall() == [(migrate.head(JOURNAL),)]
    assert db.execute("PRAGMA user_version").fetchone()[0] == 1
    indexes = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'index'")}
    assert {"ix_submissions_batch", "ix_submissions_time"} <= indexes
    assert {r[0] for r in db.execute("SELECT scope FROM submissions UNION SELECT scope FROM kept")} == {""}
    assert not {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE name LIKE '%_v0'")}
    db.close()
    # The unscoped view (tests, maintenance) reads them as before.
    assert journal.submission(TASK).prompt == "old prompt" and legacy_review(journal, TASK).notes == "old notes"
    assert journal.kept(TASK)["video.mp4"].path.read_bytes() == b"old video"
    assert journal.preference("keep.auto") is True and journal.batches()[0]["size"] == 1
    Journal(old_file).close()  # opening a migrated file again changes nothing


def test_old_rows_are_the_default_connections_only(old_file):
    journal = Journal(old_file)
    owner = journal.scoped(Scope.of(BASE, KEY_A, include_unscoped=True))
    other = journal.scoped(Scope.of(BASE, KEY_B))
    assert owner.submission(TASK).prompt == "old prompt" and legacy_review(owner, TASK).verdict == "approved"
    assert set(owner.kept(TASK)) == {"video.mp4"} and owner.record(TASK) == {"id": TASK}
    assert [b["label"] for b in owner.batches()] == ["old batch"] and owner.preference("keep.auto") is True
    assert other.submission(TASK) is None and legacy_reviews(other, [TASK]) == {} and other.kept(TASK) == {}
    assert other.batches() == [] and other.record(TASK) is None and other.preference("keep.auto") is None
    # The owner's own writes win over the old row, which stays as it was.
    owner.record_submission(submission(TASK, "new prompt"))
    assert owner.submission(TASK).prompt == "new prompt" and owner.submissions([TASK])[TASK].prompt == "new prompt"
    assert journal.submission(TASK).prompt == "new prompt"  # the unscoped view prefers a scoped row too
    db = sqlite3.connect(old_file)
    assert db.execute("SELECT prompt FROM submissions WHERE scope = ''").fetchall() == [("old prompt",)]
    db.close()
