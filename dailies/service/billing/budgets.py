"""Budgets and the ledger: what a project or a member may spend, and what each task cost.

- A budget caps a project ('' member) or one member of it, per calendar month (UTC) or in total, in
  one currency. A create reserves its estimated cost (`reserve`): one guarded INSERT into the
  ledger that adds the row only if no budget that applies would be passed, run in the create's own
  transaction, under the project's lock (store.py: PostgreSQL's advisory lock, SQLite's single
  writer), so concurrent creates cannot both take the last of a budget.
- A model priced in another currency than a budget that applies, or with no known price at all,
  is refused while that budget exists: the budget could not be kept (docs/errors.md). Without a
  budget such tasks are recorded with currency '' and shown as unpriced.
- The task's status change settles or releases its row in the same transaction, and this module
  alone decides which (`on_status_change`, from the one status-change hook): success sets the amount
  to the real usage's cost; failure, cancellation and expiry release it (a released row counts for
  nothing). So the ledger's settled rows sum to the cost of the succeeded tasks, plus, on a gateway,
  the tasks the upstream billed without their result reaching the member (`UpstreamBill`): a task
  the upstream may bill is held until it says (`held_outcome`, asked by the gateway's sweep), then
  settled at its estimate or released.

Amounts are integers in millionths of the currency unit.
"""

from __future__ import annotations

import calendar
import functools
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import ROUND_CEILING, Decimal
from enum import Enum

from sqlalchemy import Connection, Engine, and_, bindparam, case, exists, func, literal, or_, select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert

from dailies.service.db.tables import budgets, ledger
from dailies.service.errors import ApiError
from dailies.spec.prices import Cost, NoPrice, amounts_apart, format_amount
from dailies.spec.statuses import TERMINAL, TaskStatus

MICROS = Decimal(1_000_000)
PERIODS = ("month", "total")
CURRENCIES = ("CNY", "USD")
# A gateway's task that ended here with its create sent and never answered (nor its id learned since):
# this long after its end the upstream most likely made it, and its estimate is counted (HTTP timeout: 30 s).
UNANSWERED_CREATE_S = 300.0
# An upstream that does not answer about a task that ended here is asked each sweep for this long;
# then its estimate is counted rather than the task held for ever.
UPSTREAM_SILENT_S = 6 * 3600.0
# The error of a create that would pass a budget: 403 as Ark answers an account out of funds
# (`AccountOverdueError`), with a subcode in Ark's dotted style (docs/errors.md).
BUDGET_EXCEEDED = "AccountOverdueError.BudgetExceeded"


def to_micros(amount: Decimal) -> int:
    return int((amount * MICROS).to_integral_value(rounding=ROUND_CEILING))


def money(micros: int, currency: str) -> str:
    return format_amount(Decimal(micros) / MICROS, currency)


def month_of(now: float) -> int:
    moment = datetime.fromtimestamp(now, UTC)
    return moment.year * 100 + moment.month


# ---------- reserving (in the create's transaction) ----------


@functools.cache
def _reserve_statement():
    """INSERT the reservation unless a budget that applies to (project, member) would be passed:
    one that is in another currency, or whose spent + reserved + this amount exceeds it."""
    b = budgets.alias("b")
    spent = (select(func.coalesce(func.sum(ledger.c.amount), 0))
             .where(ledger.c.project == b.c.project, ledger.c.state != "released", ledger.c.currency == b.c.currency,
                    or_(b.c.member == "", ledger.c.member == b.c.member),
                    or_(b.c.period == "total", ledger.c.month == bindparam("month")))
             .scalar_subquery())
    passed = (select(b.c.project)
              .where(b.c.project == bindparam("project"), b.c.member.in_([literal(""), bindparam("member")]),
                     or_(b.c.currency != bindparam("currency"), spent + bindparam("amount") > b.c.amount)))
    return ledger.insert().from_select(
        ["task_id", "project", "member", "model", "currency", "amount", "tokens", "state", "month", "created_at"],
        select(bindparam("task_id"), bindparam("project"), bindparam("member"), bindparam("model"),
               bindparam("currency"), bindparam("amount"), bindparam("tokens"), literal("reserved"),
               bindparam("month"), bindparam("created_at")).where(~exists(passed)),
    ).returning(ledger.c.task_id)  # psycopg reports no rowcount for INSERT ... SELECT


@dataclass(frozen=True)
class Reservation:
    currency: str  # '' when the model has no price
    amount: int
    tokens: int
    why_unpriced: str = ""

    @classmethod
    def of(cls, estimate: Cost | NoPrice) -> Reservation:
        if isinstance(estimate, NoPrice):
            return cls("", 0, estimate.tokens or 0, estimate.reason)
        return cls(estimate.currency, to_micros(estimate.amount), estimate.tokens)


def reserve(conn: Connection, *, task_id: str, project: str, member: str, model: str, reservation: Reservation,
            now: float) -> ApiError | None:
    """Reserve the task's estimated cost; the refusal to answer (the caller rolls back) or None."""
    params = {"task_id": task_id, "project": project, "member": member, "model": model,
              "currency": reservation.currency, "amount": reservation.amount, "tokens": reservation.tokens,
              "month": month_of(now), "created_at": int(now)}
    if conn.execute(_reserve_statement(), params).first() is not None:
        return None
    return _refusal(conn, project, member, reservation, now)


def _refusal(conn: Connection, project: str, member: str, reservation: Reservation, now: float) -> ApiError:
    for status in budget_status(conn, project, now):
        if status.member not in ("", member):
            continue
        whose = f"project {project}" if not status.member else f"{status.member} in project {project}"
        period = "in total" if status.period == "total" else f"for {status.period_label}"
        if not reservation.currency:
            return ApiError(403, BUDGET_EXCEEDED, f"The budget of {whose} cannot be kept for this request: its "
                            f"model has no known price ({reservation.why_unpriced}).", "model")
        if reservation.currency != status.currency:
            # A budget holds one currency; setting one in the other replaces it, so that is not offered as
            # a way out to a member (the operator decides, `dailies budget set --force`).
            return ApiError(403, BUDGET_EXCEEDED, f"The budget of {whose} is in {status.currency} and this model "
                            f"is priced in {reservation.currency}: use a model priced in {status.currency} (a "
                            f"budget holds one currency).", "model")
        if status.used + reservation.amount > status.amount:
            left, estimate = amounts_apart(Decimal(status.left) / MICROS, Decimal(reservation.amount) / MICROS,
                                           status.currency)
            return ApiError(403, BUDGET_EXCEEDED, f"The budget of {whose} {period} is "
                            f"{money(status.amount, status.currency)}; {left} is left and this task is estimated "
                            f"at {estimate}.", "")
    raise RuntimeError("the reservation was refused but no budget explains it")  # pragma: no cover


# ---------- settling (in the status change's transaction) ----------

_SETTLE = (update(ledger).where(ledger.c.task_id == bindparam("id"), ledger.c.state == "reserved")
           .values(state="settled", amount=bindparam("amount"), tokens=bindparam("tokens"),
                   currency=bindparam("currency"), settled_at=bindparam("now"),
                   upstream_key=bindparam("upstream_key")))
_RELEASE = (update(ledger).where(ledger.c.task_id == bindparam("id"), ledger.c.state == "reserved")
            .values(state="released", settled_at=bindparam("now")))


def settle(conn: Connection, task_id: str, actual: Cost | NoPrice, now: float,
           upstream_key: str | None = None) -> None:
    """Success: the real cost (on a gateway, the upstream's usage, and the upstream key it ran on)."""
    if isinstance(actual, NoPrice):
        conn.execute(_SETTLE, {"id": task_id, "amount": 0, "tokens": actual.tokens or 0, "currency": "",
                               "now": int(now), "upstream_key": upstream_key})
        return
    conn.execute(_SETTLE, {"id": task_id, "amount": to_micros(actual.amount), "tokens": actual.tokens,
                           "currency": actual.currency, "now": int(now), "upstream_key": upstream_key})


def release(conn: Connection, task_id: str, now: float) -> None:
    conn.execute(_RELEASE, {"id": task_id, "now": int(now)})


_SETTLE_AT_ESTIMATE = (update(ledger).where(ledger.c.task_id == bindparam("id"), ledger.c.state == "reserved")
                       .values(state="settled", settled_at=bindparam("now"), upstream_key=bindparam("upstream_key")))


def settle_at_estimate(conn: Connection, task_id: str, now: float, upstream_key: str | None) -> None:
    """A gateway's task that expired here while the upstream ran it: the upstream bills it, and its
    usage is never read after the expiry, so the reserved estimate (the price of what was asked for)
    is what it cost."""
    conn.execute(_SETTLE_AT_ESTIMATE, {"id": task_id, "now": int(now), "upstream_key": upstream_key})


# ---------- when: the one decision of settle or release ----------


class UpstreamBill(Enum):
    """What an upstream may bill for a task that ends here (a gateway's checkpoint says; a service
    that renders itself: always NONE)."""

    NONE = "none"  # nothing, or the upstream ended it unbilled (failed, expired, cancelled there)
    MADE = "made"  # the upstream made it: billed there, whatever happens to its result here
    HANDED = "handed"  # created upstream and not ended there: billed if it runs there
    UNANSWERED = "unanswered"  # its create was sent and never answered: it may exist there


def on_status_change(conn: Connection, task_id: str, status: str, now: float, *,
                     actual: Callable[[], Cost | NoPrice], bill: UpstreamBill = UpstreamBill.NONE,
                     upstream_key: str | None = None) -> None:
    """What a status change does to the task's reservation, in its transaction. A task that ended
    while the upstream may bill it stays reserved: `held_outcome` decides later."""
    if status not in TERMINAL:
        return  # reserved at create; queued and running change nothing
    if status == TaskStatus.SUCCEEDED:
        settle(conn, task_id, actual(), now, upstream_key)
    elif bill is UpstreamBill.MADE:
        # Made (and billed) upstream, then its results could not be taken here: its usage is not
        # read again, so the estimate of what was asked is what it cost.
        settle_at_estimate(conn, task_id, now, upstream_key)
    elif status == TaskStatus.CANCELLED or bill is UpstreamBill.NONE:
        release(conn, task_id, now)


def asks_upstream(bill: UpstreamBill) -> bool:
    """Whether a held task's outcome is the upstream's word (it knows the task's id)."""
    return bill in (UpstreamBill.MADE, UpstreamBill.HANDED)


def held_outcome(bill: UpstreamBill, ended_for: float, upstream_says: bool | None = None) -> bool | None:
    """For a task that ended `ended_for` seconds ago with its cost held: True to settle it at its
    estimate, False to release it, None to hold it for now. `upstream_says`: whether the upstream
    bills it (None: it did not answer, or was not asked)."""
    if bill is UpstreamBill.NONE:
        return False
    if asks_upstream(bill):
        if upstream_says is None and ended_for >= UPSTREAM_SILENT_S:
            return True  # asked for hours without an answer: counted rather than held for ever
        return upstream_says
    # Sent and never answered: the upstream most likely made it, once its answer cannot come any more.
    return True if ended_for >= UNANSWERED_CREATE_S else None


def settle_held(conn: Connection, task_id: str, billed: bool, now: float, upstream_key: str | None) -> None:
    """A held task's outcome (`held_outcome`): its estimate spent, or its reservation released."""
    if billed:
        settle_at_estimate(conn, task_id, now, upstream_key)
    else:
        release(conn, task_id, now)


# ---------- budgets (the CLI) ----------


@dataclass(frozen=True)
class BudgetStatus:
    project: str
    member: str
    period: str
    period_label: str  # "2026-11" or "total"
    currency: str
    amount: int
    settled: int
    reserved: int

    @property
    def used(self) -> int:
        return self.settled + self.reserved

    @property
    def left(self) -> int:
        return max(0, self.amount - self.used)


def set_budget(engine: Engine, project: str, member: str, amount: Decimal, currency: str, period: str,
               now: float) -> None:
    if currency not in CURRENCIES:
        raise ValueError(f"currency must be one of {', '.join(CURRENCIES)}")
    if period not in PERIODS:
        raise ValueError(f"period must be one of {', '.join(PERIODS)}")
    if amount < 0:
        raise ValueError("amount must be 0 or more")
    insert = pg_insert if engine.dialect.name == "postgresql" else sqlite_insert
    values = {"project": project, "member": member, "period": period, "currency": currency,
              "amount": to_micros(amount), "updated_at": int(now)}
    stmt = insert(budgets).values(**values)
    changed = ("period", "currency", "amount", "updated_at")
    stmt = stmt.on_conflict_do_update(index_elements=[budgets.c.project, budgets.c.member],
                                      set_={k: stmt.excluded[k] for k in changed})
    with engine.begin() as conn:
        conn.execute(stmt)


def remove_budget(engine: Engine, project: str, member: str) -> bool:
    with engine.begin() as conn:
        return conn.execute(budgets.delete().where(budgets.c.project == project,
                                                   budgets.c.member == member)).rowcount > 0


def budget_status(conn: Connection, project: str, now: float) -> list[BudgetStatus]:
    month = month_of(now)
    out = []
    for b in conn.execute(select(budgets).where(budgets.c.project == project).order_by(budgets.c.member)):
        where = [ledger.c.project == project, ledger.c.currency == b.currency]
        if b.member:
            where.append(ledger.c.member == b.member)
        if b.period == "month":
            where.append(ledger.c.month == month)
        sums = conn.execute(select(
            func.coalesce(func.sum(case((ledger.c.state == "settled", ledger.c.amount), else_=0)), 0),
            func.coalesce(func.sum(case((ledger.c.state == "reserved", ledger.c.amount), else_=0)), 0),
        ).where(*where)).one()
        label = "total" if b.period == "total" else f"{month // 100}-{month % 100:02d}"
        out.append(BudgetStatus(project, b.member, b.period, label, b.currency, b.amount, int(sums[0]),
                                int(sums[1])))
    return out


# ---------- spend (reports) ----------


@dataclass(frozen=True)
class SpendRow:
    day: str  # YYYY-MM-DD (UTC) of the create
    member: str
    model: str
    currency: str  # '' for tasks without a known price
    state: str  # settled (spent) or reserved (running or queued)
    tasks: int
    tokens: int
    amount: int

    def as_dict(self) -> dict:
        return {"day": self.day, "member": self.member, "model": self.model, "currency": self.currency or None,
                "state": self.state, "tasks": self.tasks, "tokens": self.tokens,
                "amount": str(Decimal(self.amount) / MICROS)}


@dataclass(frozen=True)
class UpstreamSpend:
    upstream_key: str
    currency: str
    tasks: int
    tokens: int
    amount: int


def upstream_spend(conn: Connection, since: date | None = None) -> list[UpstreamSpend]:
    """A gateway operator's view: settled spend per upstream key (every project), per currency."""
    since_ts = calendar.timegm(since.timetuple()) if since else 0
    rows = conn.execute(
        select(ledger.c.upstream_key, ledger.c.currency, func.count(), func.sum(ledger.c.tokens),
               func.sum(ledger.c.amount))
        .where(ledger.c.state == "settled", ledger.c.upstream_key.is_not(None), ledger.c.created_at >= since_ts)
        .group_by(ledger.c.upstream_key, ledger.c.currency).order_by(ledger.c.upstream_key)).all()
    return [UpstreamSpend(r[0], r[1], int(r[2]), int(r[3] or 0), int(r[4] or 0)) for r in rows]


def spend(conn: Connection, project: str, since: date | None = None) -> list[SpendRow]:
    """Settled and reserved spend of a project, per day, member, model, currency and state."""
    since_ts = calendar.timegm(since.timetuple()) if since else 0
    day = ledger.c.created_at - ledger.c.created_at % 86400
    rows = conn.execute(
        select(day.label("day"), ledger.c.member, ledger.c.model, ledger.c.currency, ledger.c.state,
               func.count(), func.sum(ledger.c.tokens), func.sum(ledger.c.amount))
        .where(and_(ledger.c.project == project, ledger.c.state != "released", ledger.c.created_at >= since_ts))
        .group_by(day, ledger.c.member, ledger.c.model, ledger.c.currency, ledger.c.state)
        .order_by(day, ledger.c.member, ledger.c.model)).all()
    return [SpendRow(datetime.fromtimestamp(int(r[0]), UTC).strftime("%Y-%m-%d"), r[1], r[2], r[3], r[4],
                     int(r[5]), int(r[6] or 0), int(r[7] or 0)) for r in rows]
