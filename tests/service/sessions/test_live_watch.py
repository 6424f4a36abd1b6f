"""The followers' waits in one process: answered by a post here at once, by another node's change at the
next look, after their time otherwise; one database look per session however many wait; a cap on them."""

from __future__ import annotations

import asyncio

import pytest

from dailies.service.api.live_watch import LiveWatch, TooManyFollowers

pytestmark = pytest.mark.anyio


@pytest.fixture
def anyio_backend():
    return "asyncio"


class Database:
    def __init__(self) -> None:
        self.seq, self.reads = 0, 0

    def seq_of(self, session_id: str) -> int:
        self.reads += 1
        return self.seq


async def test_a_post_here_answers_every_waiter_and_one_look_serves_them_all():
    db = Database()
    watch = LiveWatch(db.seq_of, poll_s=0.05)
    waiters = [asyncio.create_task(watch.wait_past("s", 0, 30)) for _ in range(20)]
    while db.reads < 3:  # the one poller looks a few times
        await asyncio.sleep(0.01)
    assert db.reads < 10 and not any(w.done() for w in waiters)
    watch.posted("s", 1)
    await asyncio.wait_for(asyncio.gather(*waiters), 5)


async def test_another_nodes_change_is_seen_by_the_poller_and_a_quiet_session_times_out():
    db = Database()
    watch = LiveWatch(db.seq_of, poll_s=0.05)
    quiet = asyncio.create_task(watch.wait_past("s", 0, 0.2))
    await asyncio.wait_for(quiet, 5)  # nothing newer: answered at its time
    waiting = asyncio.create_task(watch.wait_past("s", 0, 30))
    await asyncio.sleep(0.1)
    db.seq = 1  # written by another node
    await asyncio.wait_for(waiting, 5)
    while watch.pollers:  # nobody waits: the poller stops, and forgets
        await asyncio.sleep(0.01)
    assert watch.seen == {} and watch.waiting == {}


async def test_beyond_the_cap_a_follower_is_told_to_ask_again():
    watch = LiveWatch(Database().seq_of, poll_s=0.05, max_waiters=2)
    held = [asyncio.create_task(watch.wait_past("s", 0, 30)) for _ in range(2)]
    await asyncio.sleep(0.05)
    with pytest.raises(TooManyFollowers) as refused:
        await watch.wait_past("s", 0, 30)
    assert refused.value.status == 429 and refused.value.headers()["Retry-After"] == "1"
    await asyncio.wait_for(watch.wait_past("other", -1, 30), 5)  # another session is not held up
    watch.posted("s", 1)
    await asyncio.wait_for(asyncio.gather(*held), 5)
