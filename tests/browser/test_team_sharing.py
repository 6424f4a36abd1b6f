"""A team dashboard in headless Chromium (`dailies up --team`, one service with keys in two projects):
two people in two browser contexts at the same time each enter their own key in Settings and see
only their own tasks on Tasks and Review; a reload, a deep link and a new tab of the same browser
keep the key; the other browser never gets it; a third, fresh browser has no key at all; "Forget
this key" ends it. Screenshots go to tests/artifacts/screenshots/team-*.png.
"""

from __future__ import annotations

import stat

import pytest

from dailies.client import Client
from dailies.service.access import keys as key_store
from tests.support.live_service import wait_until_listed

from .conftest import Product, running_product
from .ui import DEEP_QUERY, grid_rows, open_page, screenshot, set_status, settle, status_shown

pytestmark = [pytest.mark.browser, pytest.mark.slow]

SMALL = {"model": "doubao-seedance-2-0-260128", "resolution": "480p", "duration": 4}


class Person:
    def __init__(self, key: str, prompt: str) -> None:
        self.key, self.prompt = key, prompt
        self.task_id = ""

    @property
    def short_id(self) -> str:
        return self.task_id[-12:]  # as the Review cards show it


@pytest.fixture(scope="module")
def team(tmp_path_factory, chromium_path) -> tuple[Product, Person, Person]:
    """The product for a team: two keys in two projects, and one finished task in each."""
    data_dir = tmp_path_factory.mktemp("team")
    alpha = Person(key_store.create_key(data_dir, "alpha").key, "alpha's kite over the dunes")
    bravo = Person(key_store.create_key(data_dir, "bravo").key, "bravo's boat in the harbour")
    with running_product(data_dir, "--team") as product:
        for person in (alpha, bravo):
            with Client(base_url=product.api_url, api_key=person.key) as client:
                person.task_id = client.tasks.create({**SMALL, "content": [{"type": "text", "text": person.prompt}]}).id
                client.wait(person.task_id, timeout=180, poll_interval=0.3)
            wait_until_listed(product.api_url, person.key, {person.task_id})  # listed a second on (spec 4.2)
        yield product, alpha, bravo


def new_tab(context):
    tab = context.new_page()
    tab.set_default_timeout(30_000)
    return tab


def enter_key(tab, product: Product, key: str) -> None:
    open_page(tab, product, "/settings")
    tab.get_by_label("API key").fill(key)
    tab.get_by_role("button", name="Save", exact=True).click()
    tab.get_by_text("Saved, and remembered in this browser", exact=False).wait_for()
    settle(tab)


def wait_for_row(tab, task_id: str) -> None:
    tab.wait_for_function("""(id) => [...document.querySelectorAll('[data-testid=stDataFrame] [role=row]')]
        .some(r => r.innerText.includes(id))""", arg=task_id)


def remembered_cookies(context) -> dict[str, str]:
    return {c["name"]: c["value"] for c in context.cookies() if c["name"].startswith("dailies_key_")}


def test_two_people_share_one_dashboard_and_nothing_else(browser, team):
    product, alpha, bravo = team
    viewport = {"width": 1440, "height": 1000}
    alpha_browser, bravo_browser = browser.new_context(viewport=viewport), browser.new_context(viewport=viewport)
    try:
        alpha_tab, bravo_tab = new_tab(alpha_browser), new_tab(bravo_browser)
        # Both browsers come to the shared dashboard: neither has a key yet.
        for tab in (alpha_tab, bravo_tab):
            open_page(tab, product, "/tasks")
            tab.get_by_text("No API key yet. This dashboard is shared", exact=False).wait_for()
        enter_key(alpha_tab, product, alpha.key)
        enter_key(bravo_tab, product, bravo.key)
        assert alpha_tab.get_by_label("API key").input_value() == ""  # the field does not keep the key
        screenshot(alpha_tab, "team-01-alpha-settings-saved")

        # Each sees their own task, never the other's, on Tasks and on Review.
        for tab, me, other in ((alpha_tab, alpha, bravo), (bravo_tab, bravo, alpha)):
            open_page(tab, product, "/tasks")
            wait_for_row(tab, me.task_id)
            assert not any(other.task_id in row for row in grid_rows(tab)), grid_rows(tab)
            open_page(tab, product, "/review")
            tab.get_by_text(me.short_id, exact=False).first.wait_for()
            assert tab.get_by_text(other.short_id, exact=False).count() == 0
            assert tab.locator("video").count() == 1
        screenshot(alpha_tab, "team-02-alpha-review")
        screenshot(bravo_tab, "team-03-bravo-review")

        # A reload, a deep link in a new tab: still alpha, with alpha's key.
        open_page(alpha_tab, product, "/tasks")
        alpha_tab.reload()
        settle(alpha_tab)
        wait_for_row(alpha_tab, alpha.task_id)
        second_tab = new_tab(alpha_browser)
        open_page(second_tab, product, f"/tasks?task={alpha.task_id}")
        second_tab.get_by_role("heading", name=alpha.task_id, exact=False).wait_for()
        assert second_tab.get_by_text("No API key yet", exact=False).count() == 0
        screenshot(second_tab, "team-04-alpha-new-tab-deep-link")

        # Alpha's link opened in bravo's browser finds nothing of alpha's.
        open_page(bravo_tab, product, f"/tasks?task={alpha.task_id}")
        bravo_tab.get_by_text(f"No task {alpha.task_id}", exact=False).first.wait_for()

        # Each browser holds one opaque token: not a key, not the other browser's token.
        alpha_cookies, bravo_cookies = remembered_cookies(alpha_browser), remembered_cookies(bravo_browser)
        assert len(alpha_cookies) == 1 and alpha_cookies.keys() == bravo_cookies.keys()
        assert alpha_cookies != bravo_cookies
        for value in (*alpha_cookies.values(), *bravo_cookies.values()):
            assert alpha.key not in value and bravo.key not in value and len(value) >= 43
        cookie = next(c for c in alpha_browser.cookies() if c["name"] in alpha_cookies)
        assert cookie["sameSite"] == "Strict"
        stored = product.data_dir / "dashboard" / "remembered_keys.json"
        assert stat.S_IMODE(stored.stat().st_mode) == 0o600
        assert not any(value in stored.read_text() for value in (*alpha_cookies.values(), *bravo_cookies.values()))

        # A third, fresh browser: no key, whatever the others saved.
        stranger_browser = browser.new_context(viewport=viewport)
        try:
            stranger = new_tab(stranger_browser)
            open_page(stranger, product, f"/review?task={alpha.task_id}")
            stranger.get_by_text("No API key yet. This dashboard is shared", exact=False).wait_for()
            assert stranger.locator("video").count() == 0
            screenshot(stranger, "team-05-fresh-browser-no-key")
            assert remembered_cookies(stranger_browser) == {}
        finally:
            stranger_browser.close()

        # Alpha forgets the key: this tab and the next reload are keyless; bravo is untouched.
        open_page(alpha_tab, product, "/settings")
        alpha_tab.get_by_role("button", name="Forget this key").click()
        alpha_tab.get_by_text("Forgotten in this browser and on the server", exact=False).wait_for()
        settle(alpha_tab)
        open_page(alpha_tab, product, "/tasks")
        alpha_tab.get_by_text("No API key yet", exact=False).wait_for()
        assert remembered_cookies(alpha_browser) == {}
        open_page(bravo_tab, product, "/tasks")
        wait_for_row(bravo_tab, bravo.task_id)
    finally:
        alpha_browser.close()
        bravo_browser.close()


def page_text(tab) -> str:
    return tab.evaluate("() => document.body.innerText")


def test_prompts_verdicts_kept_copies_and_charts_stay_with_their_key(browser, team):
    """Alpha composes (a prompt in the journal), keeps a copy, approves, then deletes the task, so
    only the journal knows it; bravo, open at the same time on the same dashboard, sees none of it."""
    product, alpha, bravo = team
    secret = "alpha's unreleased lighthouse shot"
    viewport = {"width": 1440, "height": 1000}
    alpha_browser, bravo_browser = browser.new_context(viewport=viewport), browser.new_context(viewport=viewport)
    try:
        alpha_tab, bravo_tab = new_tab(alpha_browser), new_tab(bravo_browser)
        enter_key(alpha_tab, product, alpha.key)
        enter_key(bravo_tab, product, bravo.key)
        with Client(base_url=product.api_url, api_key=alpha.key) as client:
            kept_id = client.tasks.create({**SMALL, "content": [{"type": "text", "text": "alpha's keeper"}]}).id
            client.wait(kept_id, timeout=180, poll_interval=0.3)

        # Alpha: a prompt composed and submitted, a copy kept, a verdict given.
        open_page(alpha_tab, product, "/")  # Compose is the main page
        alpha_tab.get_by_text("Text only", exact=True).click()
        settle(alpha_tab)
        alpha_tab.get_by_role("textbox", name="Prompt").fill(secret)
        alpha_tab.get_by_role("textbox", name="Prompt").press("Tab")  # Streamlit takes a text area's value on blur
        settle(alpha_tab)
        alpha_tab.get_by_role("button", name="Submit", exact=True).click()
        alpha_tab.get_by_text("Last submission: 1 of 1 task sent", exact=False).wait_for(timeout=60_000)
        open_page(alpha_tab, product, f"/tasks?task={kept_id}")
        alpha_tab.get_by_role("button", name="💾 Keep (download to the archive)").click()
        alpha_tab.wait_for_function("() => /Kept[^\\n]*video\\.mp4/.test(document.body.innerText)")
        open_page(alpha_tab, product, f"/review?task={kept_id}")
        set_status(alpha_tab, "Approved")
        status_shown(alpha_tab, "Approved")
        with Client(base_url=product.api_url, api_key=alpha.key) as client:
            client.tasks.delete(kept_id)

        # Alpha's Review still has the deleted task, from the journal: its copy plays, its verdict holds.
        open_page(alpha_tab, product, f"/review?task={kept_id}")
        alpha_tab.get_by_text(kept_id[-12:], exact=False).first.wait_for()
        alpha_tab.wait_for_function(f"() => {{ {DEEP_QUERY} return deep('video').some(v => v.readyState >= 2); }}")
        status_shown(alpha_tab, "Approved")
        screenshot(alpha_tab, "team-06-alpha-kept-after-delete")
        # Alpha's charts count alpha's tasks: the two finished ones (one deleted) and the composed one.
        open_page(alpha_tab, product, "/tasks")
        alpha_tab.get_by_text("📊 Charts", exact=True).click()
        alpha_tab.get_by_text("most recent task(s)", exact=False).first.wait_for()
        alpha_charted = alpha_tab.get_by_text("most recent task(s)", exact=False).first.inner_text()

        # Bravo, at the same moment: its one task, nothing of alpha's anywhere.
        for path in ("/review", "/tasks", "/"):
            open_page(bravo_tab, product, path)
            shown = page_text(bravo_tab)
            assert secret not in shown and kept_id not in shown, (path, shown[:2000])
            assert "Kept in the archive" not in shown and "video.mp4" not in shown, path
        # Alpha's links in bravo's browser: only the id bravo typed comes back, with "nothing here".
        for path in (f"/review?task={kept_id}", f"/tasks?task={kept_id}"):
            open_page(bravo_tab, product, path)
            bravo_tab.wait_for_function("""(id) => ['No task ', 'No result '].some(
                said => document.body.innerText.includes(said + id))""", arg=kept_id)
            shown = page_text(bravo_tab)
            assert secret not in shown and "video.mp4" not in shown and bravo_tab.locator("video").count() == 0
        open_page(bravo_tab, product, "/review")
        bravo_tab.get_by_text(bravo.short_id, exact=False).first.wait_for()
        assert bravo_tab.locator("video").count() == 1
        assert bravo_tab.get_by_text("Approved by", exact=False).count() == 0
        open_page(bravo_tab, product, "/tasks")
        bravo_tab.get_by_text("📊 Charts", exact=True).click()
        bravo_tab.get_by_text("most recent task(s)", exact=False).first.wait_for()
        bravo_charted = bravo_tab.get_by_text("most recent task(s)", exact=False).first.inner_text()
        screenshot(bravo_tab, "team-07-bravo-charts")
        assert bravo_charted.startswith("The 1 most recent"), bravo_charted
        assert alpha_charted.startswith("The 2 most recent"), alpha_charted  # the deleted one is gone
    finally:
        alpha_browser.close()
        bravo_browser.close()
