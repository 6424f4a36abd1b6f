"""Share links in the journal (dailies.journal.shares), on both backends (SQLite file; PostgreSQL +
bucket): a token opens its share only, stored hashed; expiry and revocation on every open (a fake
clock); passphrase attempts limited; a guest writes into the share's scope, on its tasks only."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from dailies.journal import Journal, Scope, ShareRefused
from dailies.journal.shares import LOCK_SECONDS, MAX_ATTEMPTS
from dailies.journal.statuses import APPROVED
from dailies.spec.results import VIDEO_NAME

BASE = "http://127.0.0.1:8000/api/v3"
DAY = 86_400.0


def project(journal: Journal, name: str, author: str) -> Journal:
    return journal.scoped(Scope.of_project(BASE, name, author=author))


def keep(view: Journal, task_id: str) -> None:
    path = view.keep_path(task_id, VIDEO_NAME)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x00\x00\x00\x18ftypmp42" + task_id.encode())
    view.mark_kept(task_id, VIDEO_NAME, path)


def test_a_share_opens_by_its_token_only_and_a_guest_writes_into_the_project(journal):
    ana = project(journal, "studio", "Ana")
    for task in ("cgt-1", "cgt-2", "cgt-3"):
        keep(ana, task)
    share, token = ana.create_share(["cgt-1", "cgt-2"], 7 * DAY, allow_comments=True, allow_status=True,
                                    prompts={"cgt-1": "lantern", "cgt-3": "not shared"}, now=1000.0)
    other, other_token = ana.create_share(["cgt-3"], DAY, now=1000.0)
    assert len(token) >= 43  # 32 random bytes, url-safe
    # Only the hash is stored, never the token.
    table = journal._table("shares")
    rows = journal._read(table.select())
    assert {r.token_hash for r in rows} == {hashlib.sha256(t.encode()).hexdigest() for t in (token, other_token)}
    assert all(token not in str(tuple(r)) for r in rows)

    opened = journal.open_share(token, now=2000.0)
    assert opened.id == share.id and opened.task_ids == ("cgt-1", "cgt-2")
    assert opened.prompts == {"cgt-1": "lantern"}
    assert journal.open_share(other_token, now=2000.0).task_ids == ("cgt-3",)
    for wrong in (token[:-1], token + "x", token.upper(), share.id, other.id, "", "x" * 10_000,
                  hashlib.sha256(token.encode()).hexdigest()):
        with pytest.raises(ShareRefused) as refused:
            journal.open_share(wrong, now=2000.0)
        assert refused.value.reason == "unknown"

    guest = journal.guest_view(opened, "  Dee   ")
    assert guest.author == "Dee (guest)"
    assert VIDEO_NAME in guest.kept("cgt-1")
    for outside in ("cgt-3", "cgt-9", "../cgt-1"):
        with pytest.raises(PermissionError):
            guest.kept(outside)
        with pytest.raises(PermissionError):
            guest.add_comment(outside, "hello")
    guest.add_comment("cgt-1", "love the light", timecode=1.5)
    guest.set_status("cgt-2", APPROVED)
    bo = project(journal, "studio", "Bo")
    [comment] = bo.comments(["cgt-1"])["cgt-1"]
    assert (comment.author, comment.body, comment.timecode) == ("Dee (guest)", "love the light", 1.5)
    # The guest reads the version's thread, the team's notes with their authors and their own (a
    # reload finds them there); a shared version's thread only.
    bo.add_comment("cgt-1", "too dark at the end", timecode=3.0)
    bo.add_comment("cgt-3", "not for guests")
    assert [(c.author, c.body) for c in guest.comments("cgt-1")] == [
        ("Dee (guest)", "love the light"), ("Bo", "too dark at the end")]
    with pytest.raises(PermissionError):
        guest.comments("cgt-3")
    assert bo.statuses(["cgt-2"])["cgt-2"].author == "Dee (guest)"
    assert bo.status_of("cgt-2") == APPROVED
    # Another project sees neither the share nor what its guest wrote.
    cy = project(journal, "other", "Cy")
    assert cy.shares() == [] and cy.comments(["cgt-1"]) == {}
    assert not cy.revoke_share(share.id)
    # Listed with who made them, in their project.
    assert {(s.id, s.created_by) for s in bo.shares()} == {(share.id, "Ana"), (other.id, "Ana")}


def test_a_share_without_comments_or_statuses_refuses_them(journal):
    ana = project(journal, "studio", "Ana")
    keep(ana, "cgt-1")
    share, token = ana.create_share(["cgt-1"], DAY, hide_prompt=True, prompts={"cgt-1": "secret"}, now=0.0)
    guest = journal.guest_view(journal.open_share(token, now=1.0), "Dee")
    assert guest.prompt("cgt-1") is None
    with pytest.raises(PermissionError):
        guest.add_comment("cgt-1", "hi")
    with pytest.raises(PermissionError):
        guest.set_status("cgt-1", APPROVED)
    ana.add_comment("cgt-1", "internal: the client hates the sky")
    assert guest.comments("cgt-1") == []  # a share that takes no comments shows none of the team's


def test_a_share_needs_kept_copies_and_a_scope(journal):
    ana = project(journal, "studio", "Ana")
    with pytest.raises(ValueError, match="kept"):
        ana.create_share(["cgt-1"], DAY)
    with pytest.raises(ValueError):
        journal.create_share(["cgt-1"], DAY)
    keep(ana, "cgt-1")
    with pytest.raises(ValueError):
        ana.create_share([], DAY)


def test_expiry_and_revocation_are_checked_on_every_open(journal):
    ana = project(journal, "studio", "Ana")
    keep(ana, "cgt-1")
    share, token = ana.create_share(["cgt-1"], DAY, now=0.0)
    assert journal.open_share(token, now=DAY - 1).id == share.id
    with pytest.raises(ShareRefused) as refused:
        journal.open_share(token, now=DAY)
    assert refused.value.reason == "expired"
    second, token2 = ana.create_share(["cgt-1"], DAY, now=0.0)
    assert journal.open_share(token2, now=10.0)
    assert ana.revoke_share(second.id, now=20.0)
    assert not ana.revoke_share(second.id, now=30.0)  # once
    with pytest.raises(ShareRefused) as refused:
        journal.open_share(token2, now=21.0)
    assert refused.value.reason == "revoked"
    assert ana.share(second.id).revoked_at == 20.0


def test_five_wrong_passphrases_lock_the_share_for_a_while(journal):
    ana = project(journal, "studio", "Ana")
    keep(ana, "cgt-1")
    share, token = ana.create_share(["cgt-1"], DAY, passphrase="open sesame", now=0.0)
    stored = journal._read(journal._table("shares").select())[0].passphrase
    assert "open sesame" not in stored and stored.startswith("pbkdf2_sha256$")
    opened = journal.open_share(token, now=1.0)
    assert opened.has_passphrase
    assert journal.check_passphrase(opened, "open sesame", now=1.0)
    for attempt in range(MAX_ATTEMPTS):
        assert not journal.check_passphrase(opened, f"guess {attempt}", now=2.0 + attempt)
    with pytest.raises(ShareRefused) as refused:
        journal.open_share(token, now=10.0)
    assert refused.value.reason == "locked"
    with pytest.raises(ShareRefused):  # even the right one, while locked
        journal.check_passphrase(opened, "open sesame", now=10.0)
    later = 6.0 + LOCK_SECONDS + 1
    assert journal.check_passphrase(journal.open_share(token, now=later), "open sesame", now=later)
    # A right passphrase resets the count: four wrong ones then do not lock.
    for attempt in range(MAX_ATTEMPTS - 1):
        assert not journal.check_passphrase(opened, "nope", now=later + attempt)
    assert journal.open_share(token, now=later + 10).id == share.id


def test_a_share_id_already_taken_by_another_project_is_never_replaced(journal, monkeypatch):
    """Share ids are short (the lists and `dailies share revoke` name them): an id drawn twice, by any
    project, takes another draw instead of replacing the share that has it."""
    from dailies.journal import shares

    ana, bo = project(journal, "studio", "Ana"), project(journal, "rival", "Bo")
    keep(ana, "cgt-1")
    keep(bo, "cgt-9")
    draws = iter(["aaaa0001", "aaaa0001", "aaaa0002"])
    monkeypatch.setattr(shares, "new_share_id", lambda: next(draws))
    first, first_token = ana.create_share(["cgt-1"], DAY, now=1000.0)
    second, second_token = bo.create_share(["cgt-9"], DAY, now=1000.0)
    assert (first.id, second.id) == ("aaaa0001", "aaaa0002")
    assert journal.open_share(first_token, now=2000.0).task_ids == ("cgt-1",)
    assert journal.open_share(second_token, now=2000.0).task_ids == ("cgt-9",)


def test_a_shares_guests_post_a_bounded_number_of_comments_a_window(journal, monkeypatch):
    """A link anyone may hold cannot flood the project's journal: its guests together post at most
    GUEST_COMMENTS_PER_WINDOW comments in GUEST_COMMENT_WINDOW_S; members are not counted."""
    from dailies.journal import shares

    monkeypatch.setattr(shares, "GUEST_COMMENTS_PER_WINDOW", 3)
    ana = project(journal, "studio", "Ana")
    keep(ana, "cgt-1")
    share, token = ana.create_share(["cgt-1"], DAY, allow_comments=True, now=1000.0)
    opened = journal.open_share(token, now=1000.0)
    dee, eve = journal.guest_view(opened, "Dee"), journal.guest_view(opened, "")
    ana.add_comment("cgt-1", "a member's note", at=1001.0)
    for n, guest in enumerate((dee, eve, dee)):
        guest.add_comment("cgt-1", f"note {n}", now=1002.0 + n)
    with pytest.raises(ValueError, match="posted 3 comments in the last 10 minutes"):
        eve.add_comment("cgt-1", "one more", now=1010.0)
    eve.add_comment("cgt-1", "after the window", now=1002.0 + shares.GUEST_COMMENT_WINDOW_S + 1)
    authors = [c.author for c in ana.comments(["cgt-1"])["cgt-1"]]
    assert authors == ["Ana", "Dee (guest)", "Guest", "Dee (guest)", "Guest"]


def test_a_shares_guests_set_a_bounded_number_of_statuses_a_window(journal, monkeypatch):
    """Hole 7: a guest allowed to set statuses wrote without limit (2,000 history rows in 1.2 s). Its
    guests together set at most GUEST_STATUSES_PER_WINDOW in GUEST_STATUS_WINDOW_S, counted from the
    guests' rows of the status history; members are not counted."""
    from dailies.journal import shares
    from dailies.journal.statuses import CHANGES_REQUESTED, REJECTED

    monkeypatch.setattr(shares, "GUEST_STATUSES_PER_WINDOW", 3)
    ana = project(journal, "studio", "Ana")
    for task in ("cgt-1", "cgt-2"):
        keep(ana, task)
    share, token = ana.create_share(["cgt-1", "cgt-2"], DAY, allow_status=True, now=1000.0)
    opened = journal.open_share(token, now=1000.0)
    dee, eve = journal.guest_view(opened, "Dee"), journal.guest_view(opened, "")
    ana.set_status("cgt-1", REJECTED, at=1001.0)
    for n, (guest, task, status) in enumerate([(dee, "cgt-1", APPROVED), (eve, "cgt-2", REJECTED),
                                               (dee, "cgt-1", CHANGES_REQUESTED)]):
        assert guest.set_status(task, status, now=1002.0 + n) is not None
    with pytest.raises(ValueError, match="set 3 statuses in the last 10 minutes"):
        eve.set_status("cgt-2", APPROVED, now=1010.0)
    ana.set_status("cgt-2", CHANGES_REQUESTED, at=1011.0)  # a member is not limited
    assert eve.set_status("cgt-2", APPROVED, now=1002.0 + shares.GUEST_STATUS_WINDOW_S + 1) is not None
    history = [(c.author, c.status) for c in ana.status_history("cgt-1") + ana.status_history("cgt-2")]
    assert history == [("Ana", REJECTED), ("Dee (guest)", APPROVED), ("Dee (guest)", CHANGES_REQUESTED),
                       ("Guest", REJECTED), ("Ana", CHANGES_REQUESTED), ("Guest", APPROVED)]


def test_setting_the_status_a_version_has_writes_nothing(journal, monkeypatch):
    """A status set again (or `pending` on a version never reviewed) is no change: no history row, so no
    guest's script fills the journal with them, and none counts against the share's limit."""
    from dailies.journal import shares
    from dailies.journal.statuses import PENDING

    monkeypatch.setattr(shares, "GUEST_STATUSES_PER_WINDOW", 2)
    ana = project(journal, "studio", "Ana")
    keep(ana, "cgt-1")
    _, token = ana.create_share(["cgt-1"], DAY, allow_status=True, now=1000.0)
    dee = journal.guest_view(journal.open_share(token, now=1000.0), "Dee")
    assert dee.set_status("cgt-1", PENDING, now=1001.0) is None
    assert ana.set_status("cgt-1", PENDING) is None
    assert dee.set_status("cgt-1", APPROVED, now=1002.0) is not None
    for n in range(50):
        assert dee.set_status("cgt-1", APPROVED, now=1003.0 + n) is None
        assert ana.set_status("cgt-1", APPROVED) is None
    assert [(c.author, c.previous, c.status) for c in ana.status_history("cgt-1")] == [
        ("Dee (guest)", PENDING, APPROVED)]
    assert dee.set_status("cgt-1", PENDING, now=1060.0) is not None  # the second of two: still admitted


def test_the_guest_page_plays_what_is_kept_and_survives_a_copy_gone(journal, monkeypatch, tmp_path):
    """A kept copy deleted (from the disk, or from the bucket by a lifecycle rule) while its row is
    listed: the guest page says so for that version and plays the others (it raised). A bucket's
    copy is fetched once, not on every run of the page (a guest typing a comment re-ran it)."""
    from streamlit.testing.v1 import AppTest

    from components.common import connection
    from dailies.journal.kept import KeptFile

    monkeypatch.setenv("DAILIES_DATA_DIR", str(tmp_path / "guest-data"))
    monkeypatch.setenv("DAILIES_DASHBOARD_TEAM", "1")  # a dashboard where guests stay guests
    monkeypatch.setattr(connection, "shared_journal", lambda: journal)
    ana = project(journal, "studio", "Ana")
    for task in ("cgt-1", "cgt-2"):
        keep(ana, task)
    _, token = ana.create_share(["cgt-1", "cgt-2"], DAY, allow_comments=True)
    gone = ana.kept("cgt-1")[VIDEO_NAME]
    if gone.in_bucket:
        import boto3

        bucket, _, key = gone.location.removeprefix("s3://").partition("/")
        boto3.client("s3").delete_object(Bucket=bucket, Key=key)
    else:
        gone.path.unlink()
    fetched: list[str] = []
    real = KeptFile.read_bytes
    monkeypatch.setattr(KeptFile, "read_bytes", lambda self: (fetched.append(self.task_id), real(self))[1])

    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "dashboard" / "views" / "guest.py"),
                           default_timeout=60)
    at.query_params["share"] = token
    at.run()
    assert not at.exception, at.exception
    # One player (the timecode player, a custom component: the share takes comments), one warning.
    assert len(at.get("bidi_component")) == 1 and any("no longer kept" in w.value for w in at.warning)
    at.text_input(key="guest.name").input("Dee").run()
    at.text_area(key="guest.comment.cgt-2").input("nice").run()
    assert not at.exception
    assert fetched.count("cgt-2") <= 1  # a bucket's copy once (a disk's is played as it is)


def test_the_guest_pages_status_select_follows_the_projects_status(journal, monkeypatch, tmp_path):
    """A member changes the status while the guest's page is open: the guest's select shows it at the
    next run (not what the page first saw), and the guest picking the earlier value writes it."""
    from streamlit.testing.v1 import AppTest

    from components.common import connection

    monkeypatch.setenv("DAILIES_DATA_DIR", str(tmp_path / "guest-data"))
    monkeypatch.setenv("DAILIES_DASHBOARD_TEAM", "1")
    monkeypatch.setattr(connection, "shared_journal", lambda: journal)
    ana = project(journal, "studio", "Ana")
    keep(ana, "cgt-1")
    _, token = ana.create_share(["cgt-1"], DAY, allow_status=True)
    at = AppTest.from_file(str(Path(__file__).resolve().parents[2] / "dashboard" / "views" / "guest.py"),
                           default_timeout=60)
    at.query_params["share"] = token
    at.run()
    at.text_input(key="guest.name").input("Dee").run()
    assert at.selectbox(key="guest.status.cgt-1").value == "pending"
    ana.set_status("cgt-1", APPROVED)
    at.run()
    assert at.selectbox(key="guest.status.cgt-1").value == APPROVED
    at.selectbox(key="guest.status.cgt-1").select("pending").run()
    assert not at.exception, at.exception
    change = ana.statuses(["cgt-1"])["cgt-1"]
    assert (change.status, change.author, change.previous) == ("pending", "Dee (guest)", APPROVED)
