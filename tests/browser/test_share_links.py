"""Share links (issue 25) in headless Chromium, on a team dashboard (`dailies up --team`: no key of its
own) and a service where Ana is a member of project `studio`.

Ana makes two tasks with the CLI and shares the first with `dailies share create` (comments allowed).
A fresh browser context with no key opens the link: the video plays (readyState >= 2) from the kept
copy, the prompt shows, and a guest comment signed "Dee (guest)" is posted, which Ana then sees on
her Review. A `task` parameter naming the other task, an altered token, another share's id and
another share's token (of the other task) give nothing of what they should not. After `dailies share
revoke`, and after the expiry of a share made with a fake clock, the page says so and shows no video.
Five wrong passphrases lock a share. Screenshots: tests/artifacts/screenshots/share-*.png.
"""

from __future__ import annotations

import json
import sqlite3
import time

import pytest

from dailies.journal import Journal, Scope
from dailies.service.access import keys as key_store
from dailies.service.callers import KeyOptions

from ..cli.running import run
from .conftest import running_product
from .test_team_sharing import enter_key, new_tab
from .ui import DEEP_QUERY, drag_on, open_page, screenshot, until_quiet, video_state

pytestmark = [pytest.mark.browser, pytest.mark.slow]

V2 = "doubao-seedance-2-0-260128"
PROMPT = "paper boats on a rainy street"
OTHER_PROMPT = "a secret second shot"
DAY = 86_400.0


@pytest.fixture(scope="module")
def studio(tmp_path_factory, chromium_path):
    data_dir = tmp_path_factory.mktemp("share")
    ana = key_store.create_key(data_dir, "studio", KeyOptions(name="Ana")).key
    with running_product(data_dir, "--team") as product:
        ids = []
        for prompt in (PROMPT, OTHER_PROMPT):
            code, out, err = run("create", "--base-url", product.api_url, "--api-key", ana, "--model", V2,
                                 "--prompt", prompt, "--resolution", "480p", "--duration", "4", "--wait",
                                 "--poll", "0.3", "--json")
            assert code == 0, err
            ids.append(json.loads(out)["id"])
        yield product, ana, ids


def share(product, key: str, *extra: str) -> dict:
    code, out, err = run("share", "create", "--base-url", product.api_url, "--api-key", key, "--data-dir",
                         str(product.data_dir), "--dashboard-url", product.ui_url, "--json", *extra)
    assert code == 0, err
    return json.loads(out)


def guest_settle(tab) -> None:
    """Wait for the app (the guest page has no page list to wait for), then until no run is busy."""
    tab.wait_for_selector('[data-testid="stApp"]')
    tab.wait_for_selector('[data-testid="stHeading"], [data-testid="stAlert"]')
    until_quiet(tab)


def open_guest(tab, url: str) -> None:
    tab.goto(url)
    guest_settle(tab)


def videos(tab) -> list[str]:
    return tab.evaluate(f"() => {{ {DEEP_QUERY} return deep('video').map(v => v.currentSrc || v.src); }}")


def says_nothing_shared(tab, *secrets: str) -> None:
    """No player, no media address, no image, none of `secrets` on the page."""
    assert videos(tab) == []
    html = tab.content()
    assert 'src="/media/' not in html and "/media/" not in " ".join(videos(tab))
    assert tab.locator('[data-testid="stImage"] img, [data-testid="stVideo"]').count() == 0
    text = tab.locator("body").inner_text()
    for secret in secrets:
        assert secret not in text


def test_a_guest_reviews_a_shared_version_without_a_key(browser, studio):
    product, ana_key, (first, second) = studio
    shared = share(product, ana_key, "--task", first, "--allow-comments")
    other = share(product, ana_key, "--task", second)
    assert shared["created_by"] == "Ana" and shared["link"].startswith(product.ui_url + "/guest?share=")
    token = shared["link"].split("share=", 1)[1]
    code, out, _ = run("share", "list", "--data-dir", str(product.data_dir))
    assert code == 0 and shared["id"] in out and "by Ana" in out and token not in out

    # Ana's note on the version, pinned to a frame: the guest sees it, with its author.
    journal = Journal(product.data_dir / "dashboard" / "journal.sqlite3", database_url="", storage="")
    try:
        ana = journal.scoped(Scope.of_project(product.api_url, "studio", author="Ana"))
        ana.add_comment(first, "the boat wobbles here", timecode=2.5)
        # Another, made on a frame with a drawing (at 1 s: frame 24 of a 24 fps clip).
        ana.add_comment(first, "this corner", timecode=1.0, frame=24,
                        drawing=[{"kind": "arrow", "x1": 0.9, "y1": 0.9, "x2": 0.6, "y2": 0.6}])
    finally:
        journal.close()
    guest_ctx = browser.new_context(viewport={"width": 1300, "height": 1000})
    member_ctx = browser.new_context(viewport={"width": 1500, "height": 1100})
    try:
        guest = new_tab(guest_ctx)
        open_guest(guest, shared["link"])
        state = video_state(guest)
        assert state["readyState"] >= 2, state
        guest.get_by_text(PROMPT).wait_for()
        body = guest.locator("body").inner_text()
        assert not any(page in body for page in ("Compose", "Tasks", "Settings"))  # no other page
        assert OTHER_PROMPT not in guest.locator("body").inner_text()
        guest.get_by_text("the boat wobbles here").wait_for()
        assert "Ana" in guest.locator("body").inner_text()
        guest.get_by_role("textbox", name="Your name").fill("Dee")
        guest.get_by_role("textbox", name="Your name").press("Enter")
        guest_settle(guest)
        # A comment made on a frame shows that frame with its drawing over it.
        guest.get_by_role("button", name="00:01.00").click()
        guest.wait_for_function(f"""() => {{ {DEEP_QUERY} const root = deep('.tp')[0];
            return root && root.dataset.frame === '24' && root.dataset.shapes === '1'; }}""")
        # The team's timecode plays from there; the guest's comment is pinned to the frame shown.
        guest.get_by_role("button", name="00:02.50").click()
        guest.wait_for_function(f"""() => {{ {DEEP_QUERY} const v = deep('video')[0];
            return v && v.paused && !v.seeking && Math.abs(v.currentTime - 2.5) < 0.02; }}""")
        # A guest allowed to comment draws as members do: an ellipse on the paused frame goes with it.
        guest.locator(".tp-draw").click()
        guest.locator(".tp-tool[data-tool='ellipse']").click()
        drag_on(guest, guest.locator(".tp-ink"), (0.2, 0.2), (0.5, 0.6))
        guest.locator(".tp-comment").click()
        guest_settle(guest)
        guest.get_by_role("button", name="✖ not at 00:02.50").wait_for()
        # @ offers the people of this thread (Ana), not the project's others; Enter takes the name.
        box = guest.get_by_role("textbox", name="Comment")
        box.click()
        guest.keyboard.type("love the reflections @A")
        offered = guest.locator(".dailies-mentions [role=option]")
        offered.first.wait_for()
        assert offered.all_inner_texts() == ["@Ana"]
        guest.keyboard.press("Enter")
        assert box.input_value() == "love the reflections @Ana "
        guest.get_by_role("button", name="Post").click()
        guest_settle(guest)
        guest.get_by_text("Dee (guest)").wait_for()
        screenshot(guest, "share-guest")
        assert videos(guest)[0].startswith(product.ui_url + "/media/")
        # The guest's comment is the journal's, pinned at 00:02.50, and still there after a reload.
        journal = Journal(product.data_dir / "dashboard" / "journal.sqlite3", database_url="", storage="")
        try:
            thread = journal.scoped(Scope.of_project(product.api_url, "studio", author="Ana")).comments([first])[first]
        finally:
            journal.close()
        assert [(c.author, c.body, c.timecode) for c in thread] == [
            ("Ana", "the boat wobbles here", 2.5), ("Ana", "this corner", 1.0),
            ("Dee (guest)", "love the reflections @Ana", 2.5)]
        assert thread[2].frame == 60  # the frame the guest's player showed at 2.5 s
        [ellipse] = thread[2].drawing
        assert ellipse.kind == "ellipse" and ellipse.x1 < ellipse.x2 and ellipse.y1 < ellipse.y2
        open_guest(guest, shared["link"])
        guest.get_by_text("love the reflections").wait_for()
        assert guest.get_by_role("button", name="00:02.50").count() == 2

        # Another task id in the address widens nothing; altered tokens and other shares' ids open nothing.
        open_guest(guest, shared["link"] + f"&task={second}")
        guest.get_by_text(PROMPT).wait_for()
        assert len(videos(guest)) == 1 and OTHER_PROMPT not in guest.locator("body").inner_text()
        for wrong in (token[:-2] + ("AA" if not token.endswith("AA") else "BB"), token + "x", shared["id"],
                      other["id"], "", "../" + token):
            open_guest(guest, f"{product.ui_url}/guest?share={wrong}")
            guest.get_by_text("does not open anything").wait_for()
            says_nothing_shared(guest, PROMPT, OTHER_PROMPT)
        # Another page's address with a share opens the guest page, never that page.
        for path in ("/tasks", "/settings", "/review"):
            open_guest(guest, f"{product.ui_url}{path}?share={token}")
            guest.get_by_text(PROMPT).wait_for()
            assert guest.get_by_label("API key").count() == 0 and len(videos(guest)) == 1
        # Another share's token opens that share, and only it.
        open_guest(guest, other["link"] + f"&task={first}")
        guest.get_by_text(OTHER_PROMPT).wait_for()
        assert len(videos(guest)) == 1 and PROMPT not in guest.locator("body").inner_text()
        assert guest.get_by_role("textbox", name="Comment").count() == 0  # that share takes no comments

        # A member of the project sees the guest's comment on Review.
        member = new_tab(member_ctx)
        enter_key(member, product, ana_key)
        open_page(member, product, f"/review?task={first}")
        member.get_by_text("love the reflections").wait_for()
        member.get_by_text("Dee (guest)").first.wait_for()
        # The guest's comment (the second at 00:02.50) shows the guest's frame with the guest's drawing.
        member.get_by_role("button", name="00:02.50").nth(1).click()
        member.wait_for_function(f"""() => {{ {DEEP_QUERY} const root = deep('.tp')[0];
            return root && root.dataset.frame === '60' && root.dataset.shapes === '1'; }}""")
        screenshot(member, "share-member-sees-guest")

        # Revoked: the page says so and serves no file.
        code, _, err = run("share", "revoke", shared["id"], "--data-dir", str(product.data_dir))
        assert code == 0, err
        open_guest(guest, shared["link"])
        guest.get_by_text("revoked").first.wait_for()
        says_nothing_shared(guest, PROMPT)
        screenshot(guest, "share-revoked")
        code, out, _ = run("share", "list", "--data-dir", str(product.data_dir))
        assert "revoked" in out
    finally:
        guest_ctx.close()
        member_ctx.close()


def test_expired_and_locked_shares_show_nothing(browser, studio):
    product, ana_key, (first, _second) = studio
    locked = share(product, ana_key, "--task", first, "--passphrase", "open sesame")  # keeps a copy if none
    journal = Journal(product.data_dir / "dashboard" / "journal.sqlite3", database_url="", storage="")
    try:
        ana = journal.scoped(Scope.of_project(product.api_url, "studio", author="Ana"))
        made, token = ana.create_share([first], DAY, prompts={first: PROMPT})
    finally:
        journal.close()
    ctx = browser.new_context(viewport={"width": 1300, "height": 1000})
    try:
        tab = new_tab(ctx)
        link = f"{product.ui_url}/guest?share={token}"
        open_guest(tab, link)
        tab.get_by_text(PROMPT).wait_for()
        # A day passes (the share's clock moved, not the test's): its expiry is now a second ago.
        with sqlite3.connect(product.data_dir / "dashboard" / "journal.sqlite3") as db:
            db.execute("UPDATE shares SET expires_at = ? WHERE id = ?", (time.time() - 1, made.id))
        open_guest(tab, link)
        tab.get_by_text("has expired").wait_for()
        says_nothing_shared(tab, PROMPT)
        screenshot(tab, "share-expired")

        open_guest(tab, locked["link"])
        assert videos(tab) == []  # nothing before the passphrase
        for attempt in range(5):
            tab.get_by_label("Passphrase", exact=True).fill(f"guess {attempt}")
            tab.get_by_role("button", name="Open").click()
            guest_settle(tab)
        tab.get_by_text("locked").first.wait_for()
        says_nothing_shared(tab, PROMPT)
        screenshot(tab, "share-locked")
        # Locked for every browser, even with the right passphrase.
        fresh = new_tab(browser.new_context())
        open_guest(fresh, locked["link"])
        fresh.get_by_text("locked").first.wait_for()
        assert fresh.get_by_label("Passphrase", exact=True).count() == 0
        fresh.context.close()
    finally:
        ctx.close()
