"""Tenant isolation: keys of different projects never reach each other's tasks.

Every way a key could touch a task (read, list, filter, cancel, delete, callback log, idempotency
key, draft, quota) is tried across projects, for each way keys are configured: bare keys that
share a long prefix, named projects, `DAILIES_API_KEYS` in the environment and the keys file.
Every cross-project access answers 404, as a task that does not exist would: never 403, never 200.
"""

from __future__ import annotations

import json
import logging
from dataclasses import dataclass

import httpx
import pytest

from dailies.api_keys import fingerprint, mask
from dailies.service.access import keys as key_store
from dailies.service.api.app import create_app
from dailies.service.settings import Settings, parse_api_keys
from dailies.spec import limits as L
from tests.service.api.test_api_basics import assert_error
from tests.service.conftest import MODEL_1_5, OWN_TASKS, TASKS, Env, FakeClock, FakeGenerator, text_body

pytestmark = pytest.mark.anyio

SETUPS = ("bare keys sharing a prefix", "named projects", "environment", "keys file")


@dataclass
class TwoTenants:
    env: Env
    mine: str
    theirs: str


def _keys_for(setup: str, data_dir, monkeypatch) -> tuple[dict[str, str], str, str]:
    """(the Settings' api_keys, key of project 1, key of project 2) for one way of configuring."""
    monkeypatch.delenv("DAILIES_API_KEYS", raising=False)
    if setup == "bare keys sharing a prefix":
        return parse_api_keys("team-key-0001,team-key-0002"), "team-key-0001", "team-key-0002"
    if setup == "named projects":
        return parse_api_keys("alpha:sk-proj-aaaa1111,beta:sk-proj-aaaa2222"), "sk-proj-aaaa1111", "sk-proj-aaaa2222"
    if setup == "environment":
        monkeypatch.setenv("DAILIES_API_KEYS", "ark-0123456789-one,ark-0123456789-two")
        return {}, "ark-0123456789-one", "ark-0123456789-two"
    one, two = key_store.create_key(data_dir), key_store.create_key(data_dir)
    return {}, one.key, two.key


@pytest.fixture(params=SETUPS)
async def tenants(request, tmp_path, monkeypatch):
    api_keys, mine, theirs = _keys_for(request.param, tmp_path, monkeypatch)
    clock = FakeClock()
    # The callback URLs here are on loopback, refused unless allowed.
    settings = Settings(data_dir=tmp_path, api_keys=api_keys, workers=0, clock=clock, log_requests=True,
                        allow_loopback_callbacks=True)
    app = create_app(settings, generator=FakeGenerator(), start_background=False)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as client:
        yield TwoTenants(Env(app, client, clock, FakeGenerator(), tmp_path), mine, theirs)
    app.state.services.engine.dispose()


async def _create(env: Env, key: str, **fields) -> str:
    response = await env.create(text_body(**fields), key=key)
    assert response.status_code == 200, response.text
    return response.json()["id"]


async def test_each_key_has_a_project_of_its_own(tenants):
    projects = tenants.env.services.api_keys
    mine, theirs = projects.get(tenants.mine), projects.get(tenants.theirs)
    assert None not in (mine, theirs) and mine != theirs


async def test_another_projects_task_cannot_be_read_listed_or_filtered(tenants):
    env = tenants.env
    task_id = await _create(env, tenants.mine)
    env.clock.advance(1)
    assert_error(await env.get(task_id, key=tenants.theirs), 404, "NotFound.Task", "id")
    theirs = (await env.list(key=tenants.theirs)).json()
    assert theirs == {"total": 0, "items": []}
    by_id = (await env.list([("filter.task_ids", task_id)], key=tenants.theirs)).json()
    assert by_id == {"total": 0, "items": []}
    by_model = (await env.list([("filter.model", "doubao-seedance-2-0-260128")], key=tenants.theirs)).json()
    assert by_model["total"] == 0
    assert (await env.get(task_id, key=tenants.mine)).status_code == 200


async def test_another_projects_queued_task_cannot_be_cancelled(tenants):
    env = tenants.env
    task_id = await _create(env, tenants.mine)
    assert_error(await env.delete(task_id, key=tenants.theirs), 404, "NotFound.Task", "id")
    assert (await env.get(task_id, key=tenants.mine)).json()["status"] == "queued"


async def test_another_projects_finished_task_cannot_be_deleted_nor_its_files_reached(tenants):
    env = tenants.env
    task_id = await _create(env, tenants.mine, return_last_frame=True)
    env.run_all()
    record = (await env.get(task_id, key=tenants.mine)).json()
    assert record["status"] == "succeeded"
    assert_error(await env.delete(task_id, key=tenants.theirs), 404, "NotFound.Task", "id")
    # The files are still there for their owner: the other key's delete removed nothing.
    video = await env.client.get(record["content"]["video_url"])
    assert video.status_code == 200
    assert (await env.get(task_id, key=tenants.mine)).json()["content"] == record["content"]


async def test_another_projects_callback_log_is_not_found(tenants):
    env = tenants.env
    task_id = await _create(env, tenants.mine, callback_url="http://127.0.0.1:9/hook")
    response = await env.client.get(f"{OWN_TASKS}/{task_id}/callbacks",
                                    headers={"Authorization": f"Bearer {tenants.theirs}"})
    assert_error(response, 404, "NotFound.Task", "id")
    own = await env.client.get(f"{OWN_TASKS}/{task_id}/callbacks", headers={"Authorization": f"Bearer {tenants.mine}"})
    assert own.status_code == 200


async def test_an_idempotency_replay_with_the_same_request_as_nulls_is_the_same_task(tenants):
    """Null means "not given": a retry through a client that sends every optional field as null (the
    official SDK) is the same request, not a 409."""
    env = tenants.env
    body = text_body("a retried shot")
    first = await env.create(body, key=tenants.mine, **{"Idempotency-Key": "retry-1"})
    nulls = {**body, "seed": None, "tools": None,
             "content": [{**body["content"][0], "role": None}]}
    again = await env.create(nulls, key=tenants.mine, **{"Idempotency-Key": "retry-1"})
    assert again.status_code == 200 and again.json()["id"] == first.json()["id"]
    other = await env.create({**body, "resolution": "480p"}, key=tenants.mine, **{"Idempotency-Key": "retry-1"})
    assert other.status_code == 409


async def test_an_idempotency_key_belongs_to_its_project(tenants):
    env = tenants.env
    body = text_body("the same shot")
    first = await env.create(body, key=tenants.mine, **{"Idempotency-Key": "shared-key-1"})
    # Another body under the same key in the other project is not a conflict: a new task.
    different = await env.create(text_body("another shot"), key=tenants.theirs, **{"Idempotency-Key": "shared-key-1"})
    assert first.status_code == different.status_code == 200, different.text
    assert first.json()["id"] != different.json()["id"]
    # The same key and the same body in the other project make a task of its own, not a replay.
    env2_key = "shared-key-2"
    mine_again = await env.create(body, key=tenants.mine, **{"Idempotency-Key": env2_key})
    theirs_same = await env.create(body, key=tenants.theirs, **{"Idempotency-Key": env2_key})
    assert mine_again.json()["id"] != theirs_same.json()["id"]
    replay = await env.create(body, key=tenants.mine, **{"Idempotency-Key": "shared-key-1"})
    assert replay.json()["id"] == first.json()["id"]


async def test_another_projects_draft_cannot_be_finalised(tenants):
    env = tenants.env
    draft_id = await _create(env, tenants.mine, model=MODEL_1_5, draft=True)
    env.run_all()
    final = {"model": MODEL_1_5, "content": [{"type": "draft_task", "draft_task": {"id": draft_id}}]}
    assert_error(await env.create(final, key=tenants.theirs), 404, "NotFound.Task", "content[0].draft_task.id")
    assert (await env.create(final, key=tenants.mine)).status_code == 200


async def test_quotas_count_per_project(tenants):
    env = tenants.env
    for i in range(L.QUEUED_TASKS_PER_PROJECT_MAX):
        await _create(env, tenants.mine, prompt=f"shot {i}")
    assert_error(await env.create(text_body("one too many"), key=tenants.mine), 429, "QuotaExceeded")
    assert (await env.create(text_body("the other project's first"), key=tenants.theirs)).status_code == 200


async def test_no_part_of_a_key_is_logged_or_answered(tenants, caplog):
    env = tenants.env
    caplog.set_level(logging.DEBUG)
    answers = []
    for key in (tenants.mine, tenants.theirs):
        task_id = await _create(env, key, callback_url="http://127.0.0.1:9/hook")
        env.run_all()
        answers += [(await env.get(task_id, key=key)).text, (await env.list(key=key)).text]
    answers.append((await env.get("cgt-20250101000000-aaaaa", key=tenants.mine)).text)
    answers.append((await env.list(key=tenants.mine + "x")).text)
    said = "\n".join([r.getMessage() for r in caplog.records] + answers
                     + [str(env.services.api_keys.get(key)) for key in (tenants.mine, tenants.theirs)])
    for key in (tenants.mine, tenants.theirs):
        # Any 8 consecutive characters of the key: the old project names were made of the first 8.
        for start in range(len(key) - 7):
            assert key[start:start + 8] not in said
        assert mask(key) != key


# ---------- data made by earlier versions ----------


def _app_with(data_dir, api_keys: dict[str, str]):
    return create_app(Settings(data_dir=data_dir, api_keys=api_keys, workers=0, log_requests=False),
                      generator=FakeGenerator(), start_background=False)


async def _create_with(app, key: str) -> str:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as client:
        response = await client.post(TASKS, json=text_body(), headers={"Authorization": f"Bearer {key}"})
        assert response.status_code == 200, response.text
        return response.json()["id"]


async def _get_with(app, key: str, task_id: str) -> int:
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as client:
        return (await client.get(f"{TASKS}/{task_id}", headers={"Authorization": f"Bearer {key}"})).status_code


async def test_an_old_bare_key_project_moves_to_the_one_key_that_made_it(tmp_path):
    old = _app_with(tmp_path, {"solo-key-0001": "key-solo-key"})  # as earlier versions named it
    task_id = await _create_with(old, "solo-key-0001")
    old.state.services.engine.dispose()
    new = _app_with(tmp_path, parse_api_keys("solo-key-0001"))
    assert await _get_with(new, "solo-key-0001", task_id) == 200
    new.state.services.engine.dispose()


async def test_an_old_project_shared_by_several_keys_goes_to_nobody(tmp_path):
    old = _app_with(tmp_path, {"team-key-0001": "key-team-key", "team-key-0002": "key-team-key"})
    task_id = await _create_with(old, "team-key-0001")
    old.state.services.engine.dispose()
    new = _app_with(tmp_path, parse_api_keys("team-key-0001,team-key-0002"))
    assert await _get_with(new, "team-key-0001", task_id) == 404
    assert await _get_with(new, "team-key-0002", task_id) == 404
    row = new.state.services.store.get_by_id(task_id)
    assert row.project.startswith("unclaimed-") and "team-key" not in row.project
    new.state.services.engine.dispose()


async def test_an_explicitly_named_old_project_is_left_as_it_is(tmp_path):
    old = _app_with(tmp_path, {"team-key-0001": "key-team-key"})
    task_id = await _create_with(old, "team-key-0001")
    old.state.services.engine.dispose()
    # The operator chose the name: it is theirs to keep, shared or not.
    new = _app_with(tmp_path, parse_api_keys("key-team-key:team-key-0001,key-team-key:team-key-0002"))
    assert await _get_with(new, "team-key-0002", task_id) == 200
    new.state.services.engine.dispose()


def _write_keys_file(data_dir, keys: list[dict], projects: dict) -> None:
    (data_dir / "keys.json").write_text(json.dumps({"keys": keys, "projects": projects}))


async def test_an_old_keys_file_project_is_renamed_with_its_tasks_and_secret(tmp_path, monkeypatch):
    monkeypatch.delenv("DAILIES_API_KEYS", raising=False)
    key = "dk-Abcdefghijklmnopqrstuvwx"
    old_name = "project-abcdefgh"  # what `dailies keys create` named it before
    _write_keys_file(tmp_path, [{"key": key, "project": old_name}], {old_name: {"webhook_secret": "whsec_c2VjcmV0"}})
    old = _app_with(tmp_path, {})
    assert old.state.services.api_keys.get(key) not in (None, old_name)
    old.state.services.engine.dispose()
    projects = key_store.list_projects(tmp_path)
    assert list(projects) == [f"project-{fingerprint(key)}"]
    assert next(iter(projects.values()))["webhook_secret"] == "whsec_c2VjcmV0"


async def test_tasks_of_an_old_keys_file_project_follow_it(tmp_path, monkeypatch):
    monkeypatch.delenv("DAILIES_API_KEYS", raising=False)
    key = "dk-Zyxwvutsrqponmlkjihgfedc"
    old = _app_with(tmp_path, {key: "project-zyxwvuts"})
    task_id = await _create_with(old, key)
    old.state.services.engine.dispose()
    _write_keys_file(tmp_path, [{"key": key, "project": "project-zyxwvuts"}], {})
    new = _app_with(tmp_path, {})
    assert await _get_with(new, key, task_id) == 200
    assert new.state.services.store.get_by_id(task_id).project != "project-zyxwvuts"
    new.state.services.engine.dispose()
