"""dailies_task_outcomes_total counts a task's end once its transaction has committed, and only
then: the status change that ends a task also stores its callback event, and a COMMIT lost on the
way (the database dropped the connection) is written again by the worker, so counting before the
COMMIT counted that task twice."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy import event, select
from sqlalchemy.exc import OperationalError

from dailies.service.db.tables import tasks

pytestmark = pytest.mark.anyio


def outcomes(services, status: str, code: str = "") -> float:
    for family in text_string_to_metric_families(services.metrics.exposition().decode()):
        for sample in family.samples:
            if sample.name == "dailies_task_outcomes_total" and sample.labels == {"status": status, "code": code}:
                return sample.value
    return 0.0


async def test_a_lost_commit_counts_the_outcome_once(open_env):
    async with open_env(start_callbacks=False) as env:
        task_id = await env.create_task(env.receiver.url("/hook"))
        row = env.claim()
        lost = {"commits": 1}

        def lose_the_commit(conn):  # as a database that drops the connection at COMMIT
            if lost["commits"]:
                lost["commits"] -= 1
                raise OperationalError("COMMIT", {}, Exception("server closed the connection unexpectedly"))

        event.listen(env.services.engine, "commit", lose_the_commit)
        try:
            env.services.workers.run_one(row, "w1")
        finally:
            event.remove(env.services.engine, "commit", lose_the_commit)
        assert lost["commits"] == 0  # the first COMMIT of the success was lost, and written again
        assert (await env.get(task_id)).json()["status"] == "succeeded"
        assert outcomes(env.services, "succeeded") == 1
        # Its callback event was stored once, with the change that was committed.
        assert [e.status for e in env.events(task_id)] == ["queued", "running", "succeeded"]


async def test_an_outcome_of_a_transaction_that_did_not_commit_is_never_counted(open_env):
    async with open_env(start_callbacks=False) as env:
        services = env.services
        # One connection throughout: what a rolled-back transaction noted stays on it, and must not
        # be counted by the next transaction that commits there.
        with services.engine.connect() as conn:
            with conn.begin() as transaction:
                services.metrics.task_ended(conn, "failed", "SomeError")
                transaction.rollback()
            with conn.begin():
                conn.execute(select(tasks.c.id).limit(1))
            assert outcomes(services, "failed", "SomeError") == 0
            with conn.begin():
                services.metrics.task_ended(conn, "failed", "SomeError")
                assert outcomes(services, "failed", "SomeError") == 0  # not before the COMMIT
            assert outcomes(services, "failed", "SomeError") == 1
