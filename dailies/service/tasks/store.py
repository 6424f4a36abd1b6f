"""The task store: every read and every guarded state change of a task.

Each transition is one `UPDATE ... WHERE id = ? AND status IN (...) RETURNING *` whose result is
checked, so two actors can never both win (a cancel never races a success; two workers never
claim one task). Status-change hooks run inside the same transaction, so the callback event of a
change is stored if and only if the change is.

The same Core statements run on SQLite and PostgreSQL except where the engines differ
(`_Dialect`): upserts, the claim (one `UPDATE ... WHERE id = (SELECT ... FOR UPDATE SKIP LOCKED)`
on PostgreSQL, where claimers run concurrently; SQLite's write lock already serializes them), and
the create path's project lock (SQLite's `BEGIN IMMEDIATE` serializes creates; PostgreSQL takes a
transaction-scoped advisory lock per project, so that two creates cannot both pass the quota or
both miss an idempotency key).
"""

from __future__ import annotations

import builtins
import functools
import logging
import secrets
import string
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime

from sqlalchemy import (
    ColumnElement,
    Connection,
    Engine,
    Select,
    UnaryExpression,
    and_,
    bindparam,
    case,
    delete,
    func,
    insert,
    or_,
    select,
    tuple_,
    update,
)
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.sql.expression import Executable
from sqlalchemy.sql.operators import custom_op

from dailies.service.access import rate_limits
from dailies.service.db import locks
from dailies.service.db.engine import is_postgres
from dailies.service.db.tables import (
    DEFAULT_TIER_RANK,
    DeliveryState,
    callback_attempts,
    callback_events,
    idempotency,
    live_sessions,
    notification_marks,
    tasks,
)
from dailies.service.db.writer import writer
from dailies.service.tasks import counts as task_counts
from dailies.service.tasks import shown_requests
from dailies.service.tasks.rows import TaskRow
from dailies.spec import limits as L
from dailies.spec.catalog import MODELS
from dailies.spec.lifetimes import oldest_kept
from dailies.spec.models import ListTasksQuery
from dailies.spec.statuses import ACTIVE, DELETABLE, TaskStatus

log = logging.getLogger("dailies.tasks")
# As sorted tuples: a statement's cache key must not depend on a set's iteration order.
_ACTIVE = tuple(sorted(ACTIVE))
_DELETABLE = tuple(sorted(DELETABLE))

ChangeHook = Callable[[Connection, TaskRow], None]

_ID_ALPHABET = string.ascii_lowercase + string.digits
# The error code of a task failed after `limits.TASK_ATTEMPTS_MAX` lost runs.
ATTEMPTS_EXHAUSTED = "TaskAttemptsExhausted"

# The statements of the create path, built once: building and cache-keying a Core statement
# costs more CPU than SQLite takes to run it.
_BY_ID = select(tasks).where(tasks.c.id == bindparam("id"))
_COUNT_QUEUED = select(func.count()).select_from(tasks).where(
    tasks.c.project == bindparam("project"), tasks.c.status == TaskStatus.QUEUED)
_IDEMPOTENCY_SEEN = select(idempotency).where(
    idempotency.c.project == bindparam("project"), idempotency.c.key == bindparam("key"),
    idempotency.c.created_at > bindparam("since"))


def _as_is(column: ColumnElement) -> ColumnElement:
    return column


def _without_index(column: ColumnElement) -> ColumnElement:
    """`+column`, SQLite's documented way to keep a term from using an index. With
    `filter.task_ids` the unique index on `id` finds at most one row per id, but without table
    statistics the planner rates a list index (project, tier, created_at range) as selective and
    walks all of the project's tasks instead: 100 ms at 100,000 tasks. ANALYZE fixes that only
    while its statistics stay current, and a new database has none; forcing the plan needs
    neither."""
    return UnaryExpression(column, operator=custom_op("+"))


@dataclass(frozen=True)
class _Dialect:
    """What differs between SQLite and PostgreSQL in this module."""

    postgres: bool
    insert_task: Executable  # no row back means the id was taken (drawn twice in one second)
    save_idempotency_key: Executable
    # How list terms are written when `filter.task_ids` is given (see `_without_index`).
    task_ids_column: Callable[[ColumnElement], ColumnElement]

    @classmethod
    def of(cls, engine: Engine) -> _Dialect:
        if is_postgres(engine):
            excluded = pg_insert(idempotency).excluded
            return cls(
                postgres=True,
                insert_task=pg_insert(tasks).on_conflict_do_nothing(index_elements=[tasks.c.id]).returning(*tasks.c),
                save_idempotency_key=pg_insert(idempotency).on_conflict_do_update(
                    index_elements=[idempotency.c.project, idempotency.c.key],
                    set_={"body_hash": excluded.body_hash, "task_id": excluded.task_id,
                          "created_at": excluded.created_at}),
                # PostgreSQL keeps statistics and plans the id lookup itself (and has no unary + on text).
                task_ids_column=_as_is,
            )
        return cls(
            postgres=False,
            insert_task=sqlite_insert(tasks).on_conflict_do_nothing(index_elements=[tasks.c.id]).returning(*tasks.c),
            save_idempotency_key=insert(idempotency).prefix_with("OR REPLACE"),
            task_ids_column=_without_index,
        )


@functools.cache
def _list_statements(column: Callable[[ColumnElement], ColumnElement], by_status: bool, by_endpoint: bool,
                     by_ids: bool) -> tuple[Select, Select]:
    """(count, page) of a list with this shape of filters, built once per shape (as
    `task_counts.total_statement` is): the values are parameters, so each statement is compiled
    once, and a list only binds them. `column` wraps each term (`_Dialect.task_ids_column`)."""
    where = [
        column(tasks.c.project) == bindparam("project"),
        column(tasks.c.service_tier) == bindparam("tier"),
        column(tasks.c.created_at) >= bindparam("oldest"),
        column(tasks.c.created_at) < bindparam("now"),
    ]
    if by_status:
        where.append(column(tasks.c.status) == bindparam("status"))
    if by_endpoint:
        where.append(column(tasks.c.endpoint) == bindparam("endpoint"))
    if by_ids:
        where.append(tasks.c.id.in_(bindparam("ids", expanding=True)))
    cond = and_(*where)
    return (
        select(func.count()).select_from(tasks).where(cond),
        select(tasks).where(cond).order_by(tasks.c.created_at.desc(), tasks.c.seq.desc())
        .limit(bindparam("limit")).offset(bindparam("offset")),
    )


# Task records deleted per transaction by `purge`.
PURGE_BATCH = 1000
MARKS_KEPT_S = 366 * 86400


def _one_family(model: ColumnElement) -> ColumnElement:
    """A model column with BytePlus ids read as their Volcengine twins (the catalog's pairs)."""
    return case({m.byteplus_id: m.id for m in MODELS}, value=model, else_=model)


def new_task_id(now: float) -> str:
    """`cgt-YYYYMMDDHHMMSS-xxxxx` (DESIGN.md section 3)."""
    stamp = datetime.fromtimestamp(now, UTC).strftime("%Y%m%d%H%M%S")
    return f"cgt-{stamp}-{''.join(secrets.choice(_ID_ALPHABET) for _ in range(5))}"


def _endpoint_turns():
    """Each endpoint's turn (per tier) as the age of the task it would run next: the oldest of its
    queued tasks of the largest priority. Two grouped passes over the queue, not a sorted lookup
    per queued row (that made a claim 60x slower with a thousand tasks queued)."""
    q, n = tasks.alias("q"), tasks.alias("n")
    top = (select(q.c.endpoint, q.c.tier_rank, func.max(func.coalesce(q.c.priority, 0)).label("top"))
           .where(q.c.status == TaskStatus.QUEUED)
           .group_by(q.c.endpoint, q.c.tier_rank)
           .subquery("top"))
    return (select(n.c.endpoint, n.c.tier_rank, func.min(n.c.created_at).label("age"))
            .join(top, and_(top.c.endpoint == n.c.endpoint, top.c.tier_rank == n.c.tier_rank,
                            func.coalesce(n.c.priority, 0) == top.c.top))
            .where(n.c.status == TaskStatus.QUEUED)
            .group_by(n.c.endpoint, n.c.tier_rank)
            .subquery("turns"))


@dataclass(frozen=True)
class Created:
    task: TaskRow


@dataclass(frozen=True)
class Replayed:
    """The idempotency key made this task from the same body earlier: it is the answer again."""

    task: TaskRow


Inserted = Created | Replayed


class QuotaReached(Exception):
    def __init__(self, quota: int) -> None:
        super().__init__(f"{quota} queued tasks")
        self.quota = quota


class KeyReused(Exception):
    """The idempotency key was used with another body (`task_id` None), or made a task deleted since."""

    def __init__(self, task_id: str | None) -> None:
        super().__init__(task_id or "another body")
        self.task_id = task_id


class TaskStore:
    def __init__(self, engine: Engine, on_change: ChangeHook | None = None) -> None:
        self.engine = engine
        self.write = writer(engine)
        self.on_change = on_change
        self.dialect = _Dialect.of(engine)

    # ---------- reads ----------

    def get(self, project: str, task_id: str) -> TaskRow | None:
        """A task of this project; another project's task is as absent as a missing one."""
        row = self.get_by_id(task_id)
        return row if row is not None and row.project == project else None

    def get_by_id(self, task_id: str) -> TaskRow | None:
        with self.engine.connect() as conn:
            return self._by_id(conn, task_id)

    @staticmethod
    def _by_id(conn: Connection, task_id: str) -> TaskRow | None:
        return TaskRow.maybe(conn.execute(_BY_ID, {"id": task_id}).first())

    def list(self, project: str, query: ListTasksQuery, now: int) -> tuple[int, list[TaskRow]]:
        """Tasks created in [now - 7 days, now), newest first, with the query's filters."""
        params = {"project": project, "tier": query.service_tier, "oldest": oldest_kept(now), "now": now,
                  "status": query.status, "endpoint": query.model, "ids": query.task_ids or [],
                  "limit": query.page_size, "offset": (query.page_num - 1) * query.page_size}
        total_query, page_query = _list_statements(self.dialect.task_ids_column if query.task_ids else _as_is,
                                                   bool(query.status), bool(query.model), bool(query.task_ids))
        total_params = params
        if not query.task_ids:  # ids: a few rows, counted as they are
            from_counters = task_counts.total_statement(project, query, now)
            if from_counters is not None:
                total_query, total_params = from_counters
        with self.engine.connect() as conn:
            total = conn.execute(total_query, total_params).scalar_one()
            rows = conn.execute(page_query, params).all()
        return total, TaskRow.all_of(rows)

    def count_queued(self, conn: Connection, project: str) -> int:
        return conn.execute(_COUNT_QUEUED, {"project": project}).scalar_one()

    # ---------- creation ----------

    def insert(self, values: dict, *, quota: int | None = None,
               idempotency_key: str | None = None, body_hash: str | None = None,
               reserve: Callable[[Connection, TaskRow], None] | None = None) -> Inserted:
        """Insert a queued task: `Created`, or `Replayed` when the idempotency key made a task from the
        same body before. Raises `QuotaReached` when the project already has `quota` queued tasks,
        `KeyReused` when the key was used with another body or its task has been deleted since.
        `reserve(conn, row)` runs after the insert in the same transaction, under the project's lock
        (billing/budgets.py); an exception it raises (a budget's refusal) rolls the insert back."""
        with self.write.begin() as conn:
            if self.dialect.postgres:
                locks.hold(conn, locks.Namespace.PROJECT, values["project"])
            if idempotency_key is not None:
                seen = conn.execute(_IDEMPOTENCY_SEEN, {
                    "project": values["project"], "key": idempotency_key,
                    "since": values["created_at"] - L.IDEMPOTENCY_WINDOW_SECONDS,
                }).first()
                if seen is not None:
                    if seen.body_hash != body_hash:
                        raise KeyReused(None)
                    earlier = self._by_id(conn, seen.task_id)
                    if earlier is None:  # the task this key made has been deleted since
                        raise KeyReused(seen.task_id)
                    return Replayed(earlier)
            if quota is not None and self.count_queued(conn, values["project"]) >= quota:
                raise QuotaReached(quota)
            for _ in range(5):
                inserted = conn.execute(self.dialect.insert_task, values).first()
                if inserted is not None:
                    break
                values = {**values, "id": new_task_id(values["created_at"])}  # an id drawn twice in one second
            else:  # pragma: no cover - five collisions in a row of a 36^5 draw
                raise RuntimeError("could not allocate a task id")
            row = TaskRow.of(inserted)
            if reserve is not None:
                reserve(conn, row)
            if idempotency_key is not None:
                conn.execute(self.dialect.save_idempotency_key, {
                    "project": values["project"], "key": idempotency_key, "body_hash": body_hash,
                    "task_id": row.id, "created_at": values["created_at"],
                })
            log.info("task %s created -> queued (project %s, model %s)", row.id, row.project, row.model,
                     extra={"task_id": row.id})  # a JSON log line names its task whatever the context
            if self.on_change:
                self.on_change(conn, row)
        return Created(row)

    # ---------- transitions ----------

    def _transition(self, conn: Connection, task_id: str, from_statuses: Iterable[str], values: dict,
                    *extra_where) -> TaskRow | None:
        stmt = (
            update(tasks)
            .where(tasks.c.id == task_id, tasks.c.status.in_(tuple(from_statuses)), *extra_where)
            .values(**values)
            .returning(*tasks.c)
        )
        row = TaskRow.maybe(conn.execute(stmt).first())
        if row is not None and "status" in values:
            self._changed(conn, row, values)
        return row

    def _changed(self, conn: Connection, row: TaskRow, values: dict) -> None:
        log.info("task %s -> %s%s", row.id, values["status"],
                 f" ({values['error_code']})" if values.get("error_code") else "", extra={"task_id": row.id})
        if self.on_change:
            self.on_change(conn, row)

    def claim_next(self, worker_id: str, now: float, running_cap: int | None = None) -> TaskRow | None:
        """Take the next queued task: `default` tier before `flex`; within one endpoint larger
        priority first, then age (the spec: "a larger value queues earlier within the same
        Endpoint"); across endpoints, the endpoint whose next task (the one it would run) is oldest
        goes first. So priority reorders an endpoint's own turn, never other endpoints': keyed by
        its oldest task instead, one old task kept an endpoint's turn open while fresh priority
        tasks of that endpoint ran ahead of every other endpoint's, until their tasks expired.

        `running_cap` (a gateway: the upstream's tasks at once per model, times its keys): only a
        task whose model has fewer tasks running than that; the others stay queued here. Claims
        are then serialized (an advisory lock on PostgreSQL), so concurrent claims cannot both
        take the last place."""
        t = tasks.alias("t")
        turns = _endpoint_turns()
        where = [t.c.status == TaskStatus.QUEUED, t.c.deadline_at > int(now)]
        if running_cap is not None:
            # Per model, whichever id family names it: the upstream counts one model once. The cap
            # is the online (default) tier's; flex is offline, limited by tokens a day, and may wait
            # upstream for hours: flex tasks neither count against it nor are held by it.
            r = tasks.alias("r")
            running = (select(func.count()).select_from(r)
                       .where(r.c.status == TaskStatus.RUNNING, r.c.tier_rank == DEFAULT_TIER_RANK,
                              _one_family(r.c.model) == _one_family(t.c.model))
                       .scalar_subquery())
            where.append(or_(t.c.tier_rank != DEFAULT_TIER_RANK, running < running_cap))
        pick = (
            select(t.c.id)
            .join(turns, and_(turns.c.endpoint == t.c.endpoint, turns.c.tier_rank == t.c.tier_rank))
            .where(*where)
            .order_by(t.c.tier_rank, turns.c.age, func.coalesce(t.c.priority, 0).desc(), t.c.created_at, t.c.seq)
            .limit(1)
        )
        claimed = {"status": TaskStatus.RUNNING, "worker_id": worker_id, "heartbeat_at": now,
                   "started_at": int(now), "updated_at": int(now), "attempts": tasks.c.attempts + 1}
        with self.write.begin() as conn:
            if self.dialect.postgres and running_cap is not None:
                locks.hold(conn, locks.Namespace.CAPPED_CLAIMS, "")
            if self.dialect.postgres:
                # Pick and mark in one statement: the picked row is locked as it is read, and rows
                # other workers are picking at this moment are skipped instead of waited for.
                picked = pick.with_for_update(skip_locked=True, of=t).scalar_subquery()
                row = TaskRow.maybe(conn.execute(
                    update(tasks).where(tasks.c.id == picked, tasks.c.status == TaskStatus.QUEUED)
                    .values(**claimed).returning(*tasks.c)
                ).first())
                if row is not None:
                    self._changed(conn, row, claimed)
                return row
            task_id = conn.execute(pick).scalar()
            if task_id is None:
                return None
            return self._transition(conn, task_id, (TaskStatus.QUEUED,), claimed)

    def heartbeat(self, task_id: str, worker_id: str, now: float) -> bool:
        """Refresh a running task's heartbeat. False when the task is no longer this worker's
        running task (expired, recovered after a stall, or deleted): the worker must stop."""
        return task_id in self.heartbeat_many([(task_id, worker_id)], now)

    def heartbeat_many(self, running: Iterable[tuple[str, str]], now: float) -> set[str]:
        """Refresh the heartbeats of a process's running renders, (task id, worker id) pairs, in
        one statement. Returns the task ids still running under those workers; the others were
        expired, recovered after a stall or deleted, and their renders must stop."""
        pairs = list(running)
        if not pairs:
            return set()
        with self.write.begin() as conn:
            return set(conn.execute(
                update(tasks)
                .where(tasks.c.status == TaskStatus.RUNNING, tuple_(tasks.c.id, tasks.c.worker_id).in_(pairs))
                .values(heartbeat_at=now)
                .returning(tasks.c.id)
            ).scalars())

    def save_generator_state(self, task_id: str, worker_id: str, state: str) -> bool:
        """Keep what a render checkpointed, while the task is still this worker's running task."""
        with self.write.begin() as conn:
            return conn.execute(
                update(tasks).where(tasks.c.id == task_id, tasks.c.status == TaskStatus.RUNNING,
                                    tasks.c.worker_id == worker_id)
                .values(generator_state=state).returning(tasks.c.id)).first() is not None

    def succeed(self, task_id: str, worker_id: str, now: float, result: str,
                video_file: str, last_frame_file: str | None) -> TaskRow | None:
        with self.write.begin() as conn:
            return self._transition(conn, task_id, (TaskStatus.RUNNING,), {
                "status": TaskStatus.SUCCEEDED, "updated_at": int(now), "finished_at": int(now), "result": result,
                "video_file": video_file, "last_frame_file": last_frame_file,
            }, tasks.c.worker_id == worker_id)

    def fail(self, task_id: str, worker_id: str | None, now: float, code: str, message: str,
             from_statuses: tuple[str, ...] = (TaskStatus.RUNNING,)) -> TaskRow | None:
        extra = (tasks.c.worker_id == worker_id,) if worker_id else ()
        with self.write.begin() as conn:
            return self._transition(conn, task_id, from_statuses, {
                "status": TaskStatus.FAILED, "updated_at": int(now), "finished_at": int(now),
                "error_code": code, "error_message": message,
            }, *extra)

    def cancel(self, project: str, task_id: str, now: float) -> TaskRow | None:
        """queued -> cancelled; None when the task was not queued (anymore)."""
        with self.write.begin() as conn:
            return self._transition(conn, task_id, (TaskStatus.QUEUED,), {
                "status": TaskStatus.CANCELLED, "updated_at": int(now), "finished_at": int(now),
            }, tasks.c.project == project)

    def cancel_forwarded(self, project: str, task_id: str, now: float) -> TaskRow | None:
        """running -> cancelled, for a gateway's task the upstream cancelled while it was still queued
        there (its render then finds the task no longer its own and stops)."""
        with self.write.begin() as conn:
            return self._transition(conn, task_id, (TaskStatus.RUNNING,), {
                "status": TaskStatus.CANCELLED, "updated_at": int(now), "finished_at": int(now),
            }, tasks.c.project == project)

    def delete_terminal(self, project: str, task_id: str) -> TaskRow | None:
        """Delete the record of a succeeded, failed or expired task, and its request as shown
        (thumbnails); returns the deleted row."""
        with self.write.begin() as conn:
            row = TaskRow.maybe(conn.execute(
                delete(tasks)
                .where(tasks.c.id == task_id, tasks.c.project == project,
                       tasks.c.status.in_(_DELETABLE))
                .returning(*tasks.c)
            ).first())
            if row is not None:
                shown_requests.forget(conn, [task_id])
        if row is not None:
            log.info("task %s deleted (was %s)", task_id, row.status)
        return row

    def expire_overdue(self, now: float) -> builtins.list[TaskRow]:
        """queued or running past `execution_expires_after` -> expired (spec section 3)."""
        with self.engine.connect() as conn:
            due = conn.execute(select(tasks.c.id).where(
                tasks.c.status.in_(_ACTIVE), tasks.c.deadline_at <= int(now)
            )).scalars().all()
        expired = []
        for task_id in due:
            with self.write.begin() as conn:
                row = self._transition(conn, task_id, _ACTIVE, {
                    "status": TaskStatus.EXPIRED, "updated_at": int(now), "finished_at": int(now),
                    "error_code": "TaskExpired",
                    "error_message": "The task did not finish within execution_expires_after.",
                }, tasks.c.deadline_at <= int(now))
            if row is not None:
                expired.append(row)
        return expired

    def requeue_stale(self, now: float, stale_after: float,
                      max_attempts: int = L.TASK_ATTEMPTS_MAX) -> builtins.list[TaskRow]:
        """Running tasks whose worker stopped beating (killed, crashed) go back to the queue, or
        fail with `TaskAttemptsExhausted` once `max_attempts` runs were lost, so a task that kills
        its worker is not run again and again until its deadline. Returns the rows changed.
        The dead worker's result can never land: finishing requires its worker id."""
        limit = now - stale_after
        with self.engine.connect() as conn:
            stale = conn.execute(select(tasks.c.id).where(
                tasks.c.status == TaskStatus.RUNNING, tasks.c.heartbeat_at < limit
            )).scalars().all()
        recovered = []
        for task_id in stale:
            with self.write.begin() as conn:
                row = self._transition(conn, task_id, (TaskStatus.RUNNING,), {
                    "status": TaskStatus.QUEUED, "worker_id": None, "heartbeat_at": None, "updated_at": int(now),
                }, tasks.c.heartbeat_at < limit, tasks.c.attempts < max_attempts)
                if row is None:
                    row = self._transition(conn, task_id, (TaskStatus.RUNNING,), {
                        "status": TaskStatus.FAILED, "updated_at": int(now), "finished_at": int(now),
                        "error_code": ATTEMPTS_EXHAUSTED,
                        "error_message": f"The render was lost {max_attempts} times (its worker stopped while "
                                         "rendering it); the task is not run again.",
                    }, tasks.c.heartbeat_at < limit, tasks.c.attempts >= max_attempts)
            if row is not None:
                log.warning("task %s recovered from a worker that stopped beating -> %s", task_id, row.status,
                            extra={"task_id": task_id})
                recovered.append(row)
        return recovered

    def release(self, task_id: str, worker_id: str, now: float) -> TaskRow | None:
        """running -> queued for a render its own worker gave up on a clean stop: not a lost
        run, so the attempt is given back."""
        with self.write.begin() as conn:
            return self._transition(conn, task_id, (TaskStatus.RUNNING,), {
                "status": TaskStatus.QUEUED, "worker_id": None, "heartbeat_at": None, "updated_at": int(now),
                "attempts": tasks.c.attempts - 1,
            }, tasks.c.worker_id == worker_id)

    def purge(self, now: float) -> builtins.list[TaskRow]:
        """Delete records created more than 7 days ago, with their callback events and delivery
        log (an event holds a copy of the record) and their requests as shown (thumbnails); returns the
        records so files can go too.

        In batches of PURGE_BATCH, each its own short transaction: after days without a sweep (a
        service that was down) the backlog may be a hundred thousand rows, and one transaction
        over all of them held the write lock for seconds, stalling every create meanwhile."""
        cutoff = oldest_kept(now)
        purged: builtins.list[TaskRow] = []
        while True:
            with self.write.begin() as conn:
                batch = select(tasks.c.id).where(tasks.c.created_at < cutoff).limit(PURGE_BATCH)
                rows = TaskRow.all_of(conn.execute(delete(tasks).where(tasks.c.id.in_(batch)).returning(*tasks.c)))
                _forget_callbacks(conn, [row.id for row in rows])
                shown_requests.forget(conn, [row.id for row in rows])
            purged += rows
            if len(rows) < PURGE_BATCH:
                break
        more = True
        while more:
            with self.write.begin() as conn:
                # The callback events of records deleted earlier, a batch at a time; the last batch
                # shares its transaction with the expired keys and counters.
                more = _forget_old_callback_events(conn, cutoff)
                if not more:
                    conn.execute(delete(idempotency).where(
                        idempotency.c.created_at < int(now) - L.IDEMPOTENCY_WINDOW_SECONDS))
                    task_counts.forget_before(conn, cutoff)
                    rate_limits.forget_before(conn, now)
                    # Live sessions untouched as long as a record is kept, and the marks of what was told
                    # once (a budget's 80% of a month) a year after.
                    conn.execute(delete(live_sessions).where(live_sessions.c.updated_at < cutoff))
                    conn.execute(delete(notification_marks).where(notification_marks.c.at < cutoff - MARKS_KEPT_S))
        if purged:
            log.info("purged %d task records older than 7 days", len(purged))
        return purged


def _forget_callbacks(conn: Connection, task_ids: list[str]) -> None:
    """The callback events (pending ones too: their record is gone) and delivery log of these tasks."""
    if task_ids:
        conn.execute(delete(callback_events).where(callback_events.c.task_id.in_(task_ids)))
        conn.execute(delete(callback_attempts).where(callback_attempts.c.task_id.in_(task_ids)))


def _forget_old_callback_events(conn: Connection, cutoff: int) -> bool:
    """Up to PURGE_BATCH callback events older than the records kept, with the delivery log of their
    tasks: those of records `DELETE` removed, or purged before events went with their record.
    Returns whether the batch was full (there may be more)."""
    left = PURGE_BATCH
    for state in (DeliveryState.DELIVERED, DeliveryState.FAILED, DeliveryState.PENDING):
        left -= _forget_old_events_in(conn, state, cutoff, left)
        if not left:
            return True
    return False


def _forget_old_events_in(conn: Connection, state: str, cutoff: int, limit: int) -> int:
    """Up to `limit` events in `state` made before `cutoff`: an event is never due before it was
    made, so `next_attempt_at` (indexed with `state`) before the cutoff means made before it too. A
    pending event goes only if its task is gone. Returns how many were deleted."""
    where = [callback_events.c.state == state, callback_events.c.next_attempt_at < cutoff]
    if state == DeliveryState.PENDING:
        where.append(~select(tasks.c.id).where(tasks.c.id == callback_events.c.task_id).exists())
    batch = select(callback_events.c.seq).where(*where).limit(limit)
    task_ids = conn.execute(delete(callback_events).where(callback_events.c.seq.in_(batch))
                            .returning(callback_events.c.task_id)).scalars().all()
    if task_ids:
        task_gone = ~select(tasks.c.id).where(tasks.c.id == callback_attempts.c.task_id).exists()
        conn.execute(delete(callback_attempts).where(callback_attempts.c.task_id.in_(set(task_ids)), task_gone))
    return len(task_ids)
