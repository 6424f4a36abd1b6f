"""The retry schedule and the number of attempts each status gets."""

from __future__ import annotations

import random
import time

import pytest

from dailies.service.callbacks.delivery import retry_delay
from dailies.service.settings import Settings
from dailies.spec import limits as L
from dailies.spec.statuses import RETRIED_CALLBACK_STATUSES

pytestmark = pytest.mark.anyio


def test_default_schedule_is_short_enough_for_demos(tmp_path):
    settings = Settings(data_dir=tmp_path)
    assert settings.callback_retry_delays == (2.0, 10.0, 40.0)
    assert settings.callback_timeout == 10.0
    assert L.CALLBACK_MAX_RETRIES == 3


@pytest.mark.parametrize("delays", [(2.0, 10.0, 40.0), (0.05, 0.1, 0.2)])
def test_retry_delay_follows_the_schedule_within_20_percent_jitter(tmp_path, delays):
    settings = Settings(data_dir=tmp_path, callback_retry_delays=delays)
    rng = random.Random(1234)
    for attempts_made, base in enumerate(delays, start=1):
        draws = [retry_delay(settings, attempts_made, rng) for _ in range(500)]
        assert all(0.8 * base <= d <= 1.2 * base for d in draws)
        # Jitter: the draws spread over the band rather than sitting on the base value.
        assert min(draws) < 0.85 * base and max(draws) > 1.15 * base


def test_retry_delay_past_the_schedule_uses_its_last_step(tmp_path):
    settings = Settings(data_dir=tmp_path, callback_retry_delays=(1.0,))
    rng = random.Random(7)
    assert all(0.8 <= retry_delay(settings, n, rng) <= 1.2 for n in (1, 2, 3, 9))


def test_retry_delay_is_exponential_by_default(tmp_path):
    settings = Settings(data_dir=tmp_path)

    class Middle(random.Random):
        def uniform(self, a, b):
            return (a + b) / 2

    assert [retry_delay(settings, n, Middle()) for n in (1, 2, 3)] == [2.0, 10.0, 40.0]


async def test_max_attempts_is_4_for_succeeded_and_failed_and_1_otherwise(open_env):
    assert RETRIED_CALLBACK_STATUSES == {"succeeded", "failed"}
    async with open_env(start_callbacks=False) as env:
        url = env.receiver.url("/cb")
        ok_id = await env.create_task(url, prompt="ok")
        bad_id = await env.create_task(url, prompt="bad")
        expired_id = await env.create_task(url, prompt="expires while running")
        env.generator.fail_inputs.add(bad_id)
        assert env.run_next() == ok_id
        assert env.run_next() == bad_id
        assert env.claim().id == expired_id
        env.services.store.expire_overdue(time.time() + 10 * 86400)
        attempts = {task_id: [(e.status, e.max_attempts, e.attempts, e.state) for e in env.events(task_id)]
                    for task_id in (ok_id, bad_id, expired_id)}
    assert attempts == {
        ok_id: [("queued", 1, 0, "pending"), ("running", 1, 0, "pending"), ("succeeded", 4, 0, "pending")],
        bad_id: [("queued", 1, 0, "pending"), ("running", 1, 0, "pending"), ("failed", 4, 0, "pending")],
        expired_id: [("queued", 1, 0, "pending"), ("running", 1, 0, "pending"), ("expired", 1, 0, "pending")],
    }


async def test_no_events_without_callback_url_nor_for_cancelled(open_env):
    async with open_env(start_callbacks=False) as env:
        plain = await env.create_task(None)
        env.run_next()
        cancelled = await env.create_task(env.receiver.url("/cb"))
        response = await env.client.delete(f"/api/v3/contents/generations/tasks/{cancelled}",
                                           headers={"Authorization": "Bearer key-a"})
        assert response.status_code == 200, response.text
        assert (await env.get(cancelled)).json()["status"] == "cancelled"
        assert env.events(plain) == []
        assert [e.status for e in env.events(cancelled)] == ["queued"]
