"""The dashboard's journal on both backends (tests/conftest.py `backend`): SQLite and folders in the data
directory (the default), and PostgreSQL + an S3 bucket shared by a team's dashboards.

"Two machines" are two Journal objects with two data directories: on pg+s3 they share only the database
and the bucket; on sqlite (one machine) two processes share the file. Either way each sees the other's
submissions, statuses, comments and kept copies of its own scope, and never another scope's.
"""

from __future__ import annotations

import threading
import time
from pathlib import Path

import httpx
import pytest
from sqlalchemy import create_engine, inspect

from dailies import launcher
from dailies.journal import DATABASE_ENV, POSTGRES_PREFIX, STORAGE_ENV, Journal, Scope
from dailies.journal.bucket import journal_root
from dailies.journal.statuses import APPROVED, PENDING, REJECTED
from dailies.spec.media import encode_data_url

from ..conftest import open_backend
from ..dashboard.test_journal_scopes import BASE, KEY_A, KEY_B, TASK, submission

VIDEO = b"\x00\x00\x00\x18ftypisom" + b"v" * 2000
FRAME = b"\x89PNG\r\n\x1a\n" + b"f" * 100


@pytest.fixture
def team_backend(request):
    """The pg+s3 backend alone, for what only a team's backend has."""
    with open_backend(request, "pg+s3") as opened:
        yield opened


@pytest.fixture
def machines(backend, tmp_path):
    """open(machine) -> the unscoped journal of one machine (its own data directory) on the backend."""
    opened: list[Journal] = []

    def open_journal(machine: str) -> Journal:
        if backend.team:
            journal = Journal(tmp_path / machine / "dashboard" / "journal.sqlite3",
                              database_url=backend.database_url, storage=backend.storage)
        else:  # one machine: two dashboards on one data directory
            journal = Journal(tmp_path / "shared" / "dashboard" / "journal.sqlite3", database_url="", storage="")
        opened.append(journal)
        return journal

    yield open_journal
    for journal in opened:
        journal.close()


def keep(journal: Journal, task_id: str, name: str, content: bytes):
    """What components/common/keep.py does: download to keep_path, then mark_kept."""
    path = journal.keep_path(task_id, name)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(content)
    return journal.mark_kept(task_id, name, path)


def played(kept) -> bytes:
    """The bytes a player gets from a kept copy: the file, or its presigned URL over HTTP."""
    media = kept.media()
    if isinstance(media, Path):
        return media.read_bytes()
    response = httpx.get(media, timeout=10)
    response.raise_for_status()
    return response.content


def test_every_part_of_the_journal_round_trips_and_scopes_stay_apart(machines):
    journal = machines("a")
    a, b = journal.scoped(Scope.of(BASE, KEY_A)), journal.scoped(Scope.of(BASE, KEY_B))
    batch = a.new_batch("alpha batch", "text")
    a.record_submission(submission(TASK, "alpha prompt", batch))
    a.record_submission(submission("cgt-2", "second", batch))
    a.set_status(TASK, APPROVED)
    a.rate(TASK, 5)
    a.rate(TASK, 4)  # a person's stars are changed, the status stays
    a.add_comment(TASK, "alpha notes")
    a.save_records([{"id": TASK, "status": "succeeded"}, {"id": TASK, "status": "succeeded", "seed": 7}])
    keep(a, TASK, "video.mp4", VIDEO)
    a.set_preference("keep.auto", True)
    a.set_preference("keep.auto", False)

    assert a.submission(TASK).prompt == "alpha prompt" and [s.task_id for s in a.batch(batch)] == [TASK, "cgt-2"]
    assert set(a.submissions([TASK, "cgt-2", "cgt-missing"])) == {TASK, "cgt-2"}
    assert [(x["label"], x["size"]) for x in a.batches()] == [("alpha batch", 2)]
    assert a.status_of(TASK) == a.statuses([TASK])[TASK].status == APPROVED
    assert a.ratings([TASK]) == {TASK: {a.author: 4}}
    assert [c.body for c in a.comments([TASK])[TASK]] == ["alpha notes"]
    assert a.record(TASK) == {"id": TASK, "status": "succeeded", "seed": 7}  # the last of one batch wins
    assert a.preference("keep.auto") is False and a.submitted_models() == ["doubao-seedance-2-0-260128"]
    assert set(a.kept(TASK)) == {"video.mp4"} and [k.task_id for k in a.all_kept()] == [TASK]
    assert a.kept(TASK)["video.mp4"].size == len(VIDEO) and played(a.kept(TASK)["video.mp4"]) == VIDEO

    assert b.submission(TASK) is None and b.submissions([TASK]) == {} and b.submitted_models() == []
    assert b.batches() == [] and b.batch(batch) == []
    assert b.status_of(TASK) == PENDING and b.statuses([TASK]) == {} and b.status_history(TASK) == []
    assert b.ratings([TASK]) == {} and b.comments([TASK]) == {}
    assert b.record(TASK) is None and b.kept(TASK) == {} and b.all_kept() == []
    assert b.preference("keep.auto", "unset") == "unset"
    # The unscoped view (tests, maintenance) sees every scope.
    assert journal.submission(TASK).prompt == "alpha prompt" and set(journal.kept(TASK)) == {"video.mp4"}


def test_two_machines_share_submissions_statuses_and_kept_copies_of_their_scope_only(machines):
    here, there = machines("machine-a"), machines("machine-b")
    alpha_a, alpha_b = (j.scoped(Scope.of(BASE, KEY_A)) for j in (here, there))
    bravo_b = there.scoped(Scope.of(BASE, KEY_B))
    image = encode_data_url(b"\x89PNG\r\n\x1a\n" + b"0" * 64, "image/png")
    request = {"content": [{"type": "text", "text": "x"}, {"type": "image_url", "image_url": {"url": image}}]}

    batch = alpha_a.new_batch("shot 12", "text")
    alpha_a.record_submission(submission(TASK, "kite over the dunes", batch, request))
    alpha_a.set_status(TASK, APPROVED)
    alpha_a.rate(TASK, 4)
    alpha_a.add_comment(TASK, "keep the wind")
    alpha_a.save_records([{"id": TASK, "status": "succeeded"}])
    kept = {name: keep(alpha_a, TASK, name, content) for name, content in (("video.mp4", VIDEO),
                                                                           ("last_frame.png", FRAME))}
    alpha_a.set_preference("keep.auto", True)

    # Machine B, same person (same scope): everything machine A wrote.
    assert alpha_b.submission(TASK).prompt == "kite over the dunes"
    assert [s.task_id for s in alpha_b.batch(batch)] == [TASK]
    assert alpha_b.restore_request(alpha_b.submission(TASK).request) == request  # the stored upload
    assert [c.body for c in alpha_b.comments([TASK])[TASK]] == ["keep the wind"]
    assert alpha_b.status_of(TASK) == APPROVED and alpha_b.ratings([TASK]) == {TASK: {alpha_a.author: 4}}
    assert alpha_b.record(TASK) == {"id": TASK, "status": "succeeded"}
    assert alpha_b.preference("keep.auto") is True and alpha_b.batches()[0]["size"] == 1
    on_b = alpha_b.kept(TASK)
    assert set(on_b) == {"video.mp4", "last_frame.png"}
    assert played(on_b["video.mp4"]) == VIDEO and on_b["last_frame.png"].read_bytes() == FRAME
    assert on_b["video.mp4"].location == kept["video.mp4"].location
    # A status changed on B is the one A reads.
    alpha_b.set_status(TASK, REJECTED)
    assert alpha_a.status_of(TASK) == REJECTED and [c.body for c in alpha_a.comments([TASK])[TASK]] == ["keep the wind"]

    # Another person on machine B: nothing of alpha's, not even with the reference in hand.
    assert bravo_b.submission(TASK) is None and bravo_b.status_of(TASK) == PENDING
    assert bravo_b.comments([TASK]) == {} and bravo_b.ratings([TASK]) == {}
    assert bravo_b.kept(TASK) == {} and bravo_b.all_kept() == [] and bravo_b.batches() == []
    assert bravo_b.record(TASK) is None and bravo_b.preference("keep.auto") is None
    with pytest.raises(FileNotFoundError):
        bravo_b.restore_request(alpha_a.submission(TASK).request)


def test_kept_copies_are_in_the_bucket_not_on_the_machine(backend, machines):
    alpha = machines("a").scoped(Scope.of(BASE, KEY_A))
    kept = keep(alpha, TASK, "video.mp4", VIDEO)
    if not backend.team:
        assert kept.path == alpha.keep_path(TASK, "video.mp4") and kept.path.read_bytes() == VIDEO
        assert alpha.archive_location == str(alpha.archive_dir)
        return
    bucket, root = journal_root(backend.storage)
    assert kept.in_bucket and kept.path is None and not alpha.keep_path(TASK, "video.mp4").exists()
    assert kept.location.startswith(f"s3://{bucket}/{root}/archive/{Scope.of(BASE, KEY_A).folder}/{TASK}/")
    assert alpha.archive_location.startswith(f"s3://{bucket}/{root}/archive/")
    # Beside the service's results (a lifecycle rule on the results' prefix leaves kept copies alone).
    assert root == backend.storage.removeprefix(f"s3://{bucket}/").rstrip("/") + "-journal"
    assert backend.s3.keys(bucket, f"{root}/archive/")
    # The player's URL is presigned, stays the same for the hour, and plays without credentials.
    now = time.time()
    url = kept.media(now)
    assert isinstance(url, str) and "X-Amz-Signature=" in url and kept.media(now + 1) == url
    assert httpx.get(url, timeout=10).content == VIDEO


def test_a_dashboard_without_the_bucket_does_not_offer_copies_it_cannot_play(team_backend, tmp_path):
    backend = team_backend
    with_bucket = Journal(tmp_path / "a" / "journal.sqlite3", database_url=backend.database_url,
                          storage=backend.storage).scoped(Scope.of(BASE, KEY_A))
    without = Journal(tmp_path / "b" / "journal.sqlite3", database_url=backend.database_url,
                      storage="").scoped(Scope.of(BASE, KEY_A))
    keep(with_bucket, TASK, "video.mp4", VIDEO)
    assert set(with_bucket.kept(TASK)) == {"video.mp4"} and without.kept(TASK) == {}


def test_the_unscoped_view_prefers_a_scoped_row_then_the_latest_written(machines):
    journal = machines("a")
    a, b = journal.scoped(Scope.of(BASE, KEY_A)), journal.scoped(Scope.of(BASE, KEY_B))
    journal.record_submission(submission(TASK, "unscoped"))
    a.record_submission(submission(TASK, "a"))
    b.record_submission(submission(TASK, "b"))
    assert journal.submission(TASK).prompt == "b"
    a.record_submission(submission(TASK, "a again"))  # rewriting a row makes it the latest
    assert journal.submission(TASK).prompt == "a again" and journal.submissions([TASK])[TASK].prompt == "a again"
    owner = journal.scoped(Scope.of(BASE, KEY_B, include_unscoped=True))
    assert owner.submission(TASK).prompt == "b"  # its own row before the old one


def test_many_dashboards_starting_at_once_create_the_schema_once(backend, tmp_path):
    errors: list[BaseException] = []
    journals: list[Journal] = []

    def start(n: int) -> None:
        try:
            journals.append(Journal(tmp_path / ("shared" if not backend.team else f"m{n}") / "journal.sqlite3",
                                    database_url=backend.database_url or "", storage=backend.storage or ""))
        except BaseException as exc:  # noqa: BLE001 - reported below
            errors.append(exc)

    threads = [threading.Thread(target=start, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    try:
        assert not errors and len(journals) == 4
        journals[0].scoped(Scope.of(BASE, KEY_A)).add_comment(TASK, "one")
        assert [c.body for c in journals[3].scoped(Scope.of(BASE, KEY_A)).comments([TASK])[TASK]] == ["one"]
    finally:
        for journal in journals:
            journal.close()


def test_on_the_services_database_the_journal_keeps_to_its_own_tables(team_backend, tmp_path):
    backend = team_backend
    from dailies.service.db.engine import make_engine

    service = make_engine(backend.database_url)  # the service's schema first, then the journal's beside it
    journal = Journal(tmp_path / "journal.sqlite3", database_url=backend.database_url, storage="")
    try:
        journal.scoped(Scope.of(BASE, KEY_A)).save_records([{"id": TASK}])
        engine = create_engine(backend.database(tmp_path))
        tables = set(inspect(engine).get_table_names())
        engine.dispose()
        ours = {t for t in tables if t.startswith(POSTGRES_PREFIX)}
        assert ours == {f"{POSTGRES_PREFIX}{t}" for t in ("batches", "submissions", "reviews", "kept", "records",
                                                          "preferences", "statuses", "ratings", "comments",
                                                          "authors", "shots", "shares", "inbox_reads", "version")}
        # Each schema keeps its own history in its own version table.
        assert {"tasks", "dailies_service_version"} <= tables and journal.shared
    finally:
        journal.close()
        service.dispose()


def test_the_dashboard_is_given_the_database_and_bucket_through_its_environment(backend, tmp_path, monkeypatch):
    env = launcher.dashboard_env({}, None, None, tmp_path, team=True, database_url=backend.database_url,
                                 storage=backend.storage)
    assert (launcher.JOURNAL_DATABASE_ENV, launcher.JOURNAL_STORAGE_ENV) == (DATABASE_ENV, STORAGE_ENV)
    for name in (DATABASE_ENV, STORAGE_ENV):
        if env.get(name) is not None:
            monkeypatch.setenv(name, env[name])
        else:
            monkeypatch.delenv(name, raising=False)
    journal = Journal(tmp_path / "dashboard" / "journal.sqlite3")  # as components/common/connection.py opens it
    try:
        assert journal.shared == backend.team
        assert (tmp_path / "dashboard" / "journal.sqlite3").exists() != backend.team
        kept = keep(journal.scoped(Scope.of(BASE, KEY_A)), TASK, "video.mp4", VIDEO)
        assert kept.in_bucket == backend.team
    finally:
        journal.close()
