"""What the hostile-input suite (test_hostile_*.py) shares: one service per category, tasks made
before the first hostile request, and the checks every answer and every category must pass.

Each category (module) gets its own app on a fresh data directory with a fake clock, driven in
process through httpx.ASGITransport (no request-line or header limits in the way, so the
service's own limits are what is tested). Before any case runs, a few tasks are made: one
succeeded with a last frame, one queued, one failed. When the category is over, the service must
answer /healthz, and those tasks must read exactly as they did before (records, list, files).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from urllib.parse import unquote

import httpx
import pytest

from dailies.service.api.app import create_app
from dailies.service.settings import Settings

from .conftest import KEY_A, KEY_B, MODEL_1_5, TASKS, FakeClock, FakeGenerator, text_body

AUTH = {"Authorization": f"Bearer {KEY_A}"}
JSON = {**AUTH, "Content-Type": "application/json"}
# Requests a category expects to be accepted are made with this key: its project is not checked
# by `assert_intact`, which sees only the first project's tasks.
KEY_C = "key-c"
ACCEPTED = {"Authorization": f"Bearer {KEY_C}", "Content-Type": "application/json"}


def assert_refused(response: httpx.Response, param: str, status: int = 400, code: str | None = None) -> dict:
    """A 4xx in the error shape of spec section 7, naming `param`; returns the error object."""
    assert 400 <= response.status_code < 500, (response.status_code, response.text[:500])
    assert response.status_code == status, response.text[:500]
    error = response.json()["error"]
    assert set(error) == {"message", "type", "param", "code"}, error
    assert all(isinstance(error[k], str) for k in error), error
    assert error["param"] == param, error
    if code is not None:
        assert error["code"] == code, error
    assert error["message"].endswith(f"Request ID: {response.headers['X-Request-Id']}")
    return error


async def raw_get(app, path: str, query: str = "", headers: dict | None = None) -> httpx.Response:
    """GET a raw (percent-encoded) path and query exactly as given, the path decoded as a server
    does: httpx resolves `../` before sending and refuses URLs over 64 KB; a hostile client does
    neither."""
    path_bytes = path.encode()
    sent = [(b"host", b"testserver")] + [(k.lower().encode(), v.encode()) for k, v in (headers or {}).items()]
    scope = {"type": "http", "asgi": {"version": "3.0"}, "http_version": "1.1", "method": "GET", "scheme": "http",
             "path": unquote(path), "raw_path": path_bytes, "query_string": query.encode(),
             "root_path": "", "headers": sent, "client": ("127.0.0.1", 50000), "server": ("testserver", 80)}
    started: dict = {}
    body = bytearray()

    async def receive():
        return {"type": "http.request", "body": b"", "more_body": False}

    async def send(message):
        if message["type"] == "http.response.start":
            started.update(message)
        elif message["type"] == "http.response.body":
            body.extend(message.get("body", b""))

    await app(scope, receive, send)
    return httpx.Response(started["status"], headers=started["headers"], content=bytes(body),
                          request=httpx.Request("GET", "http://testserver/raw"))


@dataclass
class Hostile:
    client: httpx.AsyncClient
    app: object
    clock: FakeClock
    generator: FakeGenerator
    seeded: dict[str, dict] = field(default_factory=dict)  # task id -> its record before the category
    listed: dict = field(default_factory=dict)
    listed_flex: dict = field(default_factory=dict)

    @property
    def services(self):
        return self.app.state.services

    async def post(self, content: bytes | str, headers: dict | None = None) -> httpx.Response:
        data = content.encode() if isinstance(content, str) else content
        return await self.client.post(TASKS, content=data, headers=JSON if headers is None else headers)

    async def create(self, body: object, key: str = KEY_A, **headers) -> httpx.Response:
        return await self.client.post(TASKS, json=body, headers={"Authorization": f"Bearer {key}", **headers})

    async def get(self, task_id: str, key: str = KEY_A) -> httpx.Response:
        return await self.client.get(f"{TASKS}/{task_id}", headers={"Authorization": f"Bearer {key}"})

    async def list(self, params=(), key: str = KEY_A) -> httpx.Response:
        return await self.client.get(TASKS, params=list(params), headers={"Authorization": f"Bearer {key}"})

    def run_next(self) -> str:
        """Render the next task: one a case just made (the seeded queued task is on the flex
        tier, which is claimed after every default one)."""
        row = self.services.store.claim_next("hostile-worker", self.clock())
        assert row is not None and row.id not in self.seeded, "a case must make a task before running one"
        self.services.workers.run_one(row, "hostile-worker")
        return row.id

    async def seed(self) -> None:
        """The tasks every category must leave as they were."""
        done = (await self.create(text_body("made before the hostile requests", return_last_frame=True))).json()["id"]
        self.run_next()
        failed = (await self.create(text_body("this one fails its inputs"))).json()["id"]
        self.generator.fail_inputs.add(failed)
        self.run_next()
        queued = (await self.create(text_body("this one stays queued", model=MODEL_1_5, service_tier="flex"))
                  ).json()["id"]
        self.clock.advance(1)
        for task_id in (done, failed, queued):
            self.seeded[task_id] = (await self.get(task_id)).json()
        assert [self.seeded[t]["status"] for t in (done, failed, queued)] == ["succeeded", "failed", "queued"]
        self.listed = (await self.list()).json()
        self.listed_flex = (await self.list([("filter.service_tier", "flex")])).json()

    async def assert_intact(self) -> None:
        """The service is up, and the tasks made before the category read as they did."""
        health = await self.client.get("/healthz")
        assert health.status_code == 200 and health.json() == {"status": "ok"}
        for task_id, record in self.seeded.items():
            assert (await self.get(task_id)).json() == record
        # Only the seeded tasks were made: whatever the category sent, nothing else was created.
        assert (await self.list()).json() == self.listed
        assert (await self.list([("filter.service_tier", "flex")])).json() == self.listed_flex
        assert (await self.list(key=KEY_B)).json()["total"] == 0
        succeeded = next(r for r in self.seeded.values() if r["status"] == "succeeded")
        for url in succeeded["content"].values():
            assert (await self.client.get(url)).status_code == 200


@pytest.fixture(scope="module", name="anyio_backend")
def module_anyio_backend():
    # Module-scoped, so that one service (and one event loop) serves a whole category.
    return "asyncio"


@pytest.fixture(scope="module", name="hostile")
async def hostile_service(tmp_path_factory, anyio_backend):
    clock = FakeClock()
    generator = FakeGenerator()
    keys = {KEY_A: "alpha", KEY_B: "beta", KEY_C: "gamma"}
    settings = Settings(data_dir=tmp_path_factory.mktemp("hostile"), api_keys=keys, workers=0, clock=clock,
                        log_requests=False)
    app = create_app(settings, generator=generator, start_background=False)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as client:
        env = Hostile(client, app, clock, generator)
        await env.seed()
        yield env
        await env.assert_intact()
    app.state.services.stop()
