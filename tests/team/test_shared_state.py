"""What the processes of a team deployment share through PostgreSQL alone: the schema (made once,
whoever starts first), keys and secrets, and wake-ups (LISTEN/NOTIFY)."""

from __future__ import annotations

import subprocess
import sys
import time

import anyio
import httpx
import pytest
from sqlalchemy import inspect, select, text

from dailies.service.access import shared_secrets
from dailies.service.api.app import create_app
from dailies.service.callers import KeyOptions
from dailies.service.db.engine import make_engine
from dailies.service.db.migrate import head
from dailies.service.db.schema import SERVICE
from dailies.service.db.tables import api_keys
from dailies.service.runtime.wakeups import CALLBACKS_CHANNEL, TASKS_CHANNEL, Wakeups
from dailies.service.settings import Settings

from ..conftest import Backend

pytestmark = pytest.mark.anyio
TASKS = "/api/v3/contents/generations/tasks"
BODY = {"model": "doubao-seedance-2-0-260128", "content": [{"type": "text", "text": "a lantern"}]}


@pytest.fixture
def team(request) -> Backend:
    from ..conftest import open_backend

    with open_backend(request, "pg+s3") as opened:
        yield opened


@pytest.fixture
def anyio_backend():
    return "asyncio"


async def eventually(request, timeout: float = 10.0) -> httpx.Response:
    """The first answer to `request()` that is not a 401, or the last one after `timeout` s."""
    deadline = time.monotonic() + timeout
    while (response := await request()).status_code == 401 and time.monotonic() < deadline:
        await anyio.sleep(0.05)
    return response


def test_processes_starting_at_once_create_the_schema_once(team):
    # Six interpreters open the fresh database at the same moment; each makes the schema unless
    # another already holds the lock or has made it.
    script = "import sys; from dailies.service.db.engine import make_engine; make_engine(sys.argv[1]).dispose()"
    procs = [subprocess.Popen([sys.executable, "-c", script, team.database_url], stderr=subprocess.PIPE, text=True)
             for _ in range(6)]
    errors = [p.communicate(timeout=120)[1] for p in procs]
    assert [p.returncode for p in procs] == [0] * 6, errors
    engine = make_engine(team.database_url)
    try:
        assert {"tasks", "idempotency", "callback_events", "callback_attempts", "api_keys",
                "project_secrets", "service_secrets"} <= set(inspect(engine).get_table_names())
        with engine.connect() as conn:  # one version row: the revisions ran once
            assert conn.execute(select(text("version_num")).select_from(text(SERVICE.version_table))).scalars() \
                .all() == [head(SERVICE)]
    finally:
        engine.dispose()


async def test_a_key_made_on_one_machine_works_on_every_api_node_and_is_not_stored(team, tmp_path):
    nodes = [create_app(Settings(data_dir=tmp_path / f"node-{n}", api_keys={"env-key-000001": "ops"}, workers=0,
                                 log_requests=False, **team.settings()), start_background=False)
             for n in range(2)]
    try:
        # Made after both nodes started, as `dailies keys create --database-url` would: each node
        # looks a key it does not know up again at most once a second.
        made = shared_secrets.create_key(nodes[0].state.services.engine, "studio")
        for node in nodes:
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=node), base_url="http://node") as client:
                created = await eventually(lambda c=client: c.post(TASKS, json=BODY,
                                                                   headers={"Authorization": f"Bearer {made.key}"}))
                assert created.status_code == 200, created.text
                env_key = await client.get(TASKS, headers={"Authorization": "Bearer env-key-000001"})
                assert env_key.status_code == 200
                wrong = await client.get(TASKS, headers={"Authorization": f"Bearer {made.key}x"})
                assert wrong.status_code == 401
        with nodes[0].state.services.engine.connect() as conn:
            stored = conn.execute(select(api_keys)).all()
        assert [(row.project, made.key in str(tuple(row))) for row in stored] == [("studio", False)]
        # The project's member names, for @name: a named key made on one machine is named on the others.
        named = shared_secrets.create_key(nodes[0].state.services.engine, "studio", KeyOptions(name="Ana"))
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=nodes[1]), base_url="http://node") as client:
            await eventually(lambda: client.get(TASKS, headers={"Authorization": f"Bearer {named.key}"}))
            members = await client.get("/dailies/v1/members", headers={"Authorization": f"Bearer {made.key}"})
            assert members.json() == {"project": "studio", "members": ["Ana"]}
    finally:
        for node in nodes:
            node.state.services.stop()


def test_secrets_are_made_once_and_shared_by_every_process(team, tmp_path):
    first, second = (create_app(Settings(data_dir=tmp_path / name, workers=0, api_keys={"k-000000001": "p"},
                                         **team.settings()), start_background=False) for name in ("a", "b"))
    try:
        one, two = first.state.services, second.state.services
        assert one.webhook_secret("alpha") == two.webhook_secret("alpha")
        assert one.webhook_secret("alpha") != one.webhook_secret("beta")
        assert one.signer.signature("/files/x/video.mp4", 1) == two.signer.signature("/files/x/video.mp4", 1)
        assert not (tmp_path / "a" / "keys.json").exists() and not (tmp_path / "a" / "url-signing.key").exists()
    finally:
        first.state.services.stop()
        second.state.services.stop()


def test_a_notification_committed_anywhere_wakes_the_listening_process(team, tmp_path):
    settings = Settings(data_dir=tmp_path, **team.settings())
    listening_engine, other_engine = make_engine(team.database_url), make_engine(team.database_url)
    listener, other = Wakeups(listening_engine, settings), Wakeups(other_engine, settings)
    listener.start()
    try:
        # The listener wakes everyone once it listens; wait for that, then for the real thing.
        assert listener.tasks.wait(0, 30)
        for channel, wakeup in ((TASKS_CHANNEL, listener.tasks), (CALLBACKS_CHANNEL, listener.callbacks)):
            seen = wakeup.generation()
            with other_engine.begin() as conn:
                other.announce(conn, channel)
                assert wakeup.generation() == seen  # not before commit
            assert wakeup.wait(seen, 30), f"no wake-up on {channel}"
    finally:
        listener.stop()
        listening_engine.dispose()
        other_engine.dispose()
