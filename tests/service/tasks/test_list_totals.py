"""The list's total is the number of matching tasks, however it is computed (both backends keep
hourly counters updated by triggers): checked against a plain count after tasks
were created across many hours, changed status, were deleted and purged."""

from __future__ import annotations

import pytest
from sqlalchemy import and_, func, select

from dailies.service.db.tables import tasks
from dailies.spec import limits as L
from dailies.spec.models import ListTasksQuery
from tests.service.conftest import MODEL_1_5, text_body

pytestmark = pytest.mark.anyio
QUERIES = [{}, {"filter.status": "queued"}, {"filter.status": "succeeded"}, {"filter.status": "cancelled"},
           {"filter.model": MODEL_1_5}, {"filter.service_tier": "flex"}, {"filter.status": "running"}]


def counted(env, query: ListTasksQuery) -> int:
    """The same question as a plain count of the rows."""
    return _plain_count(env, "alpha", query)


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


def _random_rows(rng, now: int, count: int) -> list[dict]:
    """Task rows of two projects spread over the last 8 days (some already outside the window),
    with every status, two tiers and three endpoints."""
    statuses = ["queued", "running", "succeeded", "failed", "cancelled", "expired"]
    endpoints = ["doubao-seedance-2-0-260128", MODEL_1_5, "ep-local-seedance-1-5-pro-251215"]
    rows = []
    for n in range(count):
        created = now - rng.randrange(8 * 24 * 3600)
        tier = rng.choice(["default", "default", "flex"])
        rows.append({
            "id": f"cgt-rand-{n:06d}", "project": rng.choice(["alpha", "alpha", "beta"]), "model": MODEL_1_5,
            "endpoint": rng.choice(endpoints), "status": rng.choice(statuses), "service_tier": tier,
            "tier_rank": 0 if tier == "default" else 1, "request": "{}", "seed": 1, "draft": False,
            "execution_expires_after": 172800, "deadline_at": created + 172800, "created_at": created,
            "updated_at": created, "attempts": 0,
        })
    return rows


async def test_totals_equal_a_plain_count_over_random_data(env):
    """Random rows written straight to the table (the triggers see them as any insert), then
    random status changes and deletes, at random moments: every total equals COUNT(*)."""
    import random

    from sqlalchemy import delete, insert, update

    from dailies.service.db.writer import writer

    rng = random.Random(20261123)
    engine = env.services.engine
    now = int(env.clock())
    rows = _random_rows(rng, now, 1500)
    with writer(engine).begin() as conn:
        conn.execute(insert(tasks), rows)
    statuses = ["queued", "running", "succeeded", "failed", "cancelled", "expired"]
    for _round in range(4):
        with writer(engine).begin() as conn:
            for row in rng.sample(rows, 150):
                conn.execute(update(tasks).where(tasks.c.id == row["id"]).values(status=rng.choice(statuses)))
            for row in rng.sample(rows, 40):
                conn.execute(delete(tasks).where(tasks.c.id == row["id"]))
        env.clock.advance(rng.randrange(1, 5 * 3600))
        for params in QUERIES + [{"filter.model": "ep-local-seedance-1-5-pro-251215", "filter.status": "failed"},
                                 {"filter.service_tier": "flex", "filter.status": "succeeded"}]:
            query = ListTasksQuery.model_validate(params)
            for project in ("alpha", "beta"):
                total, _ = env.services.store.list(project, query, int(env.clock()))
                assert total == _plain_count(env, project, query), (project, params)


def _plain_count(env, project: str, query: ListTasksQuery) -> int:
    now = int(env.clock())
    where = [tasks.c.project == project, tasks.c.service_tier == query.service_tier,
             tasks.c.created_at >= now - L.RECORD_RETENTION_SECONDS, tasks.c.created_at < now]
    if query.status:
        where.append(tasks.c.status == query.status)
    if query.model:
        where.append(tasks.c.endpoint == query.model)
    with env.services.engine.connect() as conn:
        return conn.execute(select(func.count()).select_from(tasks).where(and_(*where))).scalar_one()
