"""The share panel (components/review/share_panel.py) and the guest page (dashboard/views/guest.py) in
Streamlit's AppTest: a share made from the panel shows its link once and is listed with who made it;
Revoke stops it; the guest page opens it by its token alone, and a `task` parameter widens nothing."""

from __future__ import annotations

from pathlib import Path

import pytest

from dailies.journal import Journal, Scope
from dailies.spec.results import VIDEO_NAME

BASE = "http://127.0.0.1:8000/api/v3"
GUEST_PAGE = str(Path(__file__).resolve().parents[2] / "dashboard" / "views" / "guest.py")


def panel_page(db_path: str) -> None:
    from components.review.share_panel import render_share_panel
    from dailies.journal import Journal, Scope

    journal = Journal(db_path, database_url="", storage="").scoped(
        Scope.of_project("http://127.0.0.1:8000/api/v3", "studio", author="Ana"))
    render_share_panel(["cgt-1"], journal, None, "https://dailies.example")


@pytest.fixture
def data_dir(tmp_path, monkeypatch):
    monkeypatch.setenv("DAILIES_DATA_DIR", str(tmp_path))
    monkeypatch.delenv("DAILIES_DATABASE_URL", raising=False)
    monkeypatch.delenv("DAILIES_STORAGE", raising=False)
    journal = Journal(tmp_path / "dashboard" / "journal.sqlite3", database_url="", storage="")
    view = journal.scoped(Scope.of_project(BASE, "studio", author="Ana"))
    for task in ("cgt-1", "cgt-2"):
        path = view.keep_path(task, VIDEO_NAME)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"\x00" * 64)
        view.mark_kept(task, VIDEO_NAME, path)
    journal.close()
    return tmp_path


def test_the_panel_makes_a_share_shows_its_link_once_and_revokes_it(data_dir, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("DAILIES_DASHBOARD_TEAM", "1")  # a dashboard where guests stay guests (below)

    db = str(data_dir / "dashboard" / "journal.sqlite3")
    at = AppTest.from_function(panel_page, args=(db,), default_timeout=60).run()
    assert not at.exception
    assert any("No shares yet" in c.value for c in at.caption)
    at.button[0].click().run()  # the form's "Create share link"
    assert not at.exception and not at.error
    [link] = [c.value for c in at.code]
    assert link.startswith("https://dailies.example/guest?share=")
    token = link.split("share=", 1)[1]
    assert any("by Ana" in m.value and "active" in m.value for m in at.markdown)
    at.run()
    assert not at.code  # shown once
    journal = Journal(Path(db), database_url="", storage="")
    try:
        share = journal.open_share(token)
        assert share.task_ids == ("cgt-1",) and share.allow_comments and share.created_by == "Ana"
    finally:
        journal.close()
    revoke = next(b for b in at.button if b.label == "Revoke")
    revoke.click().run()
    assert any("revoked" in m.value for m in at.markdown)


def test_the_guest_page_shows_the_share_only(data_dir, monkeypatch):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("DAILIES_DASHBOARD_TEAM", "1")
    journal = Journal(data_dir / "dashboard" / "journal.sqlite3", database_url="", storage="")
    ana = journal.scoped(Scope.of_project(BASE, "studio", author="Ana"))
    _, token = ana.create_share(["cgt-1"], 86_400, allow_comments=True, prompts={"cgt-1": "paper boats"})
    _, other = ana.create_share(["cgt-2"], 86_400, prompts={"cgt-2": "the other shot"})
    try:
        at = AppTest.from_file(GUEST_PAGE, default_timeout=60)
        at.query_params["share"] = token
        at.query_params["task"] = "cgt-2"
        at.run()
        assert not at.exception and not at.error
        texts = " ".join(t.value for t in at.text)
        assert "paper boats" in texts and "the other shot" not in texts
        assert len(at.get("bidi_component")) == 1  # the timecode player: this share takes comments
        at.text_input(key="guest.name").input("Dee").run()
        at.text_area(key="guest.comment.cgt-1").input("nice").run()
        at.button(key="guest.post.cgt-1").click().run()
        assert not at.exception and not at.error
        [comment] = ana.comments(["cgt-1"])["cgt-1"]
        assert (comment.author, comment.body) == ("Dee (guest)", "nice")
        assert ana.comments(["cgt-2"]) == {}

        for wrong in (token[:-1], other[:-1], "cgt-1", ""):
            at = AppTest.from_file(GUEST_PAGE, default_timeout=60)
            at.query_params["share"] = wrong
            at.run()
            assert at.error and "does not open anything" in at.error[0].value
            assert not at.get("video") and not at.get("bidi_component")
    finally:
        journal.close()


def test_a_dashboard_that_gives_its_key_to_every_visitor_makes_no_share_links(data_dir, monkeypatch):
    """Without team mode or sign-in the dashboard hands its own key to whoever opens it: a guest sent a
    link to it could drop `?share=` and use every page, so the panel says why and makes no link."""
    from streamlit.testing.v1 import AppTest

    from components.review import share_panel

    monkeypatch.delenv("DAILIES_DASHBOARD_TEAM", raising=False)
    assert not share_panel.guests_stay_guests()
    db = str(data_dir / "dashboard" / "journal.sqlite3")
    at = AppTest.from_function(panel_page, args=(db,), default_timeout=60).run()
    assert not at.exception
    assert [w.value for w in at.warning] == [share_panel.NO_SHARES_HERE]
    assert not at.button and not at.code
    # The way on is named: a Makefile target that exists, and where the key is.
    makefile = (Path(__file__).resolve().parents[2] / "Makefile").read_text()
    assert "`make up-team`" in share_panel.NO_SHARES_HERE and "\nup-team:" in makefile
    assert "dailies keys --show" in share_panel.NO_SHARES_HERE
    # A link made elsewhere (`dailies share create` cannot see the dashboard it points at) opens
    # nothing on such a dashboard either.
    journal = Journal(data_dir / "dashboard" / "journal.sqlite3", database_url="", storage="")
    try:
        _, token = journal.scoped(Scope.of_project(BASE, "studio", author="Ana")).create_share(
            ["cgt-1"], 86_400, allow_comments=True, prompts={"cgt-1": "paper boats"})
    finally:
        journal.close()
    guest = AppTest.from_file(GUEST_PAGE, default_timeout=60)
    guest.query_params["share"] = token
    guest.run()
    assert len(guest.error) == 1 and "not set up for guests" in guest.error[0].value
    assert not guest.get("video") and not guest.get("bidi_component") and "paper boats" not in str(guest.text)
    monkeypatch.setenv("DAILIES_DASHBOARD_TEAM", "1")
    assert share_panel.guests_stay_guests()
