"""The Tasks page (AppTest) against a live service: each filter, paging, the total, the detail by deep
link and by row selection, and the auto-refresh decision.

The session's live service is shared with other test modules, so every listing here is narrowed to
this module's tasks with the task-ids filter (itself under test) unless a test is about that filter.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import time
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from components.common import catalogs, keep, stored_requests
from components.compose.form import BY_ENDPOINT, ENDPOINT_ID, ENDPOINT_RULES, MODEL
from components.tasks import table as task_table
from components.tasks.state_keys import VIEW_KEY
from dailies.client import Client, Tasks, UnsupportedEndpointError
from dailies.client._base import Endpoints
from dailies.journal import Journal, Submission
from dailies.spec.catalog import Region
from tests.support.live_service import start_live_service, wait_until_listed
from tests.support.waiting import wait_past_second

from .test_compose import body as compose_body
from .test_compose import compose, created_ids, rerun, send
from .test_compose import setup as compose_setup

PAGE = Path(__file__).resolve().parents[2] / "dashboard" / "views" / "tasks.py"
V2 = "doubao-seedance-2-0-260128"
V15 = "doubao-seedance-1-5-pro-251215"
V2_ENDPOINT = "ep-local-seedance-2-0-260128"
CHARTS_TAB = "📊 Charts"


def small(prompt: str, model: str = V2, **fields) -> dict:
    return {"model": model, "content": [{"type": "text", "text": prompt}], "resolution": "480p", "duration": 4,
            **fields}


@dataclass
class Seeded:
    succeeded: list[str]  # newest first, as the service lists them
    failed: str
    flex: str
    via_endpoint: str
    with_frame: str

    @property
    def default_tier(self) -> list[str]:
        return [*self.succeeded, self.failed, self.via_endpoint]


@pytest.fixture(scope="module")
def seeded(live_service) -> Seeded:
    with Client(base_url=live_service.base_url, api_key=live_service.api_key) as client:
        def run(body: dict) -> str:
            task_id = client.tasks.create(body).id
            # Tasks are created in distinct seconds so "newest first" is one fixed order.
            wait_past_second(time.time())
            return task_id

        older = run(small("a lighthouse at dusk"))
        with_frame = run(small("waves on rocks", return_last_frame=True))
        # A loopback image is refused by the local service's input guard: the task fails.
        failed = run({"model": V2, "content": [
            {"type": "text", "text": "broken input"},
            {"type": "image_url", "image_url": {"url": "http://nowhere.invalid/x.png"}, "role": "first_frame"}]})
        via_endpoint = run(small("through an endpoint", model=V2_ENDPOINT))
        flex = run(small("offline kite", model=V15, service_tier="flex"))
        for task_id in (older, with_frame, failed, via_endpoint, flex):
            client.wait(task_id, timeout=120, poll_interval=0.1)
    return Seeded(succeeded=[with_frame, older], failed=failed, flex=flex, via_endpoint=via_endpoint,
                  with_frame=with_frame)


def open_tasks(**query: str) -> AppTest:
    at = AppTest.from_file(str(PAGE), default_timeout=30)
    at.query_params.update(query)
    return at.run()


def table(at: AppTest):
    found = [d for d in at.dataframe if d.key == task_table.TABLE_KEY]
    return found[0].value if found else None


def table_ids(at: AppTest) -> list[str]:
    frame = table(at)
    return [] if frame is None else list(frame["id"])


def total(at: AppTest) -> int:
    """The total the summary line reports ('**3** task(s) match · ...')."""
    return int(re.match(r"\*\*(\d+)\*\* task\(s\) match", summary(at)).group(1))


def summary(at: AppTest) -> str:
    return next(m.value for m in at.markdown if "task(s) match" in m.value)


def only(at: AppTest, ids: list[str]) -> AppTest:
    at.text_area(key="tasks.task_ids").input("\n".join(ids))
    return at.run()


def dashboard_journal() -> Journal:
    """The journal the dashboard under test writes (DAILIES_DATA_DIR is set by `dashboard_env`)."""
    return Journal(Path(os.environ["DAILIES_DATA_DIR"]) / "dashboard" / "journal.sqlite3")


def no_errors(at: AppTest) -> None:
    assert not at.exception, [e.message for e in at.exception]
    assert not at.error, [e.value for e in at.error]


# ---------- the table ----------


def test_rows_show_journal_prompt_and_record_fields(dashboard_env, seeded):
    journal = dashboard_journal()
    journal.record_submission(Submission(
        task_id=seeded.with_frame, batch_id=None, submitted_at=time.time(), base_url=dashboard_env.base_url,
        model=V2, mode="text", prompt="waves on rocks", request=small("waves on rocks", return_last_frame=True)))
    at = only(open_tasks(), seeded.default_tier)
    no_errors(at)
    frame = table(at).set_index("id")
    assert set(frame.index) == set(seeded.default_tier)
    row = frame.loc[seeded.with_frame]
    assert row["prompt"] == "waves on rocks"
    # Not submitted from the dashboard: the prompt the service stored with the task.
    assert frame.loc[seeded.succeeded[1], "prompt"] == "a lighthouse at dusk"
    assert re.fullmatch(r"✅ succeeded (just now|\d+ min ago)", row["status"]), row["status"]
    assert (row["model"], row["resolution"], row["ratio"], row["length"]) == (V2, "480p", "16:9", "4 s")
    assert row["tokens"] == 864 * 496 * (24 * 4 + 1) // 1024
    # 2.0 at 480p: ¥46 per million tokens (docs/prices.md), from the record's usage.
    assert row["cost"] == f"¥{Decimal(int(row['tokens'])) * 46 / 10**6:.2f}"
    assert frame.loc[seeded.failed, "cost"] == "¥0.00"  # only succeeded tasks are billed
    assert row["created"] is not None and row["updated"] >= row["created"]
    assert row["link expires"].startswith("🟢 23 h") and row["record deleted"].startswith("🟢 6 d")
    assert frame.loc[seeded.failed, "status"].startswith("❌ failed ")
    assert frame.loc[seeded.failed, "link expires"] == ""
    # The records seen are saved, so kept results can show them after the service forgets them.
    assert journal.record(seeded.succeeded[1])["status"] == "succeeded"


def counting_task_requests(monkeypatch) -> list[str]:
    """The task ids whose stored request the client asks for, from here on."""
    asked: list[str] = []
    real = Client.task_request
    monkeypatch.setattr(Client, "task_request", lambda self, task_id: asked.append(task_id) or real(self, task_id))
    return asked


def test_a_task_made_with_the_api_shows_the_prompt_the_service_stored(dashboard_env, monkeypatch):
    with Client(base_url=dashboard_env.base_url, api_key=dashboard_env.api_key) as client:
        made = [client.tasks.create(small("a glacier calving, made with the SDK")).id,
                client.tasks.create({"model": V2, "content": [
                    {"type": "image_url", "image_url": {"url": "http://nowhere.invalid/x.png"},
                     "role": "first_frame"}]}).id]
    wait_until_listed(dashboard_env.base_url, dashboard_env.api_key, set(made))
    asked = counting_task_requests(monkeypatch)
    # The page waits WAIT_S for the reads, then draws without them; on a busy machine a read may take
    # longer, and this test is about what the rows show once read: it waits for the reads themselves.
    monkeypatch.setattr(stored_requests, "WAIT_S", 120.0)
    at = only(open_tasks(), made)
    no_errors(at)
    frame = table(at).set_index("id")
    assert frame.loc[made[0], "prompt"] == "a glacier calving, made with the SDK"
    assert frame.loc[made[1], "prompt"] == "(no prompt: inputs only)"
    # A stored request never changes: the next runs (and the detail) take it from the session's cache.
    at.run()
    at.session_state[task_table.TABLE_KEY] = {"selection": {"rows": [table_ids(at).index(made[0])]}}
    at.run()
    no_errors(at)
    assert any("a glacier calving, made with the SDK" in m.value for m in at.markdown)  # the detail's
    assert table(at).set_index("id").loc[made[0], "prompt"] == "a glacier calving, made with the SDK"
    assert [asked.count(task_id) for task_id in made] == [1, 1]


def test_a_service_without_stored_requests_leaves_the_prompts_empty(dashboard_env, tmp_path, monkeypatch):
    # The real Ark has no /dailies/v1/tasks/{id}/request: asked at a path this service does not have
    # either, it answers the same 404. A service of its own: a connection found without the endpoint
    # is not asked again in this process, and the shared one must keep it.
    real_path = Endpoints.task_request
    monkeypatch.setattr(Endpoints, "task_request", lambda self, task_id: dataclasses.replace(
        real_path(self, task_id), url=real_path(self, task_id).url.removesuffix("/request") + "/no-such-endpoint"))
    ark_like = start_live_service(tmp_path / "ark-like", workers=0)
    try:
        with Client(base_url=ark_like.base_url, api_key=ark_like.api_key) as client:
            made = {client.tasks.create(small(f"not told {n}")).id for n in range(3)}
        wait_until_listed(ark_like.base_url, ark_like.api_key, made)
        monkeypatch.setenv("ARK_BASE_URL", ark_like.base_url)
        monkeypatch.setenv("ARK_API_KEY", ark_like.api_key)
        asked = counting_task_requests(monkeypatch)
        at = open_tasks()
        no_errors(at)
        assert set(table_ids(at)) == made
        assert list(table(at)["prompt"]) == ["", "", ""]
        at.run()
        no_errors(at)
        assert len(asked) == 1  # one 404 says it all: not asked again for the other rows or runs
        with Client(base_url=ark_like.base_url, api_key=ark_like.api_key) as client, pytest.raises(
                UnsupportedEndpointError):
            client.task_request(next(iter(made)))  # the 404 the table met
    finally:
        ark_like.stop()


def test_status_filter(dashboard_env, seeded):
    at = only(open_tasks(), [*seeded.default_tier])
    at.selectbox(key="tasks.status").select("failed").run()
    no_errors(at)
    assert table_ids(at) == [seeded.failed]
    at.selectbox(key="tasks.status").select("succeeded").run()
    assert set(table_ids(at)) == {*seeded.succeeded, seeded.via_endpoint}
    at.selectbox(key="tasks.status").select("queued").run()
    assert table_ids(at) == [] and total(at) == 0
    assert any("No tasks match" in i.value for i in at.info)


def test_the_filters_are_in_the_address_so_a_link_opens_the_same_view(dashboard_env, seeded):
    at = open_tasks(status="failed", ids=",".join(seeded.default_tier), per_page="50")
    no_errors(at)
    assert at.selectbox(key="tasks.status").value == "failed" and table_ids(at) == [seeded.failed]
    assert at.number_input(key="tasks.page_size").value == 50 and not at.warning
    at.selectbox(key="tasks.status").select("succeeded").run()
    assert at.query_params["status"] == "succeeded" and at.query_params["per_page"] == "50"
    at.radio(key="tasks.tier").set_value("flex").run()
    assert at.query_params["tier"] == "flex"
    at = open_tasks(status="no-such-status", page="0")  # values that mean nothing are left out
    no_errors(at)
    assert at.selectbox(key="tasks.status").value == "all" and at.number_input(key="tasks.page").value == 1


def test_task_ids_filter_takes_lines_commas_and_spaces(dashboard_env, seeded):
    at = open_tasks()
    at.text_area(key="tasks.task_ids").input(f"{seeded.failed}, {seeded.succeeded[0]}\n\n{seeded.failed}").run()
    no_errors(at)
    assert table_ids(at) == [seeded.failed, seeded.succeeded[0]]  # newest first, duplicates dropped
    assert total(at) == 2
    assert "**2** task(s) match" in summary(at)


def test_model_filter_matches_the_id_the_task_was_created_with(dashboard_env, seeded):
    at = only(open_tasks(), seeded.default_tier)
    at.selectbox(key="tasks.model").select(V2).run()
    no_errors(at)
    # The endpoint task's record says model V2, but the filter matches the endpoint id it used.
    assert set(table_ids(at)) == {*seeded.succeeded, seeded.failed}
    assert table(at).set_index("id").loc[seeded.succeeded[0], "model"] == V2
    at.text_input(key="tasks.endpoint").input(V2_ENDPOINT).run()
    assert table_ids(at) == [seeded.via_endpoint]
    # This task was created outside the dashboard (by the client directly), so its journal has no
    # submission for it: the row can only show the record's model, as the service does not return
    # the endpoint a task was created through (spec 2.5). A task submitted from the dashboard shows
    # the endpoint id (test_a_task_submitted_here_through_an_endpoint_shows_the_endpoint_id).
    assert table(at).loc[0, "model"] == V2


def test_tier_filter_shows_flex_tasks_only_under_flex(dashboard_env, seeded):
    at = only(open_tasks(), [*seeded.default_tier, seeded.flex])
    no_errors(at)
    assert seeded.flex not in table_ids(at)
    assert any("flex tasks are listed only under" in c.value for c in at.caption)
    at.radio(key="tasks.tier").set_value("flex").run()
    assert table_ids(at) == [seeded.flex]
    row = table(at).iloc[0]
    assert row["model"] == V15 and row["status"].startswith("✅ succeeded ")
    at.selectbox(key="tasks.model").select(V15).run()
    assert table_ids(at) == [seeded.flex]


def test_pagination_and_total(dashboard_env, seeded):
    ids = [*seeded.succeeded, seeded.failed]  # newest first: failed, with_frame, older
    at = only(open_tasks(), ids)
    at.number_input(key="tasks.page_size").set_value(1).run()
    no_errors(at)
    assert table_ids(at) == [seeded.failed] and total(at) == 3
    assert "page **1** of **3**" in summary(at)
    at.number_input(key="tasks.page").set_value(2).run()
    assert table_ids(at) == [seeded.with_frame]
    assert "page **2** of **3**" in summary(at)
    at.number_input(key="tasks.page").set_value(3).run()
    assert table_ids(at) == [seeded.succeeded[1]]
    at.number_input(key="tasks.page").set_value(4).run()
    assert table_ids(at) == [] and total(at) == 3
    assert any("past the end" in i.value for i in at.info)
    assert "page **4**, past the last (**3**)" in summary(at)  # it said "page 4 of 3"
    # Changing a filter goes back to page 1.
    at.selectbox(key="tasks.status").select("succeeded").run()
    assert at.number_input(key="tasks.page").value == 1
    assert table_ids(at) == [seeded.with_frame]
    at.number_input(key="tasks.page_size").set_value(500).run()
    assert set(table_ids(at)) == set(seeded.succeeded)


def test_page_size_is_bounded_by_the_api(dashboard_env, seeded):
    at = open_tasks()
    widget = at.number_input(key="tasks.page_size")
    assert (widget.min, widget.max) == (1, 500)
    page = at.number_input(key="tasks.page")
    assert (page.min, page.max) == (1, 500)


def test_expired_is_no_status_filter_value(dashboard_env, seeded):
    at = open_tasks()
    options = at.selectbox(key="tasks.status").options
    assert "expired" not in " ".join(options)
    assert len(options) == 6  # all + the five filter values


# ---------- the detail ----------


def test_deep_link_opens_the_detail_with_player_frame_fields_and_countdowns(dashboard_env, seeded, keep_on_request):
    at = open_tasks(task=seeded.with_frame)
    no_errors(at)
    record = Client(base_url=dashboard_env.base_url, api_key=dashboard_env.api_key).tasks.get(seeded.with_frame)
    assert [s.value for s in at.subheader] == [f"✅ {seeded.with_frame}"]
    videos = at.get("video")
    assert len(videos) == 1 and videos[0].proto.url == record.content.video_url
    frames = [img for img in at.image if "Last frame" in img.captions]
    assert len(frames) == 1 and frames[0].value == [record.content.last_frame_url]
    assert at.json[0].value and record.id in at.json[0].value  # the first tab, open at first
    badges = " ".join(m.value for m in at.markdown)
    assert ":green-badge[🟢 Result link expires in 23 h" in badges
    assert ":green-badge[🟢 Record deleted in 6 d" in badges
    keys = {b.key for b in at.button}
    assert {"tasks.detail.keep", "tasks.detail.confirm_delete", "tasks.detail.use_video",
            "tasks.detail.use_frame"} <= keys
    assert "tasks.detail.confirm_cancel" not in keys
    # The other tabs are drawn when opened (as a click on the tab leaves it).
    at.session_state["tasks.detail.tab"] = "Copy JSON"
    at.run()
    assert any(f'"id": "{record.id}"' in c.value for c in at.code) and not at.json  # the copyable JSON
    at.session_state["tasks.detail.tab"] = "Callback deliveries"
    at.run()
    assert any("No callbacks" in c.value for c in at.caption)


def test_failed_task_shows_its_task_level_error(dashboard_env, seeded):
    at = open_tasks(task=seeded.failed)
    assert not at.exception
    errors = [e.value for e in at.error]
    assert len(errors) == 1 and "InvalidParameter" in errors[0] and "content[1].image_url" in errors[0]
    assert any("failed" in i.value for i in at.info)  # no video, and why
    assert not at.get("video")


def test_unknown_task_says_so(dashboard_env, seeded):
    at = open_tasks(task="cgt-20200101000000-zzzzz")
    assert not at.exception
    assert any("No task cgt-20200101000000-zzzzz" in e.value for e in at.error)


def test_selecting_a_row_opens_it_and_follows_it_when_rows_move(dashboard_env, seeded):
    at = only(open_tasks(), seeded.default_tier)
    ids = table_ids(at)
    target = ids[1]
    at.session_state[task_table.TABLE_KEY] = {"selection": {"rows": [1]}}
    at.run()
    assert not at.exception
    assert [s.value for s in at.subheader][0].endswith(target)
    assert at.query_params["task"] == target
    # A filter change moves the row (the endpoint task leaves the page): the same task stays selected.
    at.text_area(key="tasks.task_ids").input("\n".join([seeded.succeeded[0], target])).run()
    assert not at.exception
    new_ids = table_ids(at)
    assert [s.value for s in at.subheader][0].endswith(target)
    assert at.session_state[task_table.TABLE_KEY]["selection"]["rows"] == [new_ids.index(target)]
    # Clearing the selection closes the detail and the deep link.
    at.session_state[task_table.TABLE_KEY] = {"selection": {"rows": []}}
    at.run()
    assert not at.subheader and "task" not in at.query_params


def test_refresh_lists_anew_and_a_click_on_a_row_takes_the_listing_just_read(dashboard_env, seeded, monkeypatch):
    monkeypatch.setattr(task_table, "REFRESH_SECONDS", 600)  # "just read", however slow the machine
    at = only(open_tasks(), seeded.default_tier)
    reads = []
    real_list = Tasks.list
    monkeypatch.setattr(Tasks, "list", lambda self, **query: reads.append(query) or real_list(self, **query))
    at.button(key=task_table.REFRESH_KEY).click().run()
    assert len(reads) == 1
    at.session_state[task_table.TABLE_KEY] = {"selection": {"rows": [0]}}
    at.run()
    no_errors(at)
    assert [s.value for s in at.subheader][0].endswith(table_ids(at)[0])
    assert len(reads) == 1


def test_close_button_closes_the_deep_linked_detail(dashboard_env, seeded):
    at = open_tasks(task=seeded.failed)
    at.button(key="tasks.detail.close").click().run()
    assert not at.subheader and "task" not in at.query_params


def test_filters_survive_reruns(dashboard_env, seeded):
    at = only(open_tasks(), seeded.default_tier)
    at.selectbox(key="tasks.status").select("succeeded")
    at.radio(key="tasks.tier").set_value("default")
    at.run()
    for _ in range(2):
        at.run()
    assert at.selectbox(key="tasks.status").value == "succeeded"
    assert at.text_area(key="tasks.task_ids").value.split() == seeded.default_tier
    assert set(table_ids(at)) == {*seeded.succeeded, seeded.via_endpoint}


def test_auto_refresh_only_while_a_row_is_queued_or_running(dashboard_env, seeded, tmp_path, monkeypatch):
    at = only(open_tasks(), seeded.default_tier)
    assert "refreshing" not in summary(at)
    # A service with no worker keeps a task queued.
    idle = start_live_service(tmp_path / "idle", workers=0)
    try:
        with Client(base_url=idle.base_url, api_key=idle.api_key) as client:
            client.tasks.create(small("never runs"))
        wait_past_second(time.time())
        monkeypatch.setenv("ARK_BASE_URL", idle.base_url)
        at = open_tasks()
        no_errors(at)
        assert f"refreshing every {task_table.REFRESH_SECONDS} s" in summary(at)
        assert re.fullmatch(r"⏳ queued \d+:\d\d", table(at).iloc[0]["status"])
        assert table(at).iloc[0]["deadline"].startswith("🟢 47 h")
    finally:
        idle.stop()


def charts_of(at: AppTest) -> list:
    return at.get("arrow_vega_lite_chart") or at.get("vega_lite_chart")


def test_charts_tab_draws_both_charts_only_while_it_is_open(dashboard_env, seeded):
    at = only(open_tasks(), seeded.default_tier)
    assert not charts_of(at) and table_ids(at)  # the table's tab is open first
    at.session_state[VIEW_KEY] = CHARTS_TAB  # as a click on the tab leaves it
    at.run()
    no_errors(at)
    # Status and tokens from the listing; spend by model from it too, and per day and per person from
    # the service's ledger (a Dailies service keeps one).
    assert len(charts_of(at)) == 5 and not table_ids(at)
    for heading in ("Tasks by status over time", "Tokens by model", "Spend by model", "Spend per day",
                    "Spend per person"):
        assert any(heading in m.value for m in at.markdown), heading


# ---------- countdowns near and past zero (a service whose clock runs behind) ----------


@pytest.mark.parametrize(("hours_ago", "cell", "badge"), [
    (23.5, "🔴 29 min", ":red-badge[🔴 Result link expires in 29 min]"),
    (20, "🟠 3 h 59 min", ":orange-badge[🟠 Result link expires in 3 h 59 min]"),
    (25, "⚫ expired", ":gray-badge[⚫ Result link expires: expired]"),
])
def test_link_countdown_colours_and_expired_links_never_play(dashboard_env, tmp_path, monkeypatch, keep_on_request,
                                                             hours_ago, cell,
                                                             badge):
    # The service stamps tasks with its own clock: one running `hours_ago` behind makes a task that
    # succeeded `hours_ago` ago, as the dashboard (on the real clock) sees it.
    shift = hours_ago * 3600
    past = start_live_service(tmp_path / "past", workers=1, clock=lambda: time.time() - shift)
    try:
        with Client(base_url=past.base_url, api_key=past.api_key) as client:
            task_id = client.tasks.create(small("an old result", return_last_frame=True)).id
            client.wait(task_id, timeout=120, poll_interval=0.1)
        wait_past_second(time.time())
        monkeypatch.setenv("ARK_BASE_URL", past.base_url)
        at = open_tasks()
        row = table(at).iloc[0]
        # The render takes a moment of real time, so the minutes may be one less than the ideal.
        assert row["id"] == task_id and row["link expires"].split()[0] == cell.split()[0]
        assert row["link expires"] in (cell, cell.replace("29 min", "28 min").replace("59 min", "58 min"))
        at = open_tasks(task=task_id)
        assert not at.exception
        badges = " ".join(m.value for m in at.markdown)
        assert badge.split(" in ")[0] in badges  # colour, emoji and label; the minutes as above
        videos = at.get("video")
        if hours_ago < 24:
            assert len(videos) == 1 and "tasks.detail.keep" in {b.key for b in at.button}
        else:
            assert not videos and not [img for img in at.image if "Last frame" in img.captions]
            assert any("result link expired" in i.value for i in at.info)
            assert any("can no longer be downloaded" in e.value for e in at.error)
            assert not {"tasks.detail.keep", "tasks.detail.use_video", "tasks.detail.use_frame"} & {
                b.key for b in at.button}
    finally:
        past.stop()


def submit_through_an_endpoint(prompt: str) -> str:
    """Submit a task from the Compose page with endpoint id V2_ENDPOINT (rules of V2), as a person
    would: the dashboard's journal records the submission with the model as written."""
    at = compose(**{catalogs.CATALOG_KEY: Region.VOLCENGINE.value})
    at.selectbox(key=MODEL).set_value(BY_ENDPOINT)
    rerun(at)
    at.text_input(key=ENDPOINT_ID).input(V2_ENDPOINT)
    at.selectbox(key=ENDPOINT_RULES).set_value(V2)
    rerun(at)
    at = compose_setup(at, mode="text", prompt=prompt)
    assert compose_body(at)["model"] == V2_ENDPOINT
    send(at)
    [task_id] = created_ids(at)
    return task_id


def test_a_task_submitted_here_through_an_endpoint_shows_the_endpoint_id(dashboard_env):
    task_id = submit_through_an_endpoint("a heron through an endpoint")
    assert dashboard_journal().submission(task_id).model == V2_ENDPOINT
    with Client(base_url=dashboard_env.base_url, api_key=dashboard_env.api_key) as client:
        assert client.wait(task_id, timeout=120, poll_interval=0.1).model == V2  # the record's model
    wait_until_listed(dashboard_env.base_url, dashboard_env.api_key, {task_id})
    as_written = f"{V2_ENDPOINT} ({V2})"

    at = only(open_tasks(), [task_id])
    no_errors(at)
    assert table_ids(at) == [task_id]
    assert table(at).loc[0, "model"] == as_written
    assert table(at).loc[0, "prompt"] == "a heron through an endpoint"

    detail = open_tasks(task=task_id)
    no_errors(detail)
    assert any(f"| Model | {as_written} |" in m.value for m in detail.markdown)


def test_the_model_is_shown_as_written_with_the_model_it_ran():
    from components.common.records import model_as_written
    from dailies.journal import Submission
    from dailies.spec.models import TaskRecord

    record = TaskRecord.model_validate({"id": "cgt-20250101000000-aaaaa", "model": "doubao-seedance-2-0-260128",
                                        "status": "queued"})
    by_endpoint = Submission("cgt-20250101000000-aaaaa", None, 0.0, "http://x/api/v3", "ep-local-seedance-2-0-260128",
                             "text", "p", {})
    assert model_as_written(record, by_endpoint) == "ep-local-seedance-2-0-260128 (doubao-seedance-2-0-260128)"
    by_id = Submission("cgt-20250101000000-aaaaa", None, 0.0, "http://x/api/v3", "doubao-seedance-2-0-260128",
                       "text", "p", {})
    assert model_as_written(record, by_id) == "doubao-seedance-2-0-260128"
    assert model_as_written(record, None) == "doubao-seedance-2-0-260128"


# ---------- an idle page keeps its countdowns counting ----------


def _table_alone() -> None:
    """The Tasks table as its fragment runs: the page's run first, then (`harness.tick` set) the
    fragment alone, as its timer runs it in the browser (AppTest runs only whole pages)."""
    import streamlit as st

    from components.common import connection
    from components.tasks import filters as task_filters
    from components.tasks import table as task_table

    client, journal = connection.require_client(), connection.journal()
    filters = task_filters.render(journal)
    if st.session_state.get("harness.tick"):
        task_table._table_and_detail(client, journal, filters, False, lambda task_id: None)
    else:
        task_table.render(client, journal, filters, detail=lambda task_id: None)


def test_an_idle_table_redraws_its_countdowns_on_a_timer_without_listing_again(dashboard_env, seeded, monkeypatch):
    intervals = []
    real_fragment = task_table.st.fragment
    monkeypatch.setattr(task_table.st, "fragment", lambda *a, **kw: intervals.append(kw.get("run_every"))
                        or real_fragment(*a, **kw))
    at = AppTest.from_function(_table_alone, default_timeout=30)
    at.session_state["tasks.task_ids"] = seeded.with_frame
    at.run()
    no_errors(at)
    assert len(intervals) == 1 and 0 < (intervals[0] or 0) <= 60  # nothing is active, yet the table is redrawn
    assert table(at).iloc[0]["link expires"].startswith("🟢 23 h")

    reads = []
    real_list = Tasks.list
    monkeypatch.setattr(Tasks, "list", lambda self, **query: reads.append(query) or real_list(self, **query))
    later = time.time() + 2 * 3600  # the timer's run two hours on
    monkeypatch.setattr(task_table, "time", type("Clock", (), {"time": staticmethod(lambda: later)}))
    at.session_state["harness.tick"] = True
    at.run()
    no_errors(at)
    assert table(at).iloc[0]["link expires"].startswith("🟢 21 h")
    assert reads == []  # the same listing, drawn again


def test_the_apis_own_filters_wait_behind_an_expander_that_opens_while_one_is_set(dashboard_env):
    """Issue 37: endpoint id, tier, a task-id box and paging filled the top half of Tasks."""
    at = open_tasks()
    more = next(e for e in at.expander if e.label.startswith("More filters"))
    assert not more.proto.expanded
    assert [s.label for s in at.selectbox][:2] == ["Status", "Model"]
    at.radio(key="tasks.tier").set_value("flex").run()
    more = next(e for e in at.expander if e.label.startswith("More filters"))
    assert more.proto.expanded  # a filter in force is never hidden


# ---------- issue 37: what a person looks for leads ----------


def drawn_in_order(block) -> list:
    """The elements of a block as the page draws them, top to bottom (inner blocks walked in place)."""
    found = []
    for child in block.children.values():
        found.append(child)
        if getattr(child, "children", None):
            found.extend(drawn_in_order(child))
    return found


def test_a_selected_task_opens_above_the_table_and_refresh_leads_the_summary(dashboard_env, seeded):
    """The detail opened below the fold, under the table; the table's toolbar covered Refresh at the right."""
    at = only(open_tasks(), seeded.default_tier)
    at.session_state[task_table.TABLE_KEY] = {"selection": {"rows": [1]}}
    at.run()
    assert not at.exception
    drawn = drawn_in_order(at.main)

    def place(found) -> int:
        return next(i for i, element in enumerate(drawn) if found(element))

    refresh = place(lambda e: e.type == "button" and e.proto.id.endswith(task_table.REFRESH_KEY))
    summary_line = place(lambda e: e.type == "markdown" and "task(s) match" in e.value)
    heading = place(lambda e: e.type == "subheader" and e.value.endswith(table_ids(at)[1]))
    close = place(lambda e: e.type == "button" and e.proto.id.endswith("tasks.detail.close"))
    rows = place(lambda e: e.type == "dataframe")
    assert refresh < summary_line < heading < close < rows
    # Closed, nothing is left between the summary line and the table.
    at.button(key="tasks.detail.close").click().run()
    drawn = drawn_in_order(at.main)
    assert not at.subheader and place(lambda e: e.type == "dataframe") > place(
        lambda e: e.type == "markdown" and "task(s) match" in e.value)


def test_a_kept_result_leads_its_row_with_a_frame(dashboard_env, seeded):
    journal = dashboard_journal()
    with Client(base_url=dashboard_env.base_url, api_key=dashboard_env.api_key) as client:
        keep.keep_result(client, journal, client.tasks.get(seeded.succeeded[1]))
        with_frame = client.tasks.get(seeded.with_frame)
    at = only(open_tasks(), seeded.default_tier)
    no_errors(at)
    frame = table(at).set_index("id")
    assert frame.loc[seeded.succeeded[1], "frame"].startswith("data:image/jpeg;base64,")  # its kept video's
    # Not kept, made with return_last_frame: the live last frame, loaded by the browser.
    assert frame.loc[seeded.with_frame, "frame"] == with_frame.content.last_frame_url
    assert frame.loc[seeded.failed, "frame"] == ""
    [grid] = [d for d in at.dataframe if d.key == task_table.TABLE_KEY]
    assert json.loads(grid.proto.columns)["frame"]["type_config"]["type"] == "image"
