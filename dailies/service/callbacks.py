"""Callback delivery (spec section 6): a durable queue in the database, drained by threads that
never block the API or rendering.

- `enqueue` runs inside the transaction of each status change and stores the event with a
  snapshot of the record at that moment (the body of a "running" callback says running).
- Deliverers claim due events; an event waits while an earlier event of the same task is still
  pending, so each receiver sees a task's changes in order. On PostgreSQL the claim is one
  `UPDATE ... WHERE seq = (SELECT ... FOR UPDATE SKIP LOCKED)`, so deliverers of any number of
  processes never wait on each other; idle deliverers sleep until a NOTIFY (wakeups.py) or the
  next scheduled retry.
- `succeeded` and `failed` get 1 + 3 attempts with exponential backoff and jitter; the other
  statuses one. Only 2xx counts; redirects are not followed.
- Every attempt is logged (attempt, time, status code, latency, error).
"""

from __future__ import annotations

import json
import logging
import random
import threading
import time
import uuid
from collections.abc import Callable

import httpx
from sqlalchemy import Connection, Row, and_, func, insert, select, update
from sqlalchemy.orm import aliased

from ..netguard import BlockedAddress, check_public_host
from ..spec import limits as L
from ..spec.statuses import CALLBACK_STATUSES, RETRIED_CALLBACK_STATUSES
from ..webhooks import signed_headers
from .db import callback_attempts, callback_events, is_postgres, writer
from .loops import Streak
from .metrics import Metrics
from .settings import Settings
from .wakeups import CALLBACKS_CHANNEL, Wakeups

log = logging.getLogger("dailies.callbacks")

# A claimed event whose deliverer died is handed out again after this long.
CLAIM_TIMEOUT_SECONDS = 60.0


def retry_delay(settings: Settings, attempts_made: int, rng: random.Random) -> float:
    """Delay before the next attempt: the configured schedule, with +-20 % jitter so that
    many receivers that failed together do not retry together."""
    base = settings.callback_retry_delays[min(attempts_made, len(settings.callback_retry_delays)) - 1]
    return base * rng.uniform(0.8, 1.2)


class CallbackQueue:
    def __init__(self, engine, settings: Settings, record_for: Callable[[Row], dict],
                 secret_for: Callable[[str], str], transport: httpx.BaseTransport | None = None,
                 deliverers: int = 4, wakeups: Wakeups | None = None, metrics: Metrics | None = None) -> None:
        self.engine = engine
        self.write = writer(engine)
        self.settings = settings
        self.wakeups = wakeups or Wakeups(engine, settings)
        self.skip_locked = is_postgres(engine)
        self.record_for = record_for
        self.secret_for = secret_for
        self.transport = transport
        self.deliverers = deliverers
        self.metrics = metrics
        self.stop_event = threading.Event()
        self.threads: list[threading.Thread] = []
        self.rng = random.Random()

    # ---------- producing ----------

    def enqueue(self, conn: Connection, row: Row) -> None:
        """Called in the transaction of a status change."""
        if not row.callback_url or row.status not in CALLBACK_STATUSES:
            return
        now = self.settings.clock()
        conn.execute(insert(callback_events).values(
            webhook_id=f"msg_{uuid.uuid4().hex}",
            task_id=row.id, project=row.project, url=row.callback_url, status=row.status,
            body=json.dumps(self.record_for(row), separators=(",", ":")),
            state="pending", attempts=0,
            max_attempts=1 + L.CALLBACK_MAX_RETRIES if row.status in RETRIED_CALLBACK_STATUSES else 1,
            next_attempt_at=now, created_at=now,
        ))
        self.wakeups.announce(conn, CALLBACKS_CHANNEL)

    # ---------- consuming ----------

    def start(self) -> None:
        self.stop_event.clear()
        self.wakeups.start()  # shared with the render slots: stopped with the Services, not here
        for n in range(self.deliverers):
            thread = threading.Thread(target=self._run, args=(f"cb-{uuid.uuid4().hex[:6]}-{n}",),
                                      name=f"dailies-callbacks-{n}", daemon=True)
            thread.start()
            self.threads.append(thread)

    def stop(self, timeout: float = 12.0) -> None:
        self.stop_event.set()
        self.wakeups.callbacks.notify()
        for thread in self.threads:
            thread.join(timeout)
        self.threads.clear()

    def _run(self, deliverer: str) -> None:
        streak = Streak(log, f"callback deliverer {deliverer}")
        with httpx.Client(transport=self.transport, follow_redirects=False,
                          timeout=self.settings.callback_timeout) as http:
            wakeup = self.wakeups.callbacks
            while not self.stop_event.is_set():
                # Nothing may end a deliverer (a database restart least of all): the events would
                # wait for a process restart.
                try:
                    seen = wakeup.generation()
                    event = self.claim(deliverer)
                    if event is None:
                        wakeup.wait(seen, self._idle_wait())
                        streak.ok()
                        continue
                except Exception as exc:
                    self.stop_event.wait(streak.failed(exc))
                    continue
                try:
                    self.deliver(http, event)
                    streak.ok()
                except Exception as exc:
                    # Recording the outcome failed (a database error): keep this deliverer alive;
                    # the event stays claimed and is handed out again after the claim timeout.
                    log.warning("the outcome of callback %s could not be recorded; it is delivered again "
                                "after %g s", event.webhook_id, CLAIM_TIMEOUT_SECONDS)
                    self.stop_event.wait(streak.failed(exc))

    def _idle_wait(self) -> float:
        """How long an idle deliverer sleeps unless woken. With notifications: until the next
        scheduled retry (nobody announces a retry coming due), at most the poll interval. Events
        due but held back (claimed, or behind an earlier event of their task) are left to the
        deliverer holding them, which claims again as soon as it is done."""
        if not self.wakeups.notifies:
            return self.wakeups.poll_interval
        now = self.settings.clock()
        try:
            with self.engine.connect() as conn:
                due = conn.execute(select(func.min(callback_events.c.next_attempt_at))
                                   .where(callback_events.c.state == "pending",
                                          callback_events.c.next_attempt_at > now)).scalar()
        except Exception:
            log.exception("reading the next callback retry failed")
            due = None
        if due is None:
            return self.wakeups.poll_interval
        return min(self.wakeups.poll_interval, due - now + 0.001)

    def claim(self, deliverer: str) -> Row | None:
        now = self.settings.clock()
        earlier = aliased(callback_events)
        blocked = (
            select(earlier.c.seq)
            .where(earlier.c.task_id == callback_events.c.task_id, earlier.c.seq < callback_events.c.seq,
                   earlier.c.state == "pending")
            .exists()
        )
        free = (callback_events.c.claimed_by.is_(None)) | (callback_events.c.claimed_at < now - CLAIM_TIMEOUT_SECONDS)
        pick = (
            select(callback_events.c.seq)
            .where(callback_events.c.state == "pending", callback_events.c.next_attempt_at <= now, free, ~blocked)
            .order_by(callback_events.c.next_attempt_at, callback_events.c.seq)
            .limit(1)
        )
        if self.skip_locked:
            # One statement; rows another deliverer is claiming right now are skipped, not waited for.
            with self.write.begin() as conn:
                return conn.execute(
                    update(callback_events)
                    .where(callback_events.c.seq == pick.with_for_update(skip_locked=True).scalar_subquery(),
                           callback_events.c.state == "pending", free)
                    .values(claimed_by=deliverer, claimed_at=now)
                    .returning(*callback_events.c)
                ).first()
        # SQLite: look first without the write lock: most polls find nothing due, and taking the lock
        # on each of them would make every idle deliverer contend with the API's writes.
        with self.engine.connect() as conn:
            if conn.execute(pick).scalar() is None:
                return None
        with self.write.begin() as conn:
            seq = conn.execute(pick).scalar()
            if seq is None:
                return None
            return conn.execute(
                update(callback_events)
                .where(callback_events.c.seq == seq, callback_events.c.state == "pending", free)
                .values(claimed_by=deliverer, claimed_at=now)
                .returning(*callback_events.c)
            ).first()

    def deliver(self, http: httpx.Client, event: Row) -> None:
        attempt = event.attempts + 1
        started = time.perf_counter()
        status_code: int | None = None
        error: str | None = None
        try:
            check_public_host(event.url, allow_loopback=self.settings.allow_loopback_callbacks,
                              allow_private=self.settings.allow_private_callbacks)
            body = event.body.encode()
            # Safe from many deliverer threads at once: both secret stores make a project's secret
            # under their own lock (keys.json: a thread lock and flock; the database: insert once).
            secret = self.secret_for(event.project)
            headers = {"content-type": "application/json", "user-agent": "dailies-callbacks/1",
                       **signed_headers(secret, event.webhook_id, int(self.settings.clock()), body)}
            response = http.post(event.url, content=body, headers=headers)
            status_code = response.status_code
            if not 200 <= status_code < 300:
                error = f"receiver answered {status_code}" + (
                    " (redirects are not followed)" if 300 <= status_code < 400 else "")
        except BlockedAddress as exc:
            error = f"refused: {exc}"
        except httpx.TimeoutException:
            error = f"timed out after {self.settings.callback_timeout:g} s"
        # httpx.InvalidURL (e.g. a control character in the stored URL) is not an HTTPError; left
        # uncaught it would kill the deliverer, and every deliverer that claims the event after it.
        except (httpx.HTTPError, httpx.InvalidURL, ValueError, OSError) as exc:
            error = f"{type(exc).__name__}: {exc}"
        latency_ms = (time.perf_counter() - started) * 1000
        self._record(event, attempt, status_code, latency_ms, error)

    def _record(self, event: Row, attempt: int, status_code: int | None, latency_ms: float,
                error: str | None) -> None:
        now = self.settings.clock()
        if error is None:
            outcome, values = "delivered", {"state": "delivered", "attempts": attempt, "claimed_by": None}
        elif attempt >= event.max_attempts:
            outcome, values = "failed", {"state": "failed", "attempts": attempt, "claimed_by": None}
        else:
            outcome, values = "retry", {"attempts": attempt, "claimed_by": None,
                                        "next_attempt_at": now + retry_delay(self.settings, attempt, self.rng)}
        with self.write.begin() as conn:
            conn.execute(insert(callback_attempts).values(
                webhook_id=event.webhook_id, task_id=event.task_id, status=event.status, attempt=attempt,
                at=now, status_code=status_code, latency_ms=round(latency_ms, 1), error=error,
            ))
            conn.execute(update(callback_events).where(
                and_(callback_events.c.seq == event.seq, callback_events.c.claimed_by == event.claimed_by)
            ).values(**values))
        if self.metrics is not None:
            self.metrics.callback_deliveries.labels(outcome).inc()
        log.info("callback %s of %s (%s) attempt %d: %s", event.webhook_id, event.task_id, event.status,
                 attempt, error or f"delivered ({status_code})")

    # ---------- reading ----------

    def log_for(self, task_id: str) -> list[dict]:
        """The delivery log of one task, oldest first."""
        with self.engine.connect() as conn:
            attempts = conn.execute(
                select(callback_attempts).where(callback_attempts.c.task_id == task_id)
                .order_by(callback_attempts.c.seq)
            ).all()
            pending = conn.execute(
                select(callback_events).where(callback_events.c.task_id == task_id,
                                              callback_events.c.state == "pending")
                .order_by(callback_events.c.seq)
            ).all()
        return [
            {"webhook_id": a.webhook_id, "status": a.status, "attempt": a.attempt, "at": a.at,
             "status_code": a.status_code, "latency_ms": a.latency_ms, "error": a.error}
            for a in attempts
        ] + [
            {"webhook_id": p.webhook_id, "status": p.status, "attempt": p.attempts + 1,
             "at": p.next_attempt_at, "status_code": None, "latency_ms": None, "error": None, "pending": True}
            for p in pending
        ]
