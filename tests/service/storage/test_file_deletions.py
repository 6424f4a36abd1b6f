"""Deleting a finished task while the storage does not answer (a bucket outage): the delete is done
and answered as done (a 503 would have the client retry into a 404), and its files are deleted by a
later sweep once the storage answers again, on the local disk and on S3 alike. The purge's too."""

from __future__ import annotations

import contextlib
import time

import httpx
import pytest
from botocore.exceptions import EndpointConnectionError
from sqlalchemy import select

from dailies.service.api.app import create_app
from dailies.service.settings import Settings
from dailies.service.storage.deletions import files_to_delete
from dailies.service.storage.results import VIDEO_NAME
from tests.service.conftest import KEY_A, TASKS, FakeClock, FakeGenerator, text_body

pytestmark = pytest.mark.anyio


@contextlib.asynccontextmanager
async def service(tmp_path, backend):
    clock = FakeClock(float(int(time.time())))
    settings = Settings(data_dir=tmp_path, api_keys={KEY_A: "alpha"}, workers=0, clock=clock, log_requests=False,
                        **backend.settings())
    app = create_app(settings, generator=FakeGenerator(), start_background=False)
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver",
                                     headers={"Authorization": f"Bearer {KEY_A}"}) as http:
            yield app.state.services, http, clock
    finally:
        app.state.services.stop()


class BucketDown:
    """The storage's delete while the bucket does not answer; its other calls as they are."""

    def __init__(self, storage) -> None:
        self.storage = storage
        self.real_delete = storage.delete

    def __enter__(self):
        def down(task_ids, quick=False):
            raise EndpointConnectionError(endpoint_url="http://bucket.invalid")

        self.storage.delete = down
        return self

    def __exit__(self, *exc) -> None:
        self.storage.delete = self.real_delete


def waiting(services) -> list[str]:
    with services.engine.connect() as conn:
        return list(conn.execute(select(files_to_delete.c.task_id)).scalars())


async def succeeded_task(services, http, clock) -> str:
    task_id = (await http.post(TASKS, json=text_body("to be deleted"))).json()["id"]
    services.workers.run_one(services.store.claim_next("w1", clock()), "w1")
    assert (await http.get(f"{TASKS}/{task_id}")).json()["status"] == "succeeded"
    return task_id


async def test_a_delete_while_the_bucket_is_down_is_done_and_its_files_follow_later(tmp_path, backend):
    async with service(tmp_path, backend) as (services, http, clock):
        task_id = await succeeded_task(services, http, clock)
        with BucketDown(services.storage):
            answer = await http.delete(f"{TASKS}/{task_id}")
            assert answer.status_code == 200 and answer.json() == {}
            assert (await http.get(f"{TASKS}/{task_id}")).status_code == 404
            assert waiting(services) == [task_id]
            services.workers.sweep()  # still down: kept for the next sweep
            assert waiting(services) == [task_id]
        assert services.storage.exists(task_id, VIDEO_NAME)
        services.workers.sweep()
        assert waiting(services) == [] and not services.storage.exists(task_id, VIDEO_NAME)


async def test_the_purges_files_wait_for_the_bucket_too(tmp_path, backend):
    async with service(tmp_path, backend) as (services, http, clock):
        task_id = await succeeded_task(services, http, clock)
        clock.advance(8 * 86400)  # past the records' 7 days
        with BucketDown(services.storage):
            services.workers.sweep()
            assert (await http.get(f"{TASKS}/{task_id}")).status_code == 404
            assert waiting(services) == [task_id]
        services.workers.sweep()
        assert waiting(services) == [] and not services.storage.exists(task_id, VIDEO_NAME)
