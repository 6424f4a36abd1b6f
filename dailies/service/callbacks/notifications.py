"""Notifications out, on the callback queue: a project's targets, and what happens in it queued for them.

A notification is a callback event of its own `channel` (the target's kind), queued under the target's
id where a task's callback has its task id: the same deliverers send it, retry it and log it, in order
per target. It waits `notification_window` seconds before its first attempt, and what happens for the
same target meanwhile is folded into it (up to MAX_FOLDED), so a burst of comments is one message.
What reaches whom is decided by dailies/spec/notifications.py; this module stores and queues.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections.abc import Callable, Iterable
from urllib.parse import quote

from sqlalchemy import Connection, Engine, bindparam, delete, func, insert, select, update

from dailies.service.billing import budgets
from dailies.service.db.tables import (
    DeliveryState,
    callback_events,
    ledger,
    notification_marks,
    notification_targets,
)
from dailies.service.db.writer import writer
from dailies.service.errors import ApiError, from_problems
from dailies.service.runtime.wakeups import CALLBACKS_CHANNEL, Wakeups
from dailies.service.settings import Settings
from dailies.service.tasks.rows import TaskRow
from dailies.spec import limits as L
from dailies.spec import notifications as N
from dailies.spec.statuses import TaskStatus
from dailies.spec.urls import host_problem

log = logging.getLogger("dailies.notifications")

SHOT_CHARS = 120


def _target_of(row) -> N.Target:
    return N.Target(id=row.id, project=row.project, kind=row.kind, address=row.address,
                    events=tuple(e for e in row.events.split(",") if e), owner=row.owner)


# Read in every create's and every task end's transaction: built once (a statement's construction and
# cache key cost more than SQLite's answer).
_TARGETS_OF_PROJECT = (select(notification_targets).where(notification_targets.c.project == bindparam("project"))
                       .order_by(notification_targets.c.created_at, notification_targets.c.id))


class Notifications:
    def __init__(self, engine: Engine, settings: Settings, wakeups: Wakeups,
                 members: Callable[[str], list[str]]) -> None:
        self.engine = engine
        self.write = writer(engine)
        self.settings = settings
        self.wakeups = wakeups
        self.members = members  # a project's member names (the keys'), for @name

    # ---------- targets ----------

    def targets(self, project: str, conn: Connection | None = None) -> list[N.Target]:
        if conn is not None:
            return [_target_of(r) for r in conn.execute(_TARGETS_OF_PROJECT, {"project": project})]
        with self.engine.connect() as own:
            return [_target_of(r) for r in own.execute(_TARGETS_OF_PROJECT, {"project": project})]

    def add_target(self, project: str, created_by: str, fields: dict) -> N.Target:
        if fields["kind"] == "email" and not self.settings.smtp_url:
            raise ApiError(400, "InvalidParameter", "This service sends no e-mail: its operator has not set "
                           "DAILIES_SMTP_URL. Choose a webhook, Slack or Mattermost.", "kind")
        if fields["kind"] != "email" and (problem := host_problem(
                fields["address"], "address", allow_loopback=self.settings.allow_loopback_callbacks,
                allow_private=self.settings.allow_private_callbacks)):
            raise from_problems([problem])  # refused again, pinned, at each delivery (netguard)
        target = N.Target(id=f"nt-{uuid.uuid4().hex[:16]}", project=project, kind=fields["kind"],
                          address=fields["address"], events=fields["events"], owner=fields["owner"])
        with self.write.begin() as conn:
            count = conn.execute(select(func.count()).select_from(notification_targets)
                                 .where(notification_targets.c.project == project)).scalar_one()
            if count >= N.MAX_TARGETS_PER_PROJECT:
                raise ApiError(400, "InvalidParameter", f"A project has at most {N.MAX_TARGETS_PER_PROJECT} "
                               "notification targets; remove one first.", "address")
            conn.execute(insert(notification_targets).values(
                id=target.id, project=project, owner=target.owner, kind=target.kind, address=target.address,
                events=",".join(target.events), created_by=created_by, created_at=int(self.settings.clock())))
        return target

    def remove_target(self, project: str, target_id: str, member: str) -> bool:
        """Removed with its waiting messages. A member's key removes the project's targets and its own."""
        with self.write.begin() as conn:
            row = conn.execute(select(notification_targets).where(
                notification_targets.c.id == target_id, notification_targets.c.project == project)).first()
            if row is None:
                return False
            if member and row.owner and row.owner != member:
                raise ApiError(403, "AccessDenied", f"Target {target_id} is {row.owner}'s; only they remove it.",
                               "target_id")
            conn.execute(delete(notification_targets).where(notification_targets.c.id == target_id))
            conn.execute(delete(callback_events).where(callback_events.c.task_id == target_id,
                                                       callback_events.c.state == DeliveryState.PENDING))
        return True

    # ---------- producing (in the caller's transaction) ----------

    def tell(self, conn: Connection, project: str, happening: N.Happening,
             targets: list[N.Target] | None = None) -> int:
        """Queue `happening` for each target of the project that takes it; how many took it."""
        targets = self.targets(project, conn) if targets is None else targets
        if not targets:
            return 0
        people = set(self.members(project)) | {t.owner for t in targets if t.owner}
        happening = happening.with_mentions(people)
        routed = N.route(happening, targets)
        now = self.settings.clock()
        for target, kind in routed:
            self._queue(conn, target, N.item(happening, kind), now)
        if routed:
            self.wakeups.announce(conn, CALLBACKS_CHANNEL)
        return len(routed)

    def _queue(self, conn: Connection, target: N.Target, entry: dict, now: float) -> None:
        waiting = conn.execute(
            select(callback_events.c.seq, callback_events.c.body)
            .where(callback_events.c.task_id == target.id, callback_events.c.state == DeliveryState.PENDING,
                   callback_events.c.attempts == 0, callback_events.c.claimed_by.is_(None),
                   callback_events.c.next_attempt_at > now)
            .order_by(callback_events.c.seq.desc()).limit(1)
        ).first()
        if waiting is not None:
            body = json.loads(waiting.body)
            if len(body["items"]) < N.MAX_FOLDED:
                body["items"].append(entry)
                folded = conn.execute(
                    update(callback_events)
                    .where(callback_events.c.seq == waiting.seq, callback_events.c.claimed_by.is_(None),
                           callback_events.c.attempts == 0)
                    .values(body=json.dumps(body, separators=(",", ":")))
                ).rowcount
                if folded:
                    return
        address = f"mailto:{target.address}" if target.kind == "email" else target.address
        body = {"project": target.project, "target": target.id, "items": [entry]}
        conn.execute(insert(callback_events).values(
            webhook_id=f"msg_{uuid.uuid4().hex}", task_id=target.id, project=target.project, url=address,
            status=entry["as"], body=json.dumps(body, separators=(",", ":")), state=DeliveryState.PENDING,
            attempts=0, max_attempts=1 + L.CALLBACK_MAX_RETRIES, created_at=now, channel=target.kind,
            next_attempt_at=now + self.settings.notification_window))

    def task_changed(self, conn: Connection, row: TaskRow) -> None:
        """In the transaction of a task's status change: its end for those who asked, and budgets reached."""
        if row.status not in (TaskStatus.SUCCEEDED, TaskStatus.FAILED) and row.status != TaskStatus.QUEUED:
            return
        targets = self.targets(row.project, conn)
        if not targets:
            return
        member = conn.execute(select(ledger.c.member).where(ledger.c.task_id == row.id)).scalar() or ""
        if row.status in (TaskStatus.SUCCEEDED, TaskStatus.FAILED):
            happening = N.Happening(kind=f"task_{row.status}", task_id=row.id, shot=_shot_of(row), maker=member,
                                    text=(row.error_message or "") if row.status == TaskStatus.FAILED else "",
                                    link=self.link(row.id), at=self.settings.clock())
            self.tell(conn, row.project, happening, targets)
        if any("budget" in t.events for t in targets):
            self._budgets(conn, row.project, targets)

    def _budgets(self, conn: Connection, project: str, targets: list[N.Target]) -> None:
        """Each budget of the project that reached 80% or 100%, told once per budget, period and threshold."""
        now = self.settings.clock()
        for status in budgets.budget_status(conn, project, now):
            reached = N.budget_reached(status.used, status.amount)
            if reached is None:
                continue
            mark = f"budget:{project}:{status.member}:{status.period_label}:{status.amount}:{reached}"
            if conn.execute(select(notification_marks.c.mark).where(notification_marks.c.mark == mark)).first():
                continue
            conn.execute(insert(notification_marks).values(mark=mark, at=int(now)))
            whose = f"{status.member}'s budget" if status.member else "the project's budget"
            text = (f"{whose} ({status.period_label}) is at {reached}%: "
                    f"{budgets.money(status.used, status.currency)} of {budgets.money(status.amount, status.currency)} "
                    "used or reserved")
            self.tell(conn, project, N.Happening(kind="budget", maker=status.member, text=text, at=now), targets)

    def link(self, task_id: str) -> str:
        base = (self.settings.dashboard_url or "").rstrip("/")
        return f"{base}/review?task={quote(task_id)}" if base else ""

    # ---------- reading ----------

    def pending(self, project: str) -> int:
        with self.engine.connect() as conn:
            return conn.execute(select(func.count()).select_from(callback_events).where(
                callback_events.c.project == project, callback_events.c.channel.is_not(None),
                callback_events.c.state == DeliveryState.PENDING)).scalar_one()


def _shot_of(row: TaskRow) -> str:
    """A task as people call it: its prompt's start."""
    try:
        content = json.loads(row.request).get("content") or []
    except (ValueError, AttributeError):
        return row.id
    texts: Iterable[str] = (c.get("text", "") for c in content if isinstance(c, dict) and c.get("type") == "text")
    prompt = " ".join(t.strip() for t in texts if isinstance(t, str)).strip()
    return (prompt[:SHOT_CHARS - 1] + "…" if len(prompt) > SHOT_CHARS else prompt) or row.id
