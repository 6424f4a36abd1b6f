"""The gateway's two upstream limits end to end: 40 tasks from 4 member keys (two projects) through a
gateway with upstream concurrency 2 and upstream RPM 20, in front of an upstream Dailies (a ready clip
for every render: ReadyClip) that would take more at once.

The RPM's window is shortened (`upstream_rpm_window`; the service's is 60 s) so that the test takes
well under a minute: the upstream here counts its creates in windows of WINDOW (15) seconds, and the
gateway paces them in windows of the same length, each create counted from when the upstream answered
it (an upper bound of its arrival: upstream_pacing.py), so no transit time can put 21 in one of the
upstream's windows. The window is long enough that the concurrency cap alone would let more than 20
creates into it, so both limits are what holds the gateway back.

What the upstream saw is read from its own store, not sampled: every status change of its tasks is
timed as it happens (the store's change hook, the one its callbacks and metrics hang on), so a task is
upstream from its create to its end, and no overlap can slip between two looks. Its creates are also
counted from the records' own `created_at` (whole seconds)."""

from __future__ import annotations

import threading
import time
from collections import Counter

import httpx
import pytest
from sqlalchemy import select

from dailies.generator.protocol import RenderResult
from dailies.service.callers import KeyOptions
from dailies.service.db.tables import tasks, upstream_creates
from dailies.service.gateway.forwarding import UpstreamKey
from dailies.service.gateway.pacing import Pacer
from dailies.spec.statuses import TERMINAL
from tests.support.live_service import start_live_service
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow

UPSTREAM_KEY = "upstream-team-key"
MEMBERS = {"member-key-alice": ("studio", "alice"), "member-key-bob": ("studio", "bob"),
           "member-key-carol": ("lab", "carol"), "member-key-dan": ("lab", "dan")}
TASKS_EACH = 10
CONCURRENCY = 2
RPM = 20
WINDOW = 15.0  # the upstream's window, in whole seconds (the records' created_at are whole seconds)
MARGIN = 0.0  # the gateway's window is this much longer: none is needed
# The smallest clip: 1.0 Pro's fewest frames, at 480p.
SMALL = {"model": "doubao-seedance-1-0-pro-250528", "resolution": "480p", "frames": 29}
TASKS_PATH = "/contents/generations/tasks"


def most_in_a_window(times: list[float], window: float) -> int:
    """The most of `times` inside any half-open window [t, t + window)."""
    times = sorted(times)
    most, first = 0, 0
    for last, t in enumerate(times):
        while times[first] <= t - window:
            first += 1
        most = max(most, last - first + 1)
    return most


def deepest(intervals: list[tuple[float, float]]) -> int:
    """The most of the [start, end) intervals that overlap at one moment."""
    edges = sorted([(start, 1) for start, _ in intervals] + [(end, -1) for _, end in intervals])
    depth = most = 0
    for _, step in edges:  # at one moment an end (-1) sorts before a start (+1)
        depth += step
        most = max(most, depth)
    return most


class ReadyClip:
    """The upstream's renderer here: one small clip made once and copied for every task. The test is
    about the gateway's limits: with the preview renderer a busy machine made each task slow enough
    that the concurrency cap alone kept the creates under the RPM, and "the RPM was reached" failed.

    Copying is so quick that a task could end before the gateway hands over the next one, and the cap
    was never reached (CI: at most 1 handed over at once). So the first render waits until a second
    one is running beside it: the cap is reached whenever the gateway lets two through, and a gateway
    that never does keeps it waiting until BARRIER_S, after which the test fails on the count."""

    BARRIER_S = 60.0

    def __init__(self) -> None:
        from tests.service.gateway.test_upstream import tiny_mp4

        self.clip = tiny_mp4()
        self.first_pair = threading.Barrier(CONCURRENCY)
        self.started = 0
        self.lock = threading.Lock()

    def render(self, job, inputs, progress, is_cancelled) -> RenderResult:
        with self.lock:
            self.started += 1
            in_first_pair = self.started <= CONCURRENCY
        if in_first_pair:
            try:
                self.first_pair.wait(self.BARRIER_S)
            except threading.BrokenBarrierError:
                pass  # the assertion on what the upstream saw says what went wrong
        video = job.output_dir / "video.mp4"
        video.write_bytes(self.clip)
        progress(1.0)
        return RenderResult(video_path=video, last_frame_path=None, width=64, height=48, resolution="480p",
                            ratio="4:3", duration=None, frames=29, frame_count=3, fps=24, seed=job.seed,
                            generate_audio=False, completion_tokens=1000)


def test_forty_tasks_from_four_members_stay_within_the_upstreams_concurrency_and_rpm(tmp_path, monkeypatch):
    # More render slots upstream than the cap: only the gateway can keep the upstream at 2.
    upstream = start_live_service(tmp_path / "upstream", workers=3, api_keys={UPSTREAM_KEY: "team"},
                                  generator=ReadyClip())
    changes: list[tuple[float, str, str]] = []  # (time, upstream task id, status), as the upstream's store made them
    store = upstream.app.state.services.store
    on_change = store.on_change

    def timed(conn, row) -> None:
        changes.append((time.time(), row.id, row.status))
        on_change(conn, row)

    store.on_change = timed
    # The gateway's pacing, watched: its hooks are given when it is made, so the Pacer they are bound
    # to is wrapped before (only a gateway paces: the upstream service never calls it).
    waits: list[float] = []
    admit, answered_upstream = Pacer.admit, Pacer.answered
    # The gateway's pacing rows (seq -> at), each read right after it is written: the gateway drops a
    # row two windows after its time, and on a busy machine the test outlasts that. A row's time only
    # moves forward (its create's answer), so the latest time read is the one it ends with.
    paced_rows: dict[int, float] = {}
    rows_lock = threading.Lock()

    def keep_rows() -> None:
        with gateway.app.state.services.engine.connect() as conn:  # made before any create is paced
            rows = conn.execute(select(upstream_creates.c.seq, upstream_creates.c.at)).all()
        with rows_lock:
            for seq, at in rows:
                paced_rows[seq] = max(at, paced_rows.get(seq, at))

    def recorded(pacer: Pacer, key_name: str, model: str) -> float:
        wait = admit(pacer, key_name, model)
        if wait:
            waits.append(wait)
        else:
            keep_rows()
        return wait

    def answered_and_kept(pacer: Pacer, key_name: str, model: str) -> None:
        answered_upstream(pacer, key_name, model)
        keep_rows()

    monkeypatch.setattr(Pacer, "admit", recorded)
    monkeypatch.setattr(Pacer, "answered", answered_and_kept)
    gateway = start_live_service(
        tmp_path / "gateway", workers=4, api_keys={key: project for key, (project, _) in MEMBERS.items()},
        key_options={key: KeyOptions(name=name) for key, (_, name) in MEMBERS.items()},
        upstream_url=upstream.base_url, upstream_keys=[UpstreamKey("main", UPSTREAM_KEY)],
        upstream_concurrency=CONCURRENCY, upstream_rpm=RPM, upstream_rpm_window=WINDOW + MARGIN,
        # A task's end reaches the gateway by the upstream's callback, so a place frees at once.
        upstream_calls_back=True, upstream_poll=(0.5, 1.0))
    answered: Counter[int] = Counter()  # every status code a member got, creates and reads
    lock = threading.Lock()

    def count(response: httpx.Response) -> None:
        with lock:
            answered[response.status_code] += 1

    members = {key: httpx.Client(base_url=gateway.base_url, headers={"Authorization": f"Bearer {key}"},
                                 event_hooks={"response": [count]}, timeout=30) for key in MEMBERS}
    started = time.monotonic()
    try:
        created: dict[str, list[str]] = {key: [] for key in MEMBERS}
        for n in range(TASKS_EACH):
            for key, client in members.items():
                response = client.post(TASKS_PATH, json={**SMALL, "content": [
                    {"type": "text", "text": f"{MEMBERS[key][1]}, take {n}"}]})
                assert response.status_code == 200, response.text
                created[key].append(response.json()["id"])

        def statuses() -> dict[str, str]:
            seen = {}
            for key, client in members.items():
                page = client.get(TASKS_PATH, params={"page_size": 100}).json()
                seen.update({item["id"]: item["status"] for item in page["items"] if item["id"] in created[key]})
            return seen

        ended = wait_for(lambda: (s := statuses()) and len(s) == len(MEMBERS) * TASKS_EACH
                         and all(v in TERMINAL for v in s.values()) and s,
                         "every member's tasks to end", timeout=240, interval=0.5)
        took = time.monotonic() - started
    finally:
        for client in members.values():
            client.close()
        gateway.stop()
        upstream.stop()

    assert Counter(ended.values()) == {"succeeded": len(MEMBERS) * TASKS_EACH}
    assert set(answered) == {200}, answered  # no member ever saw a 429 (nor anything else)

    # The upstream: each task from its create to its end, and while it ran.
    created_at = {task_id: at for at, task_id, status in changes if status == "queued"}
    ended_at = {task_id: at for at, task_id, status in changes if status in TERMINAL}
    running_at = {task_id: at for at, task_id, status in changes if status == "running"}
    assert len(created_at) == len(ended_at) == len(MEMBERS) * TASKS_EACH  # one upstream task per member task
    handed_over = deepest([(created_at[t], ended_at[t]) for t in created_at])
    running = deepest([(running_at[t], ended_at[t]) for t in running_at])
    assert handed_over <= CONCURRENCY and running <= CONCURRENCY, (handed_over, running)
    assert handed_over == CONCURRENCY  # reached: the cap is what held the others back

    # Creates: the gateway's own record (exact, in its own window), what the upstream's store saw and its
    # records' created_at (whole seconds s .. s + WINDOW - 1 lie inside one window of WINDOW seconds).
    # Every create's row, as read when it was last written: each at the time it counts from (its answer).
    keep_rows()
    admitted_at = list(paced_rows.values())
    assert len(admitted_at) == len(MEMBERS) * TASKS_EACH
    paced = most_in_a_window(list(admitted_at), WINDOW + MARGIN)
    seen_upstream = most_in_a_window(list(created_at.values()), WINDOW)
    engine = upstream.app.state.services.engine
    with engine.connect() as conn:
        whole_seconds = conn.execute(select(tasks.c.created_at)).scalars().all()
    engine.dispose()
    in_records = most_in_a_window([float(s) for s in whole_seconds], WINDOW)
    print(f"\n{len(created_at)} tasks in {took:.1f} s; upstream at most {handed_over} handed over and {running} "
          f"running at once; most creates in one window: gateway {paced} in {WINDOW + MARGIN:g} s, upstream "
          f"{seen_upstream} (its store) and {in_records} (created_at) in {WINDOW:g} s; {len(waits)} waits")
    assert paced <= RPM and seen_upstream <= RPM and in_records <= RPM, (paced, seen_upstream, in_records)
    assert paced == RPM and waits  # the RPM was reached too: creates waited for the window to move
