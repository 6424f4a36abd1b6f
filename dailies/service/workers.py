"""Render slots and the housekeeper.

Each slot is a thread that claims the next task (a guarded UPDATE), renders it with the
generator, stores the files (storage.py: a local folder or a bucket) and records the outcome
(guarded by its worker id, so a worker that lost the task cannot overwrite anyone). An idle slot
sleeps until a task is queued (wakeups.py). One heartbeat thread refreshes every running task of
this process in one statement; when a refresh finds a task no longer ours (expired, recovered
after a stall), its render is told to stop. The housekeeper expires overdue tasks, puts back
tasks of dead workers (failing a task whose runs were lost `TASK_ATTEMPTS_MAX` times: it is
probably what kills them) and purges week-old records and files. A slot stopped cleanly puts its task back itself.
"""

from __future__ import annotations

import logging
import os
import shutil
import socket
import threading
import uuid

from sqlalchemy import Row

from ..generator.inputs import InputError
from ..generator.protocol import Generator, RenderCancelled, RenderJob
from ..spec.models import CreateTaskRequest
from ..spec.statuses import TaskStatus
from .own_results import ServiceInputResolver
from .settings import Settings
from .storage import LAST_FRAME_NAME, VIDEO_NAME, ResultStorage
from .store import TaskStore
from .wakeups import Wakeups

log = logging.getLogger("dailies.workers")


class _Running:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.tasks: dict[str, tuple[str, threading.Event]] = {}  # task id -> (worker id, lost flag)

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


class WorkerPool:
    def __init__(self, settings: Settings, store: TaskStore, generator: Generator, storage: ResultStorage,
                 wakeups: Wakeups | None = None) -> None:
        self.settings = settings
        self.store = store
        self.generator = generator
        self.storage = storage
        self.wakeups = wakeups or Wakeups(store.engine, settings)
        self.inputs = ServiceInputResolver(settings.data_dir, allow_loopback=settings.allow_loopback_inputs,
                                           storage=storage, clock=settings.clock)
        self.stop_event = threading.Event()
        self.running = _Running()
        self.threads: list[threading.Thread] = []
        self.process_tag = f"{socket.gethostname()}-{os.getpid()}-{uuid.uuid4().hex[:6]}"

    # ---------- lifecycle ----------

    def start(self) -> None:
        self.stop_event.clear()
        self._spawn(self._housekeeper, "housekeeper")
        if self.settings.workers > 0:
            self._spawn(self._heartbeats, "heartbeats")
        for slot in range(self.settings.workers):
            self._spawn(self._slot, f"render-{slot}", f"{self.process_tag}-{slot}")

    def stop(self, timeout: float = 10.0) -> None:
        self.stop_event.set()
        self.wakeups.tasks.notify()  # idle slots need not sit out their poll interval
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
        while not self.stop_event.is_set():
            seen = wakeup.generation()
            try:
                row = self.store.claim_next(worker_id, self.settings.clock())
            except Exception:  # a locked or busy database must not kill the slot
                log.exception("claiming a task failed; retrying")
                row = None
            if row is None:
                wakeup.wait(seen, self.wakeups.poll_interval)
                continue
            self.run_one(row, worker_id)

    def run_one(self, row: Row, worker_id: str) -> None:
        lost = self.running.add(row.id, worker_id)
        scratch = self.settings.scratch_dir / f"{row.id}-{worker_id}"
        try:
            job = RenderJob(task_id=row.id, request=CreateTaskRequest.model_validate_json(row.request),
                            output_dir=scratch, seed=row.seed, draft=bool(row.draft))
            scratch.mkdir(parents=True, exist_ok=True)
            result = self.generator.render(
                job, self.inputs, progress=lambda f: None,
                is_cancelled=lambda: lost.is_set() or self.stop_event.is_set(),
            )
            self.storage.put(row.id, VIDEO_NAME, result.video_path)
            last_frame = None
            if result.last_frame_path is not None:
                self.storage.put(row.id, LAST_FRAME_NAME, result.last_frame_path)
                last_frame = LAST_FRAME_NAME
            # What the render used, as the record reports it (`RenderedOutput.to_json`, read back by records.py).
            done = self.store.succeed(row.id, worker_id, self.settings.clock(), result.to_json(),
                                      VIDEO_NAME, last_frame)
            if done is None:
                self._discard_lost_result(row.id)
        except RenderCancelled:
            if self.stop_event.is_set() and not lost.is_set():
                # A clean stop (shutdown): the task goes back to the queue now, and the run does
                # not count as lost, so restarts never use up a task's attempts.
                self.store.release(row.id, worker_id, self.settings.clock())
                log.info("render of %s stopped by shutdown; the task is queued again", row.id)
            else:
                log.info("render of %s stopped (task no longer running here)", row.id)
        except InputError as exc:
            self.store.fail(row.id, worker_id, self.settings.clock(), exc.code, exc.message)
        except Exception as exc:
            log.exception("render of %s failed", row.id)
            self.store.fail(row.id, worker_id, self.settings.clock(), "InternalServiceError",
                            f"The preview renderer failed: {type(exc).__name__}: {exc}")
        finally:
            self.running.remove(row.id)
            shutil.rmtree(scratch, ignore_errors=True)

    def _discard_lost_result(self, task_id: str) -> None:
        """Our render finished after the task stopped being ours (expired, or put back after a
        stall): its files are not wanted, unless another worker has taken the task up since and
        stored (or is storing) its own under the same names."""
        current = self.store.get_by_id(task_id)
        if current is None or current.status not in (TaskStatus.RUNNING, TaskStatus.SUCCEEDED):
            self.storage.delete([task_id])

    # ---------- heartbeats ----------

    def _heartbeats(self) -> None:
        while not self.stop_event.wait(self.settings.heartbeat_interval):
            running = self.running.snapshot()
            if not running:
                continue
            try:
                alive = self.store.heartbeat_many([(t, w) for t, w, _ in running], self.settings.clock())
            except Exception:
                log.exception("heartbeats of %d running task(s) failed", len(running))
                continue
            for task_id, _, lost in running:
                if task_id not in alive:
                    lost.set()

    # ---------- housekeeping ----------

    def sweep(self) -> None:
        """One pass of housekeeping; also callable directly (tests, startup)."""
        now = self.settings.clock()
        self.store.expire_overdue(now)
        self.store.requeue_stale(now, self.settings.stale_after)
        purged = self.store.purge(now)
        if purged:
            self.storage.delete([row.id for row in purged])

    def _housekeeper(self) -> None:
        while not self.stop_event.is_set():
            try:
                self.sweep()
            except Exception:
                log.exception("housekeeping pass failed")
            self.stop_event.wait(self.settings.sweep_interval)
