"""Fragments in headless Chromium against `dailies up`: a star on a Review card reruns that card alone
(Streamlit reports a fragment run), a status that takes the card out of the inbox filter reruns the
card alone too (it says it leaves the view, and the page's next run leaves it out), and Refresh on
the Tasks page reruns the table alone. What ran is read from Streamlit's own `script_finished`
messages on the page's websocket. On the way, the card's size at two a row and "Open alone" (issue 37).
"""

from __future__ import annotations

import json

import pytest
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from dailies.journal import Journal, Scope
from tests.support.live_service import wait_until_listed
from tests.support.waiting import wait_for

from .ui import COMPONENT_QUERY as SHADOW
from .ui import choose, open_page, pick, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow]

FRAGMENT_RUN = ForwardMsg.ScriptFinishedStatus.FINISHED_FRAGMENT_RUN_SUCCESSFULLY
CARD_MAX_HEIGHT = 600  # a card with two comments, two a row at 1440 px (issue 37: 850 px and more)
# A card's own height: from its bordered block's top to where its last row ends (a row of cards
# stretches every column to the tallest), plus its bottom padding and border.
CARD_HEIGHT = """(column) => {
    const card = [...column.querySelectorAll('[data-testid=stVerticalBlock]')]
        .find(b => parseFloat(getComputedStyle(b).borderTopWidth) > 0);
    const style = getComputedStyle(card);
    const bottom = Math.max(...[...card.children].map(c => c.getBoundingClientRect().bottom));
    return bottom - card.getBoundingClientRect().top + parseFloat(style.paddingBottom)
        + parseFloat(style.borderBottomWidth); }"""
MAIN = "document.querySelector('[data-testid=stMain]')"  # what scrolls (not the window)


class RunsSeen:
    """The `script_finished` statuses the page receives, in order."""

    def __init__(self, tab) -> None:
        self.statuses: list[int] = []
        tab.on("websocket", lambda socket: socket.on("framereceived", self._frame))

    def _frame(self, payload) -> None:
        if isinstance(payload, bytes):
            msg = ForwardMsg.FromString(payload)
            if msg.WhichOneof("type") == "script_finished":
                self.statuses.append(msg.script_finished)

    def after(self, action) -> list[int]:
        self.statuses.clear()
        action()
        return list(self.statuses)


def test_a_star_and_a_status_leaving_the_filter_rerun_the_card_alone(page, product):
    with product.client() as client:
        # Portrait: a player of a fixed height letterboxes it, as "Open alone" did (issue 37).
        task_id = client.tasks.create({"model": "doubao-seedance-2-0-260128", "resolution": "480p", "duration": 4,
                                       "ratio": "9:16", "content": [{"type": "text", "text": "a card of its own"}]}).id
        client.wait(task_id, timeout=120, poll_interval=0.2)
    wait_until_listed(product.api_url, product.api_key, {task_id})  # Review lists from the next second (spec 4.2)
    journal = Journal(product.data_dir / "dashboard" / "journal.sqlite3")
    project = json.loads((product.data_dir / "keys.json").read_text())["keys"][0]["project"]
    bo = journal.scoped(Scope.of_project(product.api_url, project, author="Bo"))
    bo.add_comment(task_id, "too dark here, lift the shadows", timecode=2.0)
    bo.add_comment(task_id, "the lantern's flicker is lovely")
    runs = RunsSeen(page)
    open_page(page, product, "/review")
    pick(page, "Show", "Pending review")
    card = page.locator('[data-testid="stColumn"]').filter(has_text=task_id[-12:])  # a card per column
    card.get_by_text("the lantern's flicker is lovely").wait_for()
    assert card.evaluate(CARD_HEIGHT) <= CARD_MAX_HEIGHT

    # "Open alone", from a page scrolled down to the card: the shot alone at the top, its player in the
    # video's own shape, as large as the page allows with the whole picture in the window.
    card.get_by_role("button", name="Open alone").scroll_into_view_if_needed()
    assert page.evaluate(f"() => {MAIN}.scrollTop") > 0
    card.get_by_role("button", name="Open alone").click()
    settle(page)
    # No black bars: the player's box takes the video's shape (to the pixel) once the video says it.
    page.wait_for_function(f"""() => {{ {SHADOW} const v = q('.tp video'), r = v.length && v[0].getBoundingClientRect();
        return v.length === 1 && v[0].videoHeight > 0
            && Math.abs(r.height - r.width * v[0].videoHeight / v[0].videoWidth) < 1; }}""", timeout=15_000)
    alone = page.evaluate(f"""() => {{ {SHADOW} const r = q('.tp video')[0].getBoundingClientRect();
        return {{scrolled: {MAIN}.scrollTop, top: r.top, bottom: r.bottom}}; }}""")
    window = page.viewport_size["height"]
    assert alone["scrolled"] == 0 and 0 <= alone["top"] < window / 2, alone
    assert alone["bottom"] <= window and alone["bottom"] - alone["top"] > window / 2, alone  # large, all in view
    # "← All results" goes back to the grid.
    page.get_by_role("button", name="← All results").click()
    settle(page)

    def star() -> None:
        card.get_by_role("radio", name="4 out of 5 stars").click()
        settle(page)

    assert runs.after(star) == [FRAGMENT_RUN]
    assert list(journal.ratings([task_id])[task_id].values()) == [4]

    def approve() -> None:
        choose(page, card.get_by_role("combobox", name="Status"), "Approved")
        settle(page)

    # The card says at once that it leaves the "Pending review" view, in a run of its own (issue 37: a
    # status click reran the whole page, 0.8-1.1 s); the page's next run leaves it out.
    assert runs.after(approve) == [FRAGMENT_RUN]
    assert journal.status_of(task_id) == "approved"
    card.get_by_text("leaves this view on the next refresh", exact=False).wait_for()
    # Undo puts it back as it was, in the card's own run too; then approved again, for good.
    assert runs.after(lambda: (card.get_by_role("button", name="Undo").click(), settle(page))) == [FRAGMENT_RUN]
    assert journal.status_of(task_id) == "pending"
    assert runs.after(approve) == [FRAGMENT_RUN]
    page.get_by_role("button", name="⟳ Refresh").click()
    settle(page)
    assert card.count() == 0


def test_refresh_reruns_the_task_table_alone(page, product):
    # The product is shared by the package's tests: a task of another test ending while this page is
    # open makes the table ask for a page run of its own. Refresh is measured with nothing under way.
    with product.client() as client:
        wait_for(lambda: all(client.tasks.list(status=status, page_size=1).total == 0
                             for status in ("queued", "running")), "no task queued or running")
    runs = RunsSeen(page)
    open_page(page, product, "/tasks")

    def refresh() -> None:
        page.get_by_role("button", name="⟳ Refresh").click()
        settle(page)

    assert runs.after(refresh) == [FRAGMENT_RUN]
