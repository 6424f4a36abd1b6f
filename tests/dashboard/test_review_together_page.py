"""Review together on one team dashboard (AppTest, a live service with three named keys): Ana and Bo
in project `studio`, Cy in `other`. Ana creates a task with the CLI; Bo's Review shows its prompt, Bo
comments at 2 s and asks for changes; Ana's Review shows the comment with Bo's name and timecode, and
its timecode asks Ana's player to go there; Ana's edit from the dashboard becomes v2 of the shot,
shown on top; Bo approves v2; Cy's Review shows none of it. (tests/browser/test_review_together.py
does the same in Chromium, with the players themselves.)"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from components.common import connection, handoff
from components.review.comments import PINNED_KEY
from dailies.client import Client
from dailies.journal import Journal, Scope, Submission
from dailies.service.callers import KeyOptions
from tests.support.live_service import start_live_service, wait_until_listed

from ..cli.running import run
from .test_compose import created_ids, send
from .test_compose import setup as compose_setup
from .test_isolation import as_read

VIEWS = Path(__file__).resolve().parents[2] / "dashboard" / "views"
KEYS = {"key-ana-0001-studio": ("studio", "Ana"), "key-bo-0002-studio": ("studio", "Bo"),
        "key-cy-0003-other": ("other", "Cy")}
ANA, BO, CY = KEYS
V2 = "doubao-seedance-2-0-260128"
PROMPT = "lantern over the river at night"


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    svc = start_live_service(tmp_path_factory.mktemp("studio"), workers=1,
                             api_keys={key: project for key, (project, _) in KEYS.items()},
                             key_options={key: KeyOptions(name=name) for key, (_, name) in KEYS.items()})
    yield svc
    svc.stop()


@pytest.fixture
def team(monkeypatch, tmp_path, service):
    monkeypatch.setenv("ARK_BASE_URL", service.base_url)
    monkeypatch.setenv("DAILIES_DASHBOARD_TEAM", "1")
    monkeypatch.setenv("DAILIES_DATA_DIR", str(tmp_path / "dashboard-data"))
    return service


def session(page: str, key: str, **state) -> AppTest:
    at = AppTest.from_file(str(VIEWS / page), default_timeout=30)
    at.session_state[connection.API_KEY_KEY] = key  # as Settings leaves it after Save
    for name, value in state.items():
        at.session_state[name] = value
    at.run()
    assert not at.exception, [e.message for e in at.exception]
    return at


def cards(at: AppTest) -> list[str]:
    return [w.key.removeprefix("review.status.") for w in at.selectbox if str(w.key).startswith("review.status.")]


def shown(at: AppTest) -> str:
    return "\n".join(as_read(str(e.value)) for kind in ("markdown", "caption") for e in getattr(at, kind))


def test_two_members_review_a_shot_together_and_another_project_sees_nothing(team, tmp_path):
    code, out, err = run("create", "--base-url", team.base_url, "--api-key", ANA, "--model", V2, "--prompt", PROMPT,
                         "--resolution", "480p", "--duration", "4", "--wait", "--poll", "0.2", "--json")
    assert code == 0, err
    first = json.loads(out)["id"]
    wait_until_listed(team.base_url, ANA, {first})

    # Bo: the prompt from the service, a comment pinned at 2 s ("Comment at" under the player), changes asked.
    bo = session("review.py", BO)
    assert cards(bo) == [first] and f"**{PROMPT}**" in shown(bo) and "by Ana" in shown(bo)
    bo.session_state[PINNED_KEY.format(first)] = 2.0  # what the player's "Comment at 00:02.00" leaves
    bo.text_area(key=f"review.comment.{first}").input("too dark here")
    bo.button(key=f"review.post.{first}").click().run()
    bo.selectbox(key=f"review.status.{first}").set_value("changes_requested").run()
    assert not bo.exception

    # Ana: Bo's comment with his name and the timecode, which asks her player to go to 2 s.
    ana = session("review.py", ANA)
    assert "**Bo**" in shown(ana) and "too dark here" in shown(ana)
    [timecode] = [b for b in ana.button if str(b.key).startswith("review.tc.")]
    assert timecode.label == "00:02.00"
    timecode.click().run()
    [player] = [e for e in ana.get("bidi_component") if e.key == f"review.player.{first}"]
    assert json.loads(player.proto.json)["seek_to"] == 2.0
    assert ana.selectbox(key=f"review.status.{first}").value == "changes_requested"

    # Ana edits it from the dashboard (Tasks' Open in Compose hands over the request and the lineage).
    compose = AppTest.from_file(str(VIEWS.parent / "app.py"), default_timeout=30)
    compose.session_state[connection.API_KEY_KEY] = ANA
    compose.session_state[handoff.PREFILL_KEY] = {
        "request": {"model": V2, "content": [{"type": "text", "text": PROMPT}], "resolution": "480p",
                    "duration": 4}, "note": "", "lineage": {"parent": first, "how": None}}
    compose.run()
    [second] = created_ids(send(compose_setup(compose, prompt=PROMPT + ", brighter")))
    with Client(base_url=team.base_url, api_key=ANA) as client:
        client.wait(second, timeout=120, poll_interval=0.1)
    wait_until_listed(team.base_url, ANA, {first, second})

    # Bo: one card for the shot, v2 on top (v1 in the picker); Bo approves v2.
    bo = session("review.py", BO)
    assert cards(bo) == [second]
    picker = bo.segmented_control(key=f"review.version.{first}")
    assert [label.split(" · ")[0] for label in picker.options] == ["v2", "v1"] and picker.value == second
    bo.selectbox(key=f"review.status.{second}").set_value("approved").run()
    journal = Journal(tmp_path / "dashboard-data" / "dashboard" / "journal.sqlite3")
    assert journal.status_of(second) == "approved" and journal.status_of(first) == "changes_requested"
    assert [(c.author, c.timecode) for c in journal.comments([first])[first]] == [("Bo", 2.0)]

    # Cy, in another project on the same dashboard: nothing of it.
    cy = session("review.py", CY)
    assert cards(cy) == [] and PROMPT not in shown(cy) and "too dark" not in shown(cy)
    cy_alone = session("review.py", CY)
    cy_alone.query_params["task"] = first
    cy_alone.run()
    assert PROMPT not in shown(cy_alone) and any(f"No result {first}" in e.value for e in cy_alone.error)


def test_a_mention_reaches_the_inbox_of_the_one_named_and_no_other_project(team, tmp_path):
    """Inbox (dashboard/views/inbox.py): Bo names Ana in a comment on her version and approves it; Ana's
    inbox shows both, bold until read; ✓ reads one, "Mark all read" the rest; Cy, in another project,
    has nothing; the navigation's count follows."""
    from components.common.pages import ALL, nav_title

    journal = Journal(tmp_path / "dashboard-data" / "dashboard" / "journal.sqlite3")
    try:
        studio = Scope.of_project(team.base_url, "studio", author="Ana")
        ana = journal.scoped(studio)
        bo = journal.scoped(Scope.of_project(team.base_url, "studio", author="Bo"))
        ana.record_submission(Submission(task_id="cgt-inbox-1", batch_id=None, submitted_at=1.0,
                                         base_url=team.base_url, model=V2, mode="text", prompt="paper boats",
                                         request={"model": V2}))
        bo.add_comment("cgt-inbox-1", "@Ana the reflection flickers here", timecode=1.0, frame=24)
        bo.set_status("cgt-inbox-1", "approved")
    finally:
        journal.close()

    inbox = session("inbox.py", ANA)
    text = shown(inbox)
    assert "**Bo mentioned you**" in text and "**Bo set your version to Approved**" in text
    assert "the reflection flickers here" in text and "paper boats" in text
    assert "2 unread of 2" in text
    mention = next(b for b in inbox.button if str(b.key).startswith("inbox.read.mention:"))
    mention.click().run()
    assert "1 unread of 2" in shown(inbox)
    inbox.segmented_control(key="inbox.show").set_value("All").run()
    assert "Bo mentioned you" in shown(inbox) and "**Bo mentioned you**" not in shown(inbox)  # read: not bold
    inbox.button(key="inbox.all_read").click().run()
    assert "0 unread of 2" in shown(inbox)
    inbox.segmented_control(key="inbox.show").set_value("Unread").run()
    assert any("Nothing waiting for you" in str(i.value) for i in inbox.info)

    cy = session("inbox.py", CY)
    assert "0 unread of 0" in shown(cy) and "Bo" not in shown(cy)
    assert [nav_title(p, 3) for p in ALL] == ["Compose", "Tasks", "Review", "Live", "Inbox (3)", "Settings"]
    assert [nav_title(p, 0) for p in ALL] == ["Compose", "Tasks", "Review", "Live", "Inbox", "Settings"]
