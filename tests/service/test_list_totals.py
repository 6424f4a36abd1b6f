"""The list's total is the number of matching tasks, however it is computed (PostgreSQL keeps
hourly counters updated by a trigger; SQLite counts): checked against a plain count after tasks
were created across many hours, changed status, were deleted and purged."""

from __future__ import annotations

import pytest
from sqlalchemy import and_, func, select

from dailies.service.db import tasks
from dailies.spec import limits as L
from dailies.spec.models import ListTasksQuery

from .conftest import MODEL_1_5, text_body

pytestmark = pytest.mark.anyio
QUERIES = [{}, {"filter.status": "queued"}, {"filter.status": "succeeded"}, {"filter.status": "cancelled"},
           {"filter.model": MODEL_1_5}, {"filter.service_tier": "flex"}, {"filter.status": "running"}]


def counted(env, query: ListTasksQuery) -> int:
    """The same question as a plain count of the rows."""
    now = int(env.clock())
    where = [tasks.c.project == "alpha", tasks.c.service_tier == query.service_tier,
             tasks.c.created_at >= now - L.RECORD_RETENTION_SECONDS, tasks.c.created_at < now]
    if query.status:
        where.append(tasks.c.status == query.status)
    if query.model:
        where.append(tasks.c.endpoint == query.model)
    with env.services.engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(tasks).where(and_(*where))).scalar_one()


def assert_totals_agree(env) -> None:
    for params in QUERIES:
        query = ListTasksQuery.model_validate(params)
        total, _ = env.services.store.list("alpha", query, int(env.clock()))
        assert total == counted(env, query) and type(total) is int, (params, total)


async def test_totals_follow_every_change_across_hours_and_the_week_window(env):
    store = env.services.store
    ids = []
    for n in range(36):  # one task every 20 minutes: 12 hours, partial hours at both ends
        fields = {"model": MODEL_1_5, "service_tier": "flex"} if n % 5 == 0 else {}
        response = await env.create(text_body(f"shot {n}", **fields))
        assert response.status_code == 200, response.text
        ids.append(response.json()["id"])
        env.clock.advance(1200)
    assert_totals_agree(env)
    for n, task_id in enumerate(ids):
        if n % 3 == 0:
            env.run_next()  # runs the oldest queued default-tier task to success
        elif n % 3 == 1:
            await env.delete(task_id)  # cancels it if queued, deletes its record if it already ran
    store.claim_next("w1", env.clock())  # one left running
    assert_totals_agree(env)
    succeeded = [row.id for row in map(store.get_by_id, ids) if row is not None and row.status == "succeeded"]
    for task_id in succeeded[:3]:
        assert (await env.delete(task_id)).status_code == 200  # records deleted
    assert_totals_agree(env)
    # The window slides over the oldest tasks, to the second, then purge deletes them.
    for step in (L.RECORD_RETENTION_SECONDS - 12 * 3600, 1, 1799, 3600, 7200):
        env.clock.advance(step)
        assert_totals_agree(env)
    env.services.workers.sweep()
    assert_totals_agree(env)
