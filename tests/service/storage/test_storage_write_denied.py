"""A bucket that answers but refuses every write (a policy or a key turned read-only, a disabled KMS
key, a quota) is an outage, not a verdict on each task: the tasks wait, `/readyz` says the storage is
not ready, and no task fails. The bucket probe used to ask only whether the bucket exists, which a
read-only key may, so every task failed with `ResultStorageRejected` and the whole queue drained.

A real SeaweedFS with a second identity that may only read and list."""

from __future__ import annotations

import httpx
import pytest

from dailies.client import Client
from tests.support.live_service import start_live_service
from tests.support.servers import SeaweedServer, ServerUnavailable
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow

READ_ONLY = {"name": "read-only", "credentials": [{"accessKey": "ro-key", "secretKey": "ro-secret"}],
             "actions": ["Read", "List"]}
BODY = {"model": "doubao-seedance-2-0-260128", "resolution": "480p", "duration": 4,
        "content": [{"type": "text", "text": "nowhere to put it"}]}


@pytest.fixture
def read_only_bucket(monkeypatch):
    try:
        s3 = SeaweedServer(more_identities=[READ_ONLY]).start()
    except ServerUnavailable as exc:  # the dev extra installs it; CI has it
        pytest.fail(str(exc))
    try:
        s3.create_bucket("results")
        for name, value in {**s3.aws_environment(), "AWS_ACCESS_KEY_ID": "ro-key",
                            "AWS_SECRET_ACCESS_KEY": "ro-secret"}.items():
            monkeypatch.setenv(name, value)
        yield s3
    finally:
        s3.stop()


def test_a_bucket_that_refuses_every_write_fails_no_task_and_is_not_ready(tmp_path, read_only_bucket):
    service = start_live_service(tmp_path, workers=2, storage="s3://results/p")
    try:
        with Client(base_url=service.base_url, api_key=service.api_key, max_retries=0) as client:
            ids = [client.tasks.create(BODY).id for _ in range(3)]
            root = service.base_url.removesuffix("/api/v3")
            ready = wait_for(lambda: (r := httpx.get(f"{root}/readyz", timeout=10)).status_code == 503 and r,
                             "/readyz to say the storage is not ready", 60)
            assert ready.json()["error"]["param"] == "storage"
            # Both render slots have rendered and hold their results until the storage takes them.
            registry = service.app.state.services.metrics.registry
            wait_for(lambda: registry.get_sample_value("dailies_results_waiting_for_storage") == 2,
                     "both slots' results to wait for the storage", 120)
            statuses = {client.tasks.get(task_id).status for task_id in ids}
        assert statuses <= {"queued", "running"}, statuses
        assert read_only_bucket.keys("results") == []
    finally:
        service.stop()
