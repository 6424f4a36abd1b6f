"""Keys of the data directory's keys file work from the request after `dailies keys create`, with
no restart (README: a new key works within a second), and a key taken out stops working."""

from __future__ import annotations

import json

import httpx
import pytest

from dailies.service.access import keys as key_store
from dailies.service.api.app import create_app
from dailies.service.callers import KeyOptions
from dailies.service.settings import Settings
from tests.service.conftest import TASKS, FakeGenerator

pytestmark = pytest.mark.anyio


@pytest.fixture
async def service_on_keys_file(tmp_path, monkeypatch):
    monkeypatch.delenv("DAILIES_API_KEYS", raising=False)
    first = key_store.create_key(tmp_path, options=KeyOptions(name="Maya"))
    app = create_app(Settings(data_dir=tmp_path, workers=0), generator=FakeGenerator(), start_background=False)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as client:
        yield client, first, tmp_path
    app.state.services.engine.dispose()


def _as(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def test_a_key_created_while_the_service_runs_works_on_its_next_request(service_on_keys_file):
    client, first, data_dir = service_on_keys_file
    assert (await client.get(TASKS, headers=_as(first.key))).status_code == 200
    assert (await client.get(TASKS, headers=_as("dk-not-made-yet"))).status_code == 401
    second = key_store.create_key(data_dir, project="studio", options=KeyOptions(name="Ana"))
    answer = await client.get(TASKS, headers=_as(second.key))
    assert answer.status_code == 200, answer.text
    assert (await client.get(TASKS, headers=_as(first.key))).status_code == 200


async def test_a_new_keys_member_name_and_project_come_with_it(service_on_keys_file):
    client, _first, data_dir = service_on_keys_file
    second = key_store.create_key(data_dir, project="studio", options=KeyOptions(name="Ana"))
    app = client._transport.app  # type: ignore[attr-defined]
    caller = app.state.services.caller(second.key)
    assert caller is not None and caller.project == "studio" and caller.options.name == "Ana"


async def test_a_key_removed_from_the_file_stops_working(service_on_keys_file):
    client, first, data_dir = service_on_keys_file
    second = key_store.create_key(data_dir)
    assert (await client.get(TASKS, headers=_as(second.key))).status_code == 200
    path = data_dir / key_store.KEYS_FILE
    data = json.loads(path.read_text())
    data["keys"] = [entry for entry in data["keys"] if entry["key"] != second.key]
    path.write_text(json.dumps(data))
    assert (await client.get(TASKS, headers=_as(second.key))).status_code == 401
    assert (await client.get(TASKS, headers=_as(first.key))).status_code == 200


def test_keys_given_at_start_are_not_replaced_by_the_file(tmp_path):
    key_store.create_key(tmp_path)
    keys = key_store.FileKeys(tmp_path, {"configured-key": "alpha"})
    assert keys.get("configured-key") == "alpha"
    made = key_store.create_key(tmp_path)
    assert keys.get(made.key) is None


def test_no_file_means_no_keys_until_one_is_made(tmp_path):
    keys = key_store.FileKeys(tmp_path)
    assert not keys
    made = key_store.create_key(tmp_path)
    assert keys and keys.get(made.key) == made.project


async def test_members_names_the_projects_named_keys_and_nothing_of_another_project(service_on_keys_file):
    """GET /dailies/v1/members (for @name in comments), read through the typed client: names only."""
    from dailies.client import AsyncClient

    client, first, data_dir = service_on_keys_file
    ana = key_store.create_key(data_dir, project="studio", options=KeyOptions(name="Ana Lima"))
    key_store.create_key(data_dir, project="studio", options=KeyOptions(name="Bo"))
    key_store.create_key(data_dir, project="studio")  # a key with no name names no one
    key_store.create_key(data_dir, project="other", options=KeyOptions(name="Cy"))
    typed = AsyncClient(api_key=ana.key, base_url="http://testserver/api/v3", http_client=client)
    members = await typed.members()
    assert (members.project, members.members) == ("studio", ["Ana Lima", "Bo"])
    answer = await client.get("/dailies/v1/members", headers=_as(first.key))
    assert answer.json() == {"project": first.project, "members": ["Maya"]} and first.key not in answer.text
    assert (await client.get("/dailies/v1/members")).status_code == 401
