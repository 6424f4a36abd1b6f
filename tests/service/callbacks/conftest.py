"""Fixtures for callback tests: a real receiver on loopback and an app whose callback queue runs
for real (its deliverer threads POST over TCP) while the test steps the render worker by hand.

The clock is the real one, because retry delays are real; the retry schedule is shortened in the
settings so that a test with every retry takes well under a second.
"""

from __future__ import annotations

import time
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass
from pathlib import Path

import anyio
import httpx
import pytest
from sqlalchemy import select

from dailies.service.api.app import create_app
from dailies.service.db.tables import callback_events
from dailies.service.settings import Settings
from tests.service.callbacks.receiver import Receiver
from tests.service.conftest import KEY_A, KEY_B, OWN_TASKS, TASKS, FakeGenerator, text_body

PUBLIC_URL = "http://testserver"  # the same base as the test client's, so callback bodies equal GET bodies
WAIT_SECONDS = 10.0


async def eventually(probe: Callable[[], object], timeout: float = WAIT_SECONDS, what: str = "condition"):
    """Poll `probe` until it returns something truthy; fail after `timeout` with the last value."""
    deadline = time.monotonic() + timeout
    while True:
        value = probe()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:g} s waiting for {what}; last value: {value!r}")
        await anyio.sleep(0.01)


@dataclass
class CallbackEnv:
    app: object
    client: httpx.AsyncClient
    generator: FakeGenerator
    data_dir: Path
    receiver: Receiver

    @property
    def services(self):
        return self.app.state.services

    @property
    def settings(self) -> Settings:
        return self.services.settings

    async def create(self, body: dict, key: str = KEY_A) -> httpx.Response:
        return await self.client.post(TASKS, json=body, headers={"Authorization": f"Bearer {key}"})

    async def create_task(self, callback_url: str | None, key: str = KEY_A, **fields) -> str:
        if callback_url is not None:
            fields["callback_url"] = callback_url
        response = await self.create(text_body(**fields), key)
        assert response.status_code == 200, response.text
        return response.json()["id"]

    async def get(self, task_id: str, key: str = KEY_A) -> httpx.Response:
        return await self.client.get(f"{TASKS}/{task_id}", headers={"Authorization": f"Bearer {key}"})

    async def callback_log(self, task_id: str, key: str = KEY_A) -> httpx.Response:
        return await self.client.get(f"{OWN_TASKS}/{task_id}/callbacks", headers={"Authorization": f"Bearer {key}"})

    def claim(self, worker_id: str = "w1"):
        """queued -> running, as a render slot's claim."""
        return self.services.store.claim_next(worker_id, self.settings.clock())

    def run_next(self, worker_id: str = "w1") -> str | None:
        """Claim and render the next task: queued -> running -> succeeded (or failed)."""
        row = self.claim(worker_id)
        if row is None:
            return None
        self.services.workers.run_one(row, worker_id)
        return row.id

    def events(self, task_id: str) -> list:
        with self.services.engine.connect() as conn:
            return conn.execute(select(callback_events).where(callback_events.c.task_id == task_id)
                                .order_by(callback_events.c.seq)).all()

    async def settled(self, task_id: str, events: int, timeout: float = WAIT_SECONDS) -> list[dict]:
        """Wait until the task has `events` callback events and none is pending (each delivered or
        out of attempts); return the delivery log."""
        def probe():
            rows = self.events(task_id)
            done = len(rows) == events and all(r.state != "pending" for r in rows)
            return self.services.callbacks.log_for(task_id) if done else None
        return await eventually(probe, timeout, f"the {events} callbacks of {task_id} to settle")


@pytest.fixture
def anyio_backend():
    return "asyncio"


@pytest.fixture
def receiver():
    r = Receiver()
    yield r
    r.close()


@pytest.fixture
def open_env(tmp_path, receiver, backend):
    """`async with open_env(**settings) as env`: an app on `tmp_path` (or `data_dir=`), its callback
    queue started unless `start_callbacks=False`. Several may be opened in turn on one directory."""

    @asynccontextmanager
    async def _open(start_callbacks: bool = True, generator: FakeGenerator | None = None,
                    **overrides) -> AsyncIterator[CallbackEnv]:
        # The receiver listens on loopback, which the service refuses unless allowed.
        values = dict(data_dir=tmp_path, api_keys={KEY_A: "alpha", KEY_B: "beta"}, workers=0,
                      public_url=PUBLIC_URL, callback_retry_delays=(0.05, 0.1, 0.2), callback_timeout=5.0,
                      poll_interval=0.02, log_requests=False, allow_loopback_callbacks=True, **backend.settings())
        values.update(overrides)
        settings = Settings(**values)
        generator = generator or FakeGenerator()
        app = create_app(settings, generator=generator, start_background=False)
        services = app.state.services
        if start_callbacks:
            services.callbacks.start()
        try:
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url=PUBLIC_URL) as client:
                yield CallbackEnv(app, client, generator, settings.data_dir, receiver)
        finally:
            receiver.released.set()  # let any held answer go, so stopping does not wait on it
            services.stop()
            receiver.released.clear()

    return _open


@pytest.fixture
async def env(open_env):
    async with open_env() as e:
        yield e
