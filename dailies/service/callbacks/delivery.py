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
  statuses one. Only the status code counts (2xx); the answer's body is never read, and
  redirects are not followed.
- An attempt has one deadline for the whole exchange (`callback_timeout`), however slowly the
  receiver answers; a claim outlasts it many times over (`claim_timeout`).
- Every attempt is logged (attempt, time, status code, latency, error) and counted toward the
  event's attempts, even one whose claim was taken over meanwhile.
"""

from __future__ import annotations

import json
import logging
import random
import socket
import threading
import time
import uuid
from collections.abc import Callable

import httpx
from sqlalchemy import Connection, Row, func, insert, select, update
from sqlalchemy.orm import aliased

from dailies import log_format
from dailies.netguard import BlockedAddress, Pinned, pinned
from dailies.service.callbacks import mail
from dailies.service.callbacks.mail import MailError
from dailies.service.db.engine import is_postgres
from dailies.service.db.tables import DeliveryState, callback_attempts, callback_events
from dailies.service.db.writer import writer
from dailies.service.runtime.loops import Streak
from dailies.service.runtime.metrics import Metrics
from dailies.service.runtime.wakeups import CALLBACKS_CHANNEL, Wakeups
from dailies.service.settings import Settings
from dailies.service.tasks.rows import TaskRow
from dailies.spec import limits as L
from dailies.spec import notifications as N
from dailies.spec.statuses import CALLBACK_STATUSES, RETRIED_CALLBACK_STATUSES
from dailies.webhooks import signed_headers

log = logging.getLogger("dailies.callbacks")

# A claimed event whose deliverer died is handed out again after this long, or after
# CLAIM_TIMEOUT_ATTEMPTS attempt deadlines if that is longer (`claim_timeout`): an attempt, its name
# lookup included, ends at its deadline, so a live deliverer's attempt is never overtaken by a second
# POST of the same event.
CLAIM_TIMEOUT_SECONDS = 60.0
CLAIM_TIMEOUT_ATTEMPTS = 6


def claim_timeout(settings: Settings) -> float:
    return max(CLAIM_TIMEOUT_SECONDS, CLAIM_TIMEOUT_ATTEMPTS * settings.callback_timeout)


def retry_delay(settings: Settings, attempts_made: int, rng: random.Random) -> float:
    """Delay before the next attempt: the configured schedule, with +-20 % jitter so that
    many receivers that failed together do not retry together."""
    base = settings.callback_retry_delays[min(attempts_made, len(settings.callback_retry_delays)) - 1]
    return base * rng.uniform(0.8, 1.2)


def outgoing_body(event: Row) -> bytes:
    """What an HTTP attempt POSTs: a task's record as queued, or a notification worded for its channel."""
    if event.channel is None:
        return event.body.encode()
    message = json.loads(event.body)
    project, items = message["project"], message["items"]
    if event.channel == "slack":
        worded = N.slack_body(project, items)
    elif event.channel == "mattermost":
        worded = N.mattermost_body(project, items)
    else:
        worded = N.webhook_body(project, message["target"], items)
    return json.dumps(worded, separators=(",", ":"), ensure_ascii=False).encode()


class AttemptDeadline:
    """The wall-clock limit of one attempt. httpx's timeout bounds each network operation, not the
    exchange: a receiver that sends its answer a byte at a time never lets one read time out, and
    would hold the deliverer for ever. At the deadline the connection's socket is shut down, which
    ends the read blocked on it at once (TLS or not: the deliverer then gets an httpx error).

    The socket is learnt from httpcore's `trace` extension when the connection is made, as a
    duplicate: `shutdown` acts on the connection whichever descriptor names it, and the duplicate
    stays valid until this attempt closes it, so the timer never touches a descriptor that was
    closed and reused meanwhile. Only a new connection is seen, hence no keep-alive (`http_client`).
    """

    def __init__(self, seconds: float) -> None:
        self.expired = False
        self._lock = threading.Lock()
        self._socket: socket.socket | None = None
        self._over = False
        self._timer = threading.Timer(seconds, self._expire)
        self._timer.daemon = True

    def __enter__(self) -> AttemptDeadline:
        self._timer.start()
        return self

    def __exit__(self, *exc_info) -> None:
        self._timer.cancel()
        with self._lock:
            self._over = True
            if self._socket is not None:
                self._socket.close()
                self._socket = None

    def trace(self, name: str, info: dict) -> None:
        """httpcore's `trace` extension: called in the deliverer's thread at each step."""
        if not name.endswith(".connect_tcp.complete"):
            return
        sock = info["return_value"].get_extra_info("socket")
        if sock is None:
            return
        with self._lock:
            self._socket = sock.dup()
            if self.expired:  # the deadline passed while connecting
                self._shut(self._socket)

    def _expire(self) -> None:
        with self._lock:
            if self._over:
                return
            self.expired = True
            if self._socket is not None:
                self._shut(self._socket)

    @staticmethod
    def _shut(sock: socket.socket) -> None:
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:  # already closed by the receiver
            pass


class CallbackQueue:
    def __init__(self, engine, settings: Settings, record_for: Callable[[TaskRow], dict],
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
        self.claim_timeout = claim_timeout(settings)
        self.stop_event = threading.Event()
        self.threads: list[threading.Thread] = []
        self.rng = random.Random()

    # ---------- producing ----------

    def enqueue(self, conn: Connection, row: TaskRow) -> None:
        """Called in the transaction of a status change."""
        if not row.callback_url or row.status not in CALLBACK_STATUSES:
            return
        now = self.settings.clock()
        conn.execute(insert(callback_events).values(
            webhook_id=f"msg_{uuid.uuid4().hex}",
            task_id=row.id, project=row.project, url=row.callback_url, status=row.status,
            body=json.dumps(self.record_for(row), separators=(",", ":")),
            state=DeliveryState.PENDING, attempts=0,
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
        with self.http_client() as http:
            wakeup = self.wakeups.callbacks
            while not self.stop_event.is_set():
                # Nothing may end a deliverer (a database restart least of all): the events would
                # wait for a process restart.
                try:
                    seen = wakeup.generation()
                    event = self.claim(deliverer)
                    if event is None:
                        wakeup.wait_idle(seen, self._idle_wait(), self.wakeups.rest_interval)
                        streak.ok()
                        continue
                    wakeup.notify()  # resting deliverers look for more work now
                except Exception as exc:
                    self.stop_event.wait(streak.failed(exc))
                    continue
                try:
                    with log_format.for_task(event.task_id):
                        self.deliver(http, event)
                    streak.ok()
                except Exception as exc:
                    # Recording the outcome failed (a database error): keep this deliverer alive, and
                    # hand the event back as soon as the database answers again (a restart takes
                    # seconds), not after the claim timeout meant for a deliverer that died.
                    log.warning("the outcome of callback %s could not be recorded; it is handed out again "
                                "once the database answers", event.webhook_id)
                    self._hand_back(event, streak, exc)

    def _hand_back(self, event: Row, streak, exc: Exception) -> None:
        """Release this deliverer's claim on `event`, retrying with backoff while the database does
        not answer; given up at the claim timeout, when any deliverer may take the event anyway."""
        give_up = time.monotonic() + self.claim_timeout
        while not self.stop_event.wait(streak.failed(exc)) and time.monotonic() < give_up:
            try:
                with self.write.begin() as conn:
                    conn.execute(update(callback_events)
                                 .where(callback_events.c.seq == event.seq,
                                        callback_events.c.claimed_by == event.claimed_by)
                                 .values(claimed_by=None))
                self.wakeups.callbacks.notify()
                return
            except Exception as again:
                exc = again

    def http_client(self) -> httpx.Client:
        """A deliverer's client. No keep-alive: each attempt makes its own connection, whose socket
        its deadline can shut (AttemptDeadline); a callback is one request, rarely followed at once
        by another to the same receiver."""
        return httpx.Client(transport=self.transport, follow_redirects=False,
                            timeout=self.settings.callback_timeout,
                            limits=httpx.Limits(max_keepalive_connections=0))

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
                                   .where(callback_events.c.state == DeliveryState.PENDING,
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
                   earlier.c.state == DeliveryState.PENDING)
            .exists()
        )
        free = (callback_events.c.claimed_by.is_(None)) | (callback_events.c.claimed_at < now - self.claim_timeout)
        pick = (
            select(callback_events.c.seq)
            .where(callback_events.c.state == DeliveryState.PENDING, callback_events.c.next_attempt_at <= now, free,
                   ~blocked)
            .order_by(callback_events.c.next_attempt_at, callback_events.c.seq)
            .limit(1)
        )
        if self.skip_locked:
            # One statement; rows another deliverer is claiming right now are skipped, not waited for.
            with self.write.begin() as conn:
                return conn.execute(
                    update(callback_events)
                    .where(callback_events.c.seq == pick.with_for_update(skip_locked=True).scalar_subquery(),
                           callback_events.c.state == DeliveryState.PENDING, free)
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
                .where(callback_events.c.seq == seq, callback_events.c.state == DeliveryState.PENDING, free)
                .values(claimed_by=deliverer, claimed_at=now)
                .returning(*callback_events.c)
            ).first()

    def deliver(self, http: httpx.Client, event: Row) -> None:
        started = time.perf_counter()
        status_code: int | None = None
        error: str | None = None
        deadline: AttemptDeadline | None = None
        if event.channel == "email":
            try:
                self._mail(event)
            except MailError as exc:
                error = str(exc)
            self._record(event, 250 if error is None else None, (time.perf_counter() - started) * 1000, error)
            return
        try:
            # Posted to the very address checked: a name that answers otherwise on a second lookup
            # (DNS rebinding) cannot turn the signed callback to an internal address. The lookup is
            # part of the attempt and its deadline: a name server that does not answer held the
            # deliverer for the resolver's own retries, past any claim timeout.
            target = pinned(event.url, allow_loopback=self.settings.allow_loopback_callbacks,
                            allow_private=self.settings.allow_private_callbacks,
                            lookup_timeout=self.settings.callback_timeout)
            deadline = AttemptDeadline(max(0.001, self.settings.callback_timeout - (time.perf_counter() - started)))
            status_code = self._post(http, event, target, deadline)
            if not 200 <= status_code < 300:
                error = f"receiver answered {status_code}" + (
                    " (redirects are not followed)" if 300 <= status_code < 400 else "")
        except BlockedAddress as exc:
            error = f"refused: {exc}"
        except httpx.TimeoutException:
            error = self._timed_out()
        # httpx.InvalidURL (e.g. a control character in the stored URL) is not an HTTPError; left
        # uncaught it would kill the deliverer, and every deliverer that claims the event after it.
        except (httpx.HTTPError, httpx.InvalidURL, ValueError, OSError) as exc:
            # The deadline shut the connection: whatever error that gave, the attempt timed out.
            error = self._timed_out() if deadline is not None and deadline.expired else f"{type(exc).__name__}: {exc}"
        latency_ms = (time.perf_counter() - started) * 1000
        self._record(event, status_code, latency_ms, error)

    def _post(self, http: httpx.Client, event: Row, target: Pinned, deadline: AttemptDeadline) -> int:
        """POST the event within `deadline`; its status code. The body of the answer is never read:
        the status alone decides, and a receiver that trickles a body must not hold a deliverer."""
        body = outgoing_body(event)
        # Safe from many deliverer threads at once: both secret stores make a project's secret
        # under their own lock (keys.json: a thread lock and flock; the database: insert once).
        secret = self.secret_for(event.project)
        headers = {"content-type": "application/json", "user-agent": "dailies-callbacks/1",
                   **signed_headers(secret, event.webhook_id, int(self.settings.clock()), body), **target.headers}
        # Each attempt on a connection of its own (no keep-alive): one made for another host's name
        # on the same address is never reused with this one's.
        with deadline, http.stream("POST", target.url, content=body, headers=headers,
                                   extensions={**target.extensions, "trace": deadline.trace}) as response:
            return response.status_code

    def _mail(self, event: Row) -> None:
        message = json.loads(event.body)
        items = message["items"]
        mail.send(self.settings, event.url.removeprefix("mailto:"), N.subject(message["project"], items),
                  N.email_text(message["project"], items), event.webhook_id)

    def _timed_out(self) -> str:
        return f"timed out after {self.settings.callback_timeout:g} s"

    def _record(self, event: Row, status_code: int | None, latency_ms: float, error: str | None) -> None:
        now = self.settings.clock()
        with self.write.begin() as conn:
            # Counted on the stored row, not from the claimed copy: an attempt that outlived its
            # claim (another deliverer took the event meanwhile) counts toward max_attempts too.
            counted = conn.execute(
                update(callback_events).where(callback_events.c.seq == event.seq)
                .values(attempts=callback_events.c.attempts + 1)
                .returning(callback_events.c.attempts, callback_events.c.max_attempts,
                           callback_events.c.state, callback_events.c.claimed_by)
            ).first()
            if counted is None:  # purged with its task meanwhile: nothing left to log against
                log.info("callback %s of %s was purged during its attempt", event.webhook_id, event.task_id)
                return
            attempt = counted.attempts
            conn.execute(insert(callback_attempts).values(
                webhook_id=event.webhook_id, task_id=event.task_id, status=event.status, attempt=attempt,
                at=now, status_code=status_code, latency_ms=round(latency_ms, 1), error=error,
            ))
            outcome, values = self._outcome(counted, held=counted.claimed_by == event.claimed_by,
                                            delivered=error is None, now=now)
            if values:
                conn.execute(update(callback_events).where(callback_events.c.seq == event.seq).values(**values))
        if self.metrics is not None:
            self.metrics.callback_deliveries.labels(outcome).inc()
        log.info("callback %s of %s (%s) attempt %d: %s", event.webhook_id, event.task_id, event.status,
                 attempt, error or f"delivered ({status_code})")

    def _outcome(self, counted: Row, held: bool, delivered: bool, now: float) -> tuple[str, dict]:
        """What an attempt does to its event, given the event as counted with it. `held`: this
        deliverer still has the claim; if not, another deliverer is sending the event now and
        decides its schedule, so a lost claim only ends the event (delivered, or out of attempts)."""
        release = {"claimed_by": None} if held else {}
        if delivered:
            return DeliveryState.DELIVERED, {"state": DeliveryState.DELIVERED, **release}
        if counted.state != DeliveryState.PENDING:  # delivered or given up by another attempt meanwhile
            return DeliveryState.FAILED, release
        if counted.attempts >= counted.max_attempts:
            return DeliveryState.FAILED, {"state": DeliveryState.FAILED, **release}
        if not held:
            return "retry", {}
        return "retry", {"next_attempt_at": now + retry_delay(self.settings, counted.attempts, self.rng), **release}

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
                                              callback_events.c.state == DeliveryState.PENDING)
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
