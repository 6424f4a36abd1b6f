"""Render slots and the housekeeper.

Each slot is a thread that claims the next task (a guarded UPDATE), renders it with the
generator, stores the files (storage.py: a local folder or a bucket) and records the outcome
(guarded by its worker id, so a worker that lost the task cannot overwrite anyone). An idle slot
sleeps until a task is queued (wakeups.py). One heartbeat thread refreshes every running task of
this process in one statement; when a refresh finds a task no longer ours (expired, recovered
after a stall), its render is told to stop. The housekeeper expires overdue tasks, puts back
tasks of dead workers (failing a task whose runs were lost `TASK_ATTEMPTS_MAX` times: it is
probably what kills them) and purges week-old records and files. A slot stopped cleanly puts its task back itself.

Faults (faults.py, health.py): the database or the bucket may go away at any moment. No loop
ends on an exception (loops.py). While either is down the slots claim nothing. A render whose
files cannot be stored keeps them in scratch and retries the upload, bounded by the task's
deadline; a status change that cannot be written is retried the same way, never dropped. A render
that failed because a dependency was down (an input read from the bucket) is queued again, not
failed. A task fails only for a reason of its own, with a precise code.

Stopping (`stop(grace)`): slots stop claiming at once, running renders get `grace` seconds to
finish, and whatever is still running then is cancelled and put back in the queue.
"""

from __future__ import annotations

import json
import logging
import os
import shutil
import socket
import threading
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import partial
from typing import TypeVar

from dailies import log_format
from dailies.generator.inputs import InputError
from dailies.generator.protocol import Generator, RenderCancelled, RenderJob, RenderPostponed, RenderResult
from dailies.service.gateway import holds as upstream_holds
from dailies.service.gateway import pacing as upstream_pacing
from dailies.service.gateway.forwarding import UpstreamGenerator
from dailies.service.runtime.breakers import Health
from dailies.service.runtime.faults import (
    RESULT_STORAGE_REJECTED,
    Dependency,
    database_unreachable,
    dependency_down,
    describe,
    storage_refused,
    storage_unavailable,
)
from dailies.service.runtime.loops import Streak
from dailies.service.runtime.metrics import Metrics
from dailies.service.runtime.wakeups import Wakeups
from dailies.service.settings import Settings
from dailies.service.storage import deletions as file_deletions
from dailies.service.storage.own_results import ServiceInputResolver
from dailies.service.storage.results import LAST_FRAME_NAME, VIDEO_NAME, ResultStorage
from dailies.service.tasks.actions import delete_files
from dailies.service.tasks.rows import TaskRow
from dailies.service.tasks.store import TaskStore
from dailies.spec.models import CreateTaskRequest
from dailies.spec.statuses import TaskStatus

T = TypeVar("T")
# Backoff between retries of an upload or a status change while a dependency is down: doubling
# from the first to the last; a retry also starts at once when the health probe sees it back.
RETRY_FIRST_DELAY = 0.5
RETRY_MAX_DELAY = 5.0
# An upload not done after this long has the bucket probed (short timeouts) beside it: see _put_watched.
UPLOAD_PROBE_AFTER_S = 10.0
# What a member's record names when a render fails for no reason of the task's own, without a gateway.
PREVIEW_ROLE = "The preview renderer"

log = logging.getLogger("dailies.workers")


class _Running:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.tasks: dict[str, tuple[str, threading.Event]] = {}  # task id -> (worker id, lost flag)
        # Slots between a claim's start and the render's registration: the task may be running in the
        # database already, and a graceful stop must wait for it as for a render.
        self.claiming = 0

    @contextmanager
    def claim_window(self) -> Iterator[None]:
        with self.lock:
            self.claiming += 1
        try:
            yield
        finally:
            with self.lock:
                self.claiming -= 1

    def busy(self) -> bool:
        with self.lock:
            return bool(self.tasks) or self.claiming > 0

    def add(self, task_id: str, worker_id: str) -> threading.Event:
        lost = threading.Event()
        with self.lock:
            self.tasks[task_id] = (worker_id, lost)
        return lost

    def remove(self, task_id: str) -> None:
        with self.lock:
            self.tasks.pop(task_id, None)

    def snapshot(self) -> list[tuple[str, str, threading.Event]]:
        with self.lock:
            return [(t, w, e) for t, (w, e) in self.tasks.items()]


class _GiveUp(Exception):
    """A retry loop stops: the task is no longer ours, its deadline passed, or the process stops."""


class WorkerPool:
    def __init__(self, settings: Settings, store: TaskStore, generator: Generator, storage: ResultStorage,
                 wakeups: Wakeups | None = None, health: Health | None = None,
                 metrics: Metrics | None = None, gateway: UpstreamGenerator | None = None) -> None:
        """`gateway`: the generator when it forwards to an upstream (its keys cap claims; the sweep
        asks it about the cost of tasks that ended here while handed over)."""
        self.settings = settings
        self.store = store
        self.generator = generator
        self.gateway = gateway
        self.storage = storage
        self.wakeups = wakeups or Wakeups(store.engine, settings)
        self.health = health or Health({Dependency.DATABASE: lambda: None, Dependency.STORAGE: storage.probe})
        self.metrics = metrics
        self.inputs = ServiceInputResolver(settings.data_dir, allow_loopback=settings.allow_loopback_inputs,
                                           storage=storage, clock=settings.clock)
        # Set first when stopping: no more claims. Then `stop_event`: running renders are cancelled.
        self.draining = threading.Event()
        self.stop_event = threading.Event()
        self.running = _Running()
        self.threads: list[threading.Thread] = []
        self.process_tag = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"

    # ---------- lifecycle ----------

    def start(self) -> None:
        self.draining.clear()
        self.stop_event.clear()
        self._spawn(self._housekeeper, "housekeeper")
        if self.settings.workers > 0:
            self._spawn(self._heartbeats, "heartbeats")
        for slot in range(self.settings.workers):
            self._spawn(self._slot, f"render-{slot}", f"{self.process_tag}-{slot}")

    def stop(self, grace: float = 0.0, timeout: float = 10.0) -> None:
        """Stop claiming now; let running renders finish for up to `grace` seconds; then cancel
        what is left (each such task goes back to the queue) and wait for the threads."""
        self.draining.set()
        self.wakeups.tasks.notify()  # idle slots need not sit out their poll interval
        deadline = time.monotonic() + grace
        while self.running.busy() and time.monotonic() < deadline:
            time.sleep(0.05)
        left = len(self.running.snapshot())
        if grace and left:
            log.warning("%d render(s) still running after the %.0f s grace period: put back in the queue",
                        left, grace)
        self.stop_event.set()
        self.wakeups.tasks.notify()
        for thread in self.threads:
            thread.join(timeout)
        self.threads.clear()

    def _spawn(self, target, name: str, *args) -> None:
        thread = threading.Thread(target=target, args=args, name=f"dailies-{name}", daemon=True)
        thread.start()
        self.threads.append(thread)

    # ---------- render slots ----------

    def _slot(self, worker_id: str) -> None:
        wakeup = self.wakeups.tasks
        streak = Streak(log, f"render slot {worker_id}")
        while not self.draining.is_set():
            try:
                if not self.health.all_up:
                    # A claim now would render a task only to wait (or fail) storing it: wait for
                    # the health watch to see every dependency answer again.
                    self.health.wait_all_up(self.wakeups.poll_interval)
                    continue
                seen = wakeup.generation()
                with self.running.claim_window():  # a stop now waits for what this claims
                    row = self._claim(worker_id)
                    lost = self.running.add(row.id, worker_id) if row is not None else None
                if row is None:
                    wakeup.wait_idle(seen, self.wakeups.poll_interval, self.wakeups.rest_interval)
                    continue
                wakeup.notify()  # resting slots look for more work now
                self.run_one(row, worker_id, lost)
                streak.ok()
            except Exception as exc:  # nothing may end a slot: it would silently leave the process one short
                self.draining.wait(streak.failed(exc))

    def _claim(self, worker_id: str) -> TaskRow | None:
        try:
            row = self.store.claim_next(worker_id, self.settings.clock(), self._running_cap())
        except Exception as exc:
            if not database_unreachable(exc):
                raise
            self.health.failed(Dependency.DATABASE, exc)
            return None
        self.health.succeeded(Dependency.DATABASE)
        return row

    def _running_cap(self) -> int | None:
        """A gateway's cap on tasks running upstream per model: its concurrency times its keys."""
        if not self.settings.upstream_url:
            return None
        # The gateway's keys: the environment's and those stored in the database (`dailies upstream add`).
        keys = self.gateway.keys if self.gateway is not None else self.settings.upstream_keys
        return self.settings.upstream_concurrency * max(1, len(keys))

    def run_one(self, row: TaskRow, worker_id: str, lost: threading.Event | None = None) -> None:
        """Render a claimed task, store its files and record the outcome. Never raises. `lost`: the
        task's registration among the running ones, when the claim made it already."""
        lost = lost if lost is not None else self.running.add(row.id, worker_id)
        scratch = self.settings.scratch_dir / f"{row.id}-{worker_id}"
        started = time.monotonic()
        with log_format.for_task(row.id):  # what is logged about it carries its id (a JSON log's task_id)
            try:
                self._render_and_store(row, worker_id, lost, scratch)
            except _GiveUp as exc:
                log.warning("task %s left as it is: %s", row.id, exc)
            except Exception:
                log.exception("recording the outcome of %s failed", row.id)
            finally:
                self.running.remove(row.id)
                shutil.rmtree(scratch, ignore_errors=True)
                if self.metrics is not None:
                    self.metrics.render_seconds.observe(time.monotonic() - started)

    def _render_and_store(self, row: TaskRow, worker_id: str, lost: threading.Event, scratch) -> None:
        clock = self.settings.clock
        try:
            job = RenderJob(task_id=row.id, request=CreateTaskRequest.model_validate_json(row.request),
                            output_dir=scratch, seed=row.seed, draft=bool(row.draft),
                            state=json.loads(row.generator_state) if row.generator_state else {},
                            checkpoint=lambda state: self._checkpoint(row, worker_id, lost, state),
                            deadline_at=row.deadline_at)
            scratch.mkdir(parents=True, exist_ok=True)
            result = self.generator.render(
                job, self.inputs, progress=lambda f: None,
                is_cancelled=lambda: lost.is_set() or self.stop_event.is_set(),
            )
        except RenderCancelled:
            if self.stop_event.is_set() and not lost.is_set():
                # A clean stop (shutdown): the task goes back to the queue now, and the run does
                # not count as lost, so restarts never use up a task's attempts.
                self._persist(row, lost, lambda: self.store.release(row.id, worker_id, clock()), stopping_ok=True)
                log.info("render of %s stopped by shutdown; the task is queued again", row.id)
            else:
                log.info("render of %s stopped (task no longer running here)", row.id)
            return
        except RenderPostponed as exc:
            log.warning("render of %s postponed (%s); the task is queued again", row.id, exc)
            self._persist(row, lost, lambda: self.store.release(row.id, worker_id, clock()), stopping_ok=True)
            return
        except InputError as exc:
            code, message = exc.code, exc.message
            self._persist(row, lost, lambda: self.store.fail(row.id, worker_id, clock(), code, message))
            return
        except Exception as exc:
            down = self._dependency_down(exc)
            if down is not None:
                log.warning("render of %s stopped: the %s is down (%s); the task is queued again",
                            row.id, down, describe(exc))
                self._persist(row, lost, lambda: self.store.release(row.id, worker_id, clock()), stopping_ok=True)
                return
            log.exception("render of %s failed", row.id)
            message = unexpected_failure(self.gateway.role if self.gateway is not None else PREVIEW_ROLE, exc)
            self._persist(row, lost, lambda: self.store.fail(row.id, worker_id, clock(), "InternalServiceError",
                                                             message))
            return
        try:
            last_frame = self._store_files(row, result, lost)
        except _StorageRejected as exc:
            message = f"The result storage refused the file: {describe(exc.__cause__ or exc)}"
            self._persist(row, lost, lambda: self.store.fail(row.id, worker_id, clock(), RESULT_STORAGE_REJECTED,
                                                             message))
            return
        except _GiveUp:
            if self.stop_event.is_set() and not lost.is_set():
                # Stopped while the storage was down: the render is lost with this process, the
                # task is not: it goes back to the queue (or, if the database is down too, it is
                # put back by another process's housekeeper once this one stops beating).
                self._persist(row, lost, lambda: self.store.release(row.id, worker_id, clock()), stopping_ok=True)
                log.warning("task %s queued again: its result could not be stored before the stop", row.id)
                return
            raise
        # What the render used, as the record reports it (`RenderedOutput.to_json`, read back by records.py).
        done = self._persist(row, lost, lambda: self.store.succeed(
            row.id, worker_id, clock(), result.to_json(), VIDEO_NAME, last_frame))
        if done is None:
            self._discard_lost_result(row.id)

    # ---------- retried steps ----------

    def _store_files(self, row: TaskRow, result: RenderResult, lost: threading.Event) -> str | None:
        """Upload the rendered files; while the storage is down, keep them and try again."""
        uploads = [(VIDEO_NAME, result.video_path)]
        if result.last_frame_path is not None:
            uploads.append((LAST_FRAME_NAME, result.last_frame_path))
        for name, path in uploads:
            self._retry(row, lost, Dependency.STORAGE, partial(self._put_watched, row.id, name, path))
        return LAST_FRAME_NAME if result.last_frame_path is not None else None

    def _put_watched(self, task_id: str, name: str, path) -> None:
        """`storage.put`, with the bucket probed beside it once it has taken UPLOAD_PROBE_AFTER_S: a
        bucket that takes connections and never answers kept an upload waiting on its 60 s reads (and
        retries) for a minute and more, while every slot went on claiming tasks it could not store. A
        probe that fails opens the breaker now (claims pause); the upload goes on as it was."""
        done = threading.Event()

        def watch() -> None:
            if done.wait(UPLOAD_PROBE_AFTER_S):
                return
            try:
                self.storage.probe()
            except Exception as exc:
                if not done.is_set() and self._is_down(Dependency.STORAGE, exc):
                    self.health.failed(Dependency.STORAGE, exc)

        threading.Thread(target=watch, name="dailies-upload-watch", daemon=True).start()
        try:
            self.storage.put(task_id, name, path)
        finally:
            done.set()

    def _checkpoint(self, row: TaskRow, worker_id: str, lost: threading.Event, state: dict) -> None:
        """Save a render's state with its task (retried while the database is down); a task that is
        no longer ours stops the render."""
        saved = self._persist(row, lost, lambda: self.store.save_generator_state(row.id, worker_id, json.dumps(state)))
        if not saved:
            lost.set()
            raise RenderCancelled()

    def _results_waiting(self, delta: int) -> None:
        if self.metrics is not None:
            self.metrics.results_waiting.inc(delta)

    def _persist(self, row: TaskRow, lost: threading.Event, write: Callable[[], T], stopping_ok: bool = False) -> T:
        """A status change, retried while the database is down (never dropped), until it is
        written or no longer ours to write (see `_retry`)."""
        return self._retry(row, lost, Dependency.DATABASE, write, stopping_ok=stopping_ok)

    def _retry(self, row: TaskRow, lost: threading.Event, dependency: Dependency, call: Callable[[], T],
               stopping_ok: bool = False) -> T:
        """`call()`, tried again with backoff while it fails because `dependency` is down. Gives up
        (`_GiveUp`) when the task stopped being ours (expired, recovered by another process), when
        its deadline passed, or when the process stops (unless `stopping_ok`: putting a task back
        on the way out is itself worth retrying until the threads are joined)."""
        delay = RETRY_FIRST_DELAY
        waiting = False
        try:
            while True:
                try:
                    value = call()
                except Exception as exc:
                    if not self._is_down(dependency, exc):
                        if dependency is Dependency.STORAGE:
                            raise _StorageRejected() from exc
                        raise
                    self.health.failed(dependency, exc)
                else:
                    self.health.succeeded(dependency)
                    return value
                if lost.is_set():
                    raise _GiveUp(f"no longer running here while the {dependency} was down")
                if self.settings.clock() >= row.deadline_at:
                    raise _GiveUp(f"its deadline passed while the {dependency} was down")
                if self.stop_event.is_set() and not stopping_ok:
                    raise _GiveUp(f"the process stops while the {dependency} is down")
                if not waiting and dependency is Dependency.STORAGE:
                    waiting = True
                    self._results_waiting(+1)
                # Back at once when the health watch sees the dependency answer, else after the delay.
                self.health[dependency].wait_up(delay)
                delay = min(delay * 2, RETRY_MAX_DELAY)
        finally:
            if waiting:
                self._results_waiting(-1)

    def _is_down(self, dependency: Dependency, exc: BaseException) -> bool:
        """Whether an error of an operation on `dependency` means the dependency is down (wait and
        retry) rather than a final answer about this task."""
        if dependency is Dependency.DATABASE:
            return database_unreachable(exc)
        if storage_unavailable(exc):
            return True
        if storage_refused(exc):
            # Refused for this object, or for everything (credentials, a missing bucket)? Only the
            # latter is an outage, and then the bucket itself does not answer either.
            try:
                self.storage.probe()
            except Exception:
                return True
        return False

    def _dependency_down(self, exc: BaseException) -> Dependency | None:
        """For an error out of a render (an input read from the bucket, say): the dependency it
        says is down, if any."""
        down = dependency_down(exc)
        if down is None or not self._is_down(down, exc):
            return None
        self.health.failed(down, exc)
        return down

    def _discard_lost_result(self, task_id: str) -> None:
        """Our render finished after the task stopped being ours (expired, or put back after a
        stall): its files are not wanted, unless another worker has taken the task up since and
        stored (or is storing) its own under the same names."""
        try:
            current = self.store.get_by_id(task_id)
            if current is None or current.status not in (TaskStatus.RUNNING, TaskStatus.SUCCEEDED):
                self.storage.delete([task_id])
        except Exception as exc:  # left for the purge (and the bucket's lifecycle rule)
            log.warning("files of %s, a render no longer wanted, were not deleted: %s", task_id, describe(exc))

    # ---------- heartbeats ----------

    def _heartbeats(self) -> None:
        streak = Streak(log, "heartbeats")
        while not self.stop_event.wait(self.settings.heartbeat_interval):
            try:
                running = self.running.snapshot()
                if not running:
                    continue
                try:
                    alive = self.store.heartbeat_many([(t, w) for t, w, _ in running], self.settings.clock())
                except Exception as exc:
                    if not database_unreachable(exc):
                        raise
                    self.health.failed(Dependency.DATABASE, exc)
                    continue
                self.health.succeeded(Dependency.DATABASE)
                for task_id, _, lost in running:
                    if task_id not in alive:
                        lost.set()
                streak.ok()
            except Exception as exc:
                self.stop_event.wait(streak.failed(exc))

    # ---------- housekeeping ----------

    def sweep(self) -> None:
        """One pass of housekeeping; also callable directly (tests, startup)."""
        now = self.settings.clock()
        self.store.expire_overdue(now)
        if self.gateway is not None:
            upstream_holds.settle_holds(self.store, self.gateway, now, self.settings.clock)
        # Right after the database came back, heartbeats that could not be written while it was
        # down look stale: give every worker `stale_after` to beat again before taking its tasks.
        if self.health[Dependency.DATABASE].up_for() >= self.settings.stale_after:
            self.store.requeue_stale(now, self.settings.stale_after)
        purged = self.store.purge(now)
        with self.store.write.begin() as conn:
            upstream_pacing.forget_before(conn, now)  # a gateway's counted upstream creates
        if purged:
            delete_files(self.store, self.storage, [row.id for row in purged], now, health=self.health)
        self._delete_remembered_files()

    def _delete_remembered_files(self) -> None:
        """Files of deleted records the storage did not take then (file_deletions.py): asked again."""
        with self.store.engine.connect() as conn:
            task_ids = file_deletions.waiting(conn)
        if not task_ids:
            return
        try:
            self.storage.delete(task_ids)
        except Exception as exc:
            if storage_unavailable(exc):
                self.health.failed(Dependency.STORAGE, exc)
            log.info("files of %d deleted task(s) still not deleted: %s", len(task_ids), describe(exc))
            return
        with self.store.write.begin() as conn:
            file_deletions.forget(conn, task_ids)
        log.info("files of %d deleted task(s) deleted", len(task_ids))

    def _housekeeper(self) -> None:
        streak = Streak(log, "housekeeping")
        while not self.stop_event.is_set():
            delay = self.settings.sweep_interval
            try:
                self.sweep()
                self.health.succeeded(Dependency.DATABASE)
                streak.ok()
            except Exception as exc:
                if database_unreachable(exc):
                    self.health.failed(Dependency.DATABASE, exc)
                delay = max(delay, streak.failed(exc))
            self.stop_event.wait(delay)


def unexpected_failure(what: str, exc: BaseException) -> str:
    """What a member's record says of a render that failed for no reason of the task's own: what
    failed (`what`), and the error without a detail that names a file or an address (the server's
    paths are no member's business; the log has the whole error)."""
    detail = describe(exc)
    if "/" in detail or "\\" in detail:
        detail = f"{type(exc).__name__} (details in the service's log)"
    return f"{what} failed: {detail}"


class _StorageRejected(Exception):
    """The storage answered and refused a file for good (its cause says why)."""
