"""Fixtures for service tests: an app on a temporary data directory with a fake clock, driven
in-process through httpx.ASGITransport, its workers stepped by hand so each test decides when a
task runs."""

from __future__ import annotations

import atexit
import contextlib
import shutil
import sqlite3
import tempfile
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path

import httpx
import pytest

from dailies.generator.inputs import InputError
from dailies.generator.protocol import RenderCancelled, RenderJob, RenderResult
from dailies.service.api.app import create_app
from dailies.service.db.engine import make_engine
from dailies.service.settings import Settings
from dailies.spec.catalog import find_model
from dailies.spec.models import effective
from dailies.spec.pixels import DRAFT_RESOLUTION, dimensions, estimate_tokens, frame_count, resolve_ratio

from ..conftest import Backend

TASKS = "/api/v3/contents/generations/tasks"
# Beyond the specification, under the service's own prefix: a task's callback deliveries.
OWN_TASKS = "/dailies/v1/tasks"
MODEL_2_0 = "doubao-seedance-2-0-260128"
MODEL_1_5 = "doubao-seedance-1-5-pro-251215"
MODEL_1_0 = "doubao-seedance-1-0-pro-250528"
KEY_A, KEY_B = "key-a", "key-b"
START = 1_790_000_000.0


class FakeClock:
    def __init__(self, now: float = START) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now

    def advance(self, seconds: float) -> None:
        self.now += seconds


@dataclass
class FakeGenerator:
    """Writes small stand-in files and reports what a render of the request would use; can be
    told to fail a task's inputs or to notice cancellation."""

    fail_inputs: set[str] = field(default_factory=set)
    rendered: list[str] = field(default_factory=list)
    check_cancel: bool = False

    def render(self, job: RenderJob, inputs, progress, is_cancelled) -> RenderResult:
        req = job.request
        if job.task_id in self.fail_inputs:
            raise InputError("content[1].image_url: resource download failed (HTTP 404)")
        if self.check_cancel and is_cancelled():
            raise RenderCancelled()
        self.rendered.append(job.task_id)
        resolution = DRAFT_RESOLUTION if job.draft else (req.resolution or "720p")
        ratio = resolve_ratio(req.ratio)
        width, height = dimensions(req.model, resolution, ratio)
        duration = None if req.frames is not None else effective(req, "duration")
        if duration == -1:
            duration = 5
        video = job.output_dir / "out.mp4"
        video.write_bytes(b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 64)
        last = None
        if req.return_last_frame:
            last = job.output_dir / "last.png"
            last.write_bytes(b"\x89PNG\r\n\x1a\n")
        progress(1.0)
        return RenderResult(
            video_path=video, last_frame_path=last, width=width, height=height, resolution=resolution,
            ratio=ratio, duration=duration, frames=req.frames, frame_count=frame_count(duration, req.frames),
            fps=24, seed=job.seed,
            generate_audio=bool(effective(req, "generate_audio")) and find_model(req.model).capabilities.generate_audio,
            completion_tokens=estimate_tokens(width, height, duration, req.frames, job.draft),
        )


@dataclass
class Env:
    app: object
    client: httpx.AsyncClient
    clock: FakeClock
    generator: FakeGenerator
    data_dir: Path
    backend: Backend = field(default_factory=lambda: Backend("sqlite"))

    @property
    def services(self):
        return self.app.state.services

    async def create(self, body: dict, key: str = KEY_A, **headers) -> httpx.Response:
        return await self.client.post(TASKS, json=body, headers={"Authorization": f"Bearer {key}", **headers})

    async def get(self, task_id: str, key: str = KEY_A) -> httpx.Response:
        return await self.client.get(f"{TASKS}/{task_id}", headers={"Authorization": f"Bearer {key}"})

    async def list(self, params=(), key: str = KEY_A) -> httpx.Response:
        return await self.client.get(TASKS, params=list(params), headers={"Authorization": f"Bearer {key}"})

    async def delete(self, task_id: str, key: str = KEY_A) -> httpx.Response:
        return await self.client.delete(f"{TASKS}/{task_id}", headers={"Authorization": f"Bearer {key}"})

    async def fetch(self, url: str, **kwargs) -> httpx.Response:
        """GET a result URL where it points: the app itself (local files) or the S3 server."""
        if url.startswith("http://testserver/"):
            return await self.client.get(url, **kwargs)
        async with httpx.AsyncClient() as http:
            return await http.get(url, **kwargs)

    def stored(self, task_id: str) -> set[str]:
        """The names of the task's stored result files."""
        return self.backend.stored_names(self.data_dir, task_id)

    def run_next(self, worker_id: str = "w1") -> str | None:
        """Claim and render the next task, as one render slot would."""
        row = self.services.store.claim_next(worker_id, self.clock())
        if row is None:
            return None
        self.services.workers.run_one(row, worker_id)
        return row.id

    def run_all(self) -> list[str]:
        done = []
        while (task_id := self.run_next()) is not None:
            done.append(task_id)
        return done


def text_body(prompt: str = "a red fox runs through snow", model: str = MODEL_2_0, **fields) -> dict:
    return {"model": model, "content": [{"type": "text", "text": prompt}], **fields}


@pytest.fixture
def anyio_backend():
    return "asyncio"


_SQLITE_AT_HEAD: list[Path] = []  # this process's SQLite database at the head revision, made once


def start_at_head(backend: Backend, data_dir: Path) -> None:
    """Give an in-process service on SQLite a copy of a database migrated once per process, so its start
    runs no DDL (PostgreSQL: `open_backend(at_head=True)`). What starts on an empty or an older schema
    (tests/service/db, the fault tests) never comes here."""
    if backend.database_url is not None or (data_dir / "dailies.sqlite3").exists():
        return
    if not _SQLITE_AT_HEAD:
        folder = Path(tempfile.mkdtemp(prefix="dailies-head-"))
        atexit.register(shutil.rmtree, folder, True)
        make_engine(folder / "dailies.sqlite3").dispose()
        # The backup API copies what a WAL file may still hold: the copy is one self-contained file.
        with contextlib.closing(sqlite3.connect(folder / "dailies.sqlite3")) as source, \
                contextlib.closing(sqlite3.connect(folder / "head.sqlite3")) as copy:
            source.backup(copy)
        _SQLITE_AT_HEAD.append(folder / "head.sqlite3")
    data_dir.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(_SQLITE_AT_HEAD[0], data_dir / "dailies.sqlite3")


@contextlib.asynccontextmanager
async def service_env(tmp_path, backend, generator) -> AsyncIterator[Env]:
    """The service in this process with `generator`, on `backend`, nothing in the background."""
    # From the current whole second: an S3 server checks presigned URLs against the real time.
    clock = FakeClock(float(int(time.time())))
    start_at_head(backend, tmp_path)
    # Tests' callback URLs are on loopback (a receiver, or a closed port), refused unless allowed.
    settings = Settings(data_dir=tmp_path, api_keys={KEY_A: "alpha", KEY_B: "beta"}, workers=0,
                        clock=clock, log_requests=False, allow_loopback_callbacks=True, **backend.settings())
    app = create_app(settings, generator=generator, start_background=False)
    transport = httpx.ASGITransport(app=app)
    try:
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            yield Env(app, client, clock, generator, tmp_path, backend)
    finally:
        app.state.services.stop()


@pytest.fixture
async def env(tmp_path, backend):
    async with service_env(tmp_path, backend, FakeGenerator()) as made:
        yield made
