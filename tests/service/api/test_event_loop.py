"""The event loop never waits on a write: on SQLite a quick create runs on the loop only while this
process's write lock is free, otherwise it waits in the thread pool while the loop goes on serving."""

from __future__ import annotations

import threading

import anyio
import anyio.lowlevel
import pytest

from tests.service.conftest import text_body

pytestmark = pytest.mark.anyio


async def test_a_create_waits_for_the_write_lock_in_the_pool_while_lists_are_served(env):
    writer = env.services.store.write
    if env.services.store.dialect.postgres:
        with writer.held_if_free() as held:
            assert held is False  # PostgreSQL: row locks, no process lock; every write goes to the pool
        return
    taken, release = threading.Event(), threading.Event()

    def hold_the_lock() -> None:  # as a render slot's or the housekeeper's write transaction would
        with writer.begin():
            taken.set()
            release.wait(30)

    holder = threading.Thread(target=hold_the_lock)
    holder.start()
    assert taken.wait(30)
    try:
        async with anyio.create_task_group() as group:
            created = {}

            async def create() -> None:
                created["response"] = await env.create(text_body("made while the lock was taken"))

            group.start_soon(create)
            for _ in range(100):  # let the create run up to its wait (turns of the loop, not time)
                await anyio.lowlevel.checkpoint()
            # The loop is free: a list is answered while the create waits for the lock.
            listed = await env.list()
            assert listed.status_code == 200
            assert "response" not in created
            release.set()
    finally:
        release.set()
        holder.join(30)
    assert created["response"].status_code == 200, created["response"].text


async def test_a_quick_create_runs_on_the_loop_when_the_lock_is_free(env, monkeypatch):
    """Where each call runs: on SQLite a small create and a list stay on the event loop, a create with
    a callback URL (a host to resolve) goes to the pool; on PostgreSQL every call goes to the pool."""
    from dailies.service.api import routes

    pooled = []
    real = routes.run_in_threadpool

    async def counting(call, *args):
        pooled.append(call.__name__)
        return await real(call, *args)

    monkeypatch.setattr(routes, "run_in_threadpool", counting)
    response = await env.create(text_body("nothing else is writing"))
    assert response.status_code == 200
    assert (await env.list()).status_code == 200
    with_callback = await env.create(text_body("tell me", callback_url="http://127.0.0.1:9/hook"))
    assert with_callback.status_code == 200, with_callback.text
    if env.services.store.dialect.postgres:
        assert pooled == ["create", "_list_page", "create"]
    else:
        assert pooled == ["create"]  # only the one with a callback URL
    assert env.services.store.get_by_id(response.json()["id"]).status == "queued"
