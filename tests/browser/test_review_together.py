"""Reviewing together in headless Chromium, on one team dashboard (`dailies up --team`) and one service
with three named keys: Ana and Bo in project `studio`, Cy in `other`.

Ana creates a task with the CLI. Bo's Review shows its prompt (the service's stored request); Bo stops
the player at 2 s, comments "too dark here" at that timecode and asks for changes. Ana's Review shows
the comment with Bo's name and the timecode, and clicking the timecode seeks Ana's player to 2 s. Ana
reruns the task with an edit from the dashboard (Tasks, Open in Compose): the shot shows v2 on top and
v1 below. Bo approves v2 and compares it with v1, played in sync. Cy's dashboard shows none of it.
Screenshots: tests/artifacts/screenshots/together-*.png.
"""

from __future__ import annotations

import json

import pytest

from dailies.journal import Journal
from dailies.service.access import keys as key_store
from dailies.service.callers import KeyOptions

from ..cli.running import run
from ..support.live_service import wait_until_listed
from ..support.smtp_server import smtp_server
from .conftest import running_product
from .test_e2e import submit_one
from .test_team_sharing import enter_key, new_tab
from .ui import COMPONENT_QUERY as SHADOW
from .ui import drag_on, open_page, pick, playing_gaps, screenshot, set_status, settle, status_shown

pytestmark = [pytest.mark.browser, pytest.mark.slow]

V2 = "doubao-seedance-2-0-260128"
PROMPT = "lantern over the river at night"
EDITED = "lantern over the river at night, brighter"


@pytest.fixture(scope="module")
def mail(tmp_path_factory):
    with smtp_server(tmp_path_factory.mktemp("mail")) as server:
        yield server


@pytest.fixture(scope="module")
def studio(tmp_path_factory, chromium_path, mail):
    data_dir = tmp_path_factory.mktemp("studio")
    keys = {name: key_store.create_key(data_dir, project, KeyOptions(name=name)).key
            for name, project in (("Ana", "studio"), ("Bo", "studio"), ("Cy", "other"))}
    # The service mails through the test's server (STARTTLS, a login), and sends what waits at once.
    with pytest.MonkeyPatch.context() as env:
        env.setenv("DAILIES_SMTP_URL", f"smtp://{mail.username}:{mail.password}@{mail.host}:{mail.port}")
        env.setenv("DAILIES_SMTP_CA_FILE", str(mail.ca_file))
        env.setenv("DAILIES_NOTIFICATION_WINDOW", "0.5")
        with running_product(data_dir, "--team") as product:
            code, out, err = run("create", "--base-url", product.api_url, "--api-key", keys["Ana"], "--model", V2,
                                 "--prompt", PROMPT, "--resolution", "480p", "--duration", "4", "--wait", "--poll",
                                 "0.3", "--json")
            assert code == 0, err
            yield product, keys, json.loads(out)["id"]


def card_of(tab, task_id: str):
    """The Review card showing this version (a card per column)."""
    return tab.locator('[data-testid="stColumn"]').filter(has_text=task_id[-12:])


def player_ready(tab, card) -> None:
    card.locator(".tp video").wait_for()
    tab.wait_for_function(f"() => {{ {SHADOW} return q('.tp video').length > 0 && "
                          "q('.tp video').every(v => v.readyState >= 2 && v.duration > 3.9); }")


def test_a_creative_and_a_reviewer_review_a_shot_together(browser, studio, mail, tmp_path):
    product, keys, first = studio
    viewport = {"width": 1500, "height": 1100}
    contexts = {name: browser.new_context(viewport=viewport) for name in keys}
    try:
        tabs = {name: new_tab(context) for name, context in contexts.items()}
        for name, tab in tabs.items():
            enter_key(tab, product, keys[name])
        ana, bo, cy = tabs["Ana"], tabs["Bo"], tabs["Cy"]

        # Ana asks, in Settings, to be mailed when someone mentions her or answers her.
        open_page(ana, product, "/settings")
        ana.get_by_text("Add where notifications go").wait_for()
        pick(ana, "Send by", "E-mail")
        ana.get_by_role("textbox", name="Address").fill("ana@studio.example")
        ana.get_by_role("button", name="Add", exact=True).click()
        settle(ana)
        ana.get_by_text("E-mail to ana@studio.example added.").wait_for()
        ana.get_by_text("Yours (Ana)").wait_for()
        screenshot(ana, "together-00-ana-notifications")

        # Bo sees Ana's CLI task with its prompt, stops at 2 s, comments there and asks for changes.
        open_page(bo, product, "/review")
        card = card_of(bo, first)
        card.get_by_text(PROMPT, exact=True).wait_for()
        player_ready(bo, card)
        card.locator(".tp video").evaluate("""async (v) => { v.pause();
            await new Promise(r => { v.addEventListener('seeked', r, {once: true}); v.currentTime = 2; }); }""")
        # He rings what is too dark on the frame: a rectangle drawn on the paused picture.
        card.locator(".tp-draw").click()
        card.locator(".tp-tool[data-tool='rect']").click()
        drag_on(bo, card.locator(".tp-ink"), (0.3, 0.3), (0.6, 0.7))
        card.get_by_role("button", name="Comment at 00:02.00").click()
        settle(bo)
        # Straight to writing: the card's comment box opens (a popover) pinned there, with the keys in it.
        form = bo.locator('[data-testid="stPopoverBody"]')
        box = form.get_by_role("textbox", name="Comment")
        assert box.evaluate("b => document.activeElement === b")
        assert "(at 00:02.00, with your drawing)" in box.get_attribute("placeholder")
        # He names Ana as he types: after "@A" the project's people who match are offered; Enter takes one.
        bo.keyboard.type("too dark here @A")
        offered = bo.locator(".dailies-mentions [role=option]")
        offered.first.wait_for()
        assert offered.all_inner_texts() == ["@Ana"]  # the names starting with A: not Bo, nor Cy of another project
        bo.keyboard.press("Enter")
        assert box.input_value() == "too dark here @Ana "
        form.get_by_role("button", name="Post", exact=True).click()
        settle(bo)
        assert box.input_value() == ""  # posted: the box is empty, open for another until Escape
        bo.keyboard.press("Escape")
        form.wait_for(state="detached")
        card.get_by_text("too dark here", exact=False).wait_for()  # the card reran alone, and read it back
        set_status(bo, "Changes requested", within=card)
        screenshot(bo, "together-01-bo-comments")
        journal = Journal(product.data_dir / "dashboard" / "journal.sqlite3")
        [comment] = journal.comments([first])[first]
        assert (comment.author, comment.body, comment.timecode, comment.frame) == (
            "Bo", "too dark here @Ana", 2.0, 48)
        assert [shape.kind for shape in comment.drawing] == ["rect"]
        assert journal.status_of(first) == "changes_requested"
        # The mention reached Ana's mailbox, with a link to the shot on this dashboard.
        [message] = mail.wait_for_messages(1)
        assert message["To"] == "ana@studio.example" and "Bo mentioned you" in message["Subject"]
        assert f"{product.ui_url}/review?task={first}" in message.get_content()
        assert "too dark here @Ana" in message.get_content()

        # Ana sees Bo's comment with his name and the timecode; the timecode seeks her player.
        open_page(ana, product, "/review")
        card = card_of(ana, first)
        card.get_by_text("too dark here", exact=False).wait_for()
        assert card.get_by_text("Bo", exact=False).count() >= 1
        player_ready(ana, card)
        card.get_by_role("button", name="00:02.00").click()
        ana.wait_for_function(f"() => {{ {SHADOW} return Math.abs(q('.tp video')[0].currentTime - 2) < 0.05; }}")
        # On Bo's frame, with Bo's drawing over it.
        ana.wait_for_function(f"""() => {{ {SHADOW} const root = q('.tp')[0];
            return root.dataset.frame === '48' && root.dataset.shapes === '1'; }}""")
        screenshot(ana, "together-02-ana-sees-the-comment")

        # Her inbox counts the mention in the navigation; opening it shows Bo's frame on Review.
        ana.get_by_role("link", name="Inbox (1)").click()
        settle(ana)
        ana.get_by_text("Bo mentioned you").wait_for()
        screenshot(ana, "together-02b-ana-inbox")
        ana.get_by_role("button", name="Open").click()
        settle(ana)
        ana.wait_for_url(f"**/review?task={first}&frame=48")
        ana.wait_for_function(f"() => {{ {SHADOW} const root = q('.tp')[0]; "
                              "return root && root.dataset.frame === '48'; }")
        assert ana.get_by_role("link", name="Inbox (1)").count() == 0  # read by opening it

        # Ana reruns it with an edit from the dashboard: Tasks, Open in Compose, a new prompt.
        open_page(ana, product, f"/tasks?task={first}")
        ana.get_by_role("button", name="Open in Compose (rerun or edit)").click()
        settle(ana)
        ana.get_by_role("textbox", name="Prompt").fill(EDITED)
        settle(ana)
        second = submit_one(ana)
        with product.client() as client:
            client.wait(second, timeout=180, poll_interval=0.3)
        assert journal.shot_links([second])[second].shot_id == first
        # A list shows [T - 7 days, T) to the second (spec 4.2): a small render can end within its task's
        # own second, and Review opened then rightly leaves it out. Bo opens it once the list has it.
        wait_until_listed(product.api_url, keys["Bo"], {second})

        # Bo's Review: one card for the shot, v2 on top, v1 below it in the picker; Bo approves v2.
        open_page(bo, product, "/review")
        card = card_of(bo, second)
        card.get_by_text(EDITED, exact=True).wait_for()
        newest, oldest = (card.get_by_text(f"v{n} · ", exact=False).first.bounding_box() for n in (2, 1))
        assert newest["x"] < oldest["x"] or newest["y"] < oldest["y"]  # v2 first, v1 after it
        settle(bo)  # the version picker's run is over: nothing redraws the box while its list is open
        set_status(bo, "Approved", within=card)
        assert journal.status_of(second) == "approved" and journal.status_of(first) == "changes_requested"

        # Compare with the previous version: both play as one.
        card = card_of(bo, second)
        card.get_by_role("button", name="⇆ Compare").click()
        settle(bo)
        bo.wait_for_function(f"() => {{ {SHADOW} return q('.sc video').length == 2 && "
                             "q('.sc video').every(v => v.readyState >= 2); }")
        bo.locator(".sc-play").click()
        bo.wait_for_function(f"() => {{ {SHADOW} return q('.sc video')[0].currentTime > 1.0; }}")
        bo.locator(".sc-seek").fill("0.5")
        bo.wait_for_function(f"() => {{ {SHADOW} return q('.sc video')[0].currentTime > 1.0; }}")
        gaps = playing_gaps(bo)
        assert gaps and max(gaps) < 0.1, gaps
        screenshot(bo, "together-03-bo-compares-v1-v2")

        # One shot alone, from the keyboard: X rejects, A approves again (the status box follows).
        open_page(bo, product, f"/review?task={second}")
        bo.get_by_role("button", name="✅ Approve").wait_for()
        bo.evaluate("() => document.activeElement && document.activeElement.blur()")  # the page has the keys
        bo.keyboard.press("x")
        settle(bo)
        status_shown(bo, "Rejected", "Bo")
        assert journal.status_of(second) == "rejected"
        bo.keyboard.press("a")
        settle(bo)
        status_shown(bo, "Approved", "Bo")
        assert journal.status_of(second) == "approved"
        screenshot(bo, "together-04-bo-keys")

        # Cy, in another project, sees none of it.
        open_page(cy, product, "/review")
        pick(cy, "Show", "All")
        assert cy.get_by_text("lantern over the river", exact=False).count() == 0
        assert cy.get_by_text("too dark here", exact=False).count() == 0
        assert cy.get_by_text(first[-12:], exact=False).count() == 0
        screenshot(cy, "together-05-cy-sees-nothing")
    finally:
        for context in contexts.values():
            context.close()
