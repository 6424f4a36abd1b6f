"""Prometheus metrics of one service process (`/metrics` of an API node, `dailies worker
--metrics-port`).

Two kinds, so that every figure is true however many processes run:
- What the database knows (queue depth by tier and status, running tasks, callback events by
  state) is read from the database at each scrape by `DatabaseCollector`: every process answers
  the same figure, so aggregate them with max(), not sum().
- What happened in this process (task outcomes it recorded, render seconds, callback deliveries,
  dependency errors, claims paused) are its own counters, histograms and gauges in a registry of
  its own (never the global one: tests run many services in one process). Prometheus scrapes every
  process, and sum() over them is the deployment's figure. A task outcome is counted once the
  transaction that records it has committed (`task_ended`).
- The standard figures of the process (`process_*`: CPU, memory, open files, start time;
  `python_gc_*`; `python_info`), on every registry, and on an API node the duration of each answered
  request by method, route template and status (`RequestDurations`, measured by app.py's request log).
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Mapping
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.gc_collector import GCCollector
from prometheus_client.platform_collector import PlatformCollector
from prometheus_client.process_collector import ProcessCollector
from prometheus_client.registry import Collector
from sqlalchemy import Connection, Engine, event, func, select

from dailies.service.billing.budgets import MICROS, month_of
from dailies.service.db.tables import DeliveryState, callback_events, ledger, tasks
from dailies.service.runtime.faults import Dependency, describe
from dailies.spec.statuses import TaskStatus

log = logging.getLogger("dailies.metrics")

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

# Renders of the preview renderer take a second or two; a forwarded task (a gateway) minutes.
RENDER_BUCKETS = (0.5, 1, 2, 5, 10, 30, 60, 120, 300, 600, 1800, float("inf"))
# An answer of the API: a get or a list in a few ms, a create in tens, a slow database or a create
# with media to fetch in seconds, a request waiting on a stopped dependency up to tens of seconds.
HTTP_BUCKETS = (0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, float("inf"))
# The route label of a request no route took (a 404 of an unknown path): paths are the client's to
# choose, and each one a label of its own would grow the series without bound.
UNMATCHED = "unmatched"
# Methods named as themselves; any other (a method is any token the client sends) is "other".
HTTP_METHODS = frozenset(("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"))


class DatabaseCollector(Collector):
    """Figures read from the database at scrape time. A database that does not answer gives
    `dailies_database_scrape_ok 0` and no figures from it, never a failed scrape."""

    def __init__(self, engine: Engine, clock: Callable[[], float] = time.time) -> None:
        self.engine = engine
        self.clock = clock

    def collect(self):
        ok = GaugeMetricFamily("dailies_database_scrape_ok",
                               "1 when this scrape could read the figures kept in the database")
        try:
            with self.engine.connect() as conn:
                active = conn.execute(
                    select(tasks.c.service_tier, tasks.c.status, func.count())
                    .where(tasks.c.status.in_((TaskStatus.QUEUED, TaskStatus.RUNNING)))
                    .group_by(tasks.c.service_tier, tasks.c.status)).all()
                events = conn.execute(select(callback_events.c.state, func.count())
                                      .group_by(callback_events.c.state)).all()
                spend = conn.execute(
                    select(ledger.c.currency, ledger.c.state, func.sum(ledger.c.amount))
                    .where(ledger.c.month == month_of(self.clock()), ledger.c.state.in_(("reserved", "settled")),
                           ledger.c.currency != "")
                    .group_by(ledger.c.currency, ledger.c.state)).all()
        except Exception as exc:
            log.warning("metrics: the database figures could not be read (%s)", describe(exc))
            ok.add_metric([], 0)
            yield ok
            return
        ok.add_metric([], 1)
        yield ok
        depth = GaugeMetricFamily("dailies_queue_depth", "Tasks waiting or running, by service tier and status "
                                  "(from the database: the same on every process)", labels=["tier", "status"])
        counts = {(tier, status): n for tier, status, n in active}
        for tier in ("default", "flex"):
            for status in (TaskStatus.QUEUED, TaskStatus.RUNNING):
                depth.add_metric([tier, str(status)], counts.get((tier, status), 0))
        yield depth
        running = GaugeMetricFamily("dailies_running_tasks", "Tasks running now, on any worker (from the database)")
        running.add_metric([], sum(n for (_, status), n in counts.items() if status == TaskStatus.RUNNING))
        yield running
        by_state = GaugeMetricFamily("dailies_callback_events", "Callback events by delivery state (from the "
                                     "database)", labels=["state"])
        states: dict[str, int] = {state: n for state, n in events}
        for state in DeliveryState:
            by_state.add_metric([state], states.get(state, 0))
        yield by_state
        money = GaugeMetricFamily("dailies_spend_this_month", "This UTC month's spend of every project, in its "
                                  "currency: settled (spent) and reserved (tasks not ended yet) (from the "
                                  "database)", labels=["currency", "state"])
        for currency, state, micros in spend:
            money.add_metric([currency, state], float(int(micros or 0) / MICROS))
        yield money


class Metrics:
    """The metrics of one `Services`."""

    def __init__(self, engine: Engine, clock: Callable[[], float] = time.time) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.task_outcomes = Counter("dailies_task_outcomes", "Tasks this process brought to an end, by status and "
                                     "error code ('' when none)", ["status", "code"], registry=r)
        self.render_seconds = Histogram("dailies_render_seconds", "Seconds from claim to stored result, per "
                                        "render of this process", buckets=RENDER_BUCKETS, registry=r)
        self.callback_deliveries = Counter("dailies_callback_deliveries", "Callback delivery attempts of this "
                                           "process, by outcome (delivered, retry, failed)", ["outcome"], registry=r)
        self.dependency_errors = Counter("dailies_dependency_errors", "Operations of this process that failed "
                                         "because the database or the storage did not answer", ["dependency"],
                                         registry=r)
        self.dependency_up = Gauge("dailies_dependency_up", "1 while this process finds the dependency up "
                                   "(its circuit breaker closed)", ["dependency"], registry=r)
        self.claims_paused = Gauge("dailies_claims_paused", "1 while this process's render slots do not claim "
                                   "because a dependency is down", registry=r)
        self.render_slots = Gauge("dailies_render_slots", "Render slots of this process", registry=r)
        self.results_waiting = Gauge("dailies_results_waiting_for_storage", "Rendered results of this process "
                                     "kept in scratch until the storage takes them", registry=r)
        self.upstream_calls = Counter("dailies_upstream_calls", "Calls of this process to the upstream (a "
                                      "gateway), by call and outcome (HTTP status, not_sent, unknown)",
                                      ["call", "outcome"], registry=r)
        self.upstream_seconds = Histogram("dailies_upstream_call_seconds", "Latency of calls to the upstream",
                                          ["call"], buckets=(0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, float("inf")),
                                          registry=r)
        self.error_answers = Counter("dailies_error_answers", "Error answers of this process, by HTTP status and "
                                     "code: budget refusals (403 AccountOverdueError.BudgetExceeded), rate limits "
                                     "(429 RateLimitExceeded.*), bad requests", ["status", "code"], registry=r)
        self.upstream_keys_set_aside = Gauge("dailies_upstream_keys_set_aside", "Upstream keys this process set "
                                             "aside after a 401/403", registry=r)
        self.live_followers_waiting = Gauge("dailies_live_followers_waiting", "Followers' players waiting on this "
                                            "process for a live session's next state (long polls)", registry=r)
        self.request_durations: RequestDurations | None = None  # an API node's (`serve_requests`)
        for dep in Dependency:
            self.dependency_up.labels(str(dep)).set(1)
            self.dependency_errors.labels(str(dep))  # present at 0 before the first error
        registry_collector = DatabaseCollector(engine, clock)
        r.register(registry_collector)
        add_standard_collectors(r)
        # The outcomes a transaction recorded wait on its connection (`task_ended`) under a key of
        # this Metrics; a new transaction on the connection starts without those of one that did
        # not commit.
        self._uncommitted = f"dailies.metrics.{id(self)}.outcomes"
        event.listen(engine, "begin", lambda conn: conn.info.pop(self._uncommitted, None))
        _after_each_commit(engine, self._count_committed)

    def serve_requests(self) -> RequestDurations:
        """The request-duration histogram of an API node (`create_app`), made on first call: a
        render worker, which answers no request, has none rather than an empty one."""
        if self.request_durations is None:
            self.request_durations = RequestDurations(self.registry)
        return self.request_durations

    def upstream_call(self, call: str, outcome: str, seconds: float) -> None:
        self.upstream_calls.labels(call, outcome).inc()
        self.upstream_seconds.labels(call).observe(seconds)

    def dependency_changed(self, dependency: Dependency, up: bool) -> None:
        self.dependency_up.labels(str(dependency)).set(1 if up else 0)

    def dependency_error(self, dependency: Dependency) -> None:
        self.dependency_errors.labels(str(dependency)).inc()

    def task_ended(self, conn: Connection, status: str, code: str | None) -> None:
        """A task ended in the transaction of `conn`: counted when that transaction commits, and
        only then. A change whose COMMIT is lost is written again (workers._persist) and would
        otherwise count twice; a change rolled back never happened."""
        conn.info.setdefault(self._uncommitted, []).append((status, code or ""))

    def _count_committed(self, info: dict) -> None:
        for status, code in info.pop(self._uncommitted, ()):
            self.task_outcomes.labels(status, code).inc()

    def exposition(self) -> bytes:
        return generate_latest(self.registry)

    def serve(self, port: int, host: str = "0.0.0.0"):
        """Expose these metrics on a port of their own (render workers have no HTTP server)."""
        from prometheus_client import start_http_server

        return start_http_server(port, addr=host, registry=self.registry)


def add_standard_collectors(registry: CollectorRegistry) -> None:
    """prometheus-client's process (`process_*`), garbage collector (`python_gc_*`) and platform
    (`python_info`) collectors, registered on `registry`. Their usual home is the global registry,
    which Dailies never exposes: each registry gets instances of its own."""
    ProcessCollector(registry=registry)
    GCCollector(registry=registry)
    PlatformCollector(registry=registry)


class RequestDurations:
    """`dailies_http_request_duration_seconds` by method, route template and status. The request log
    (app.py) calls `observe` once per answered request, errors included; the child of each label set
    is looked up once and kept (`Histogram.labels` checks and joins its labels on every call)."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.histogram = Histogram("dailies_http_request_duration_seconds", "Seconds from a request's arrival "
                                   "to the end of its answer on this API node, by method, route template "
                                   f"('{UNMATCHED}' when no route took the path) and status", ["method", "route",
                                   "status"], buckets=HTTP_BUCKETS, registry=registry)
        self._children: dict[tuple[str, str, int], Callable[[float], None]] = {}

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        key = (method if method in HTTP_METHODS else "other", route, status)
        observe = self._children.get(key)
        if observe is None:
            observe = self._children[key] = self.histogram.labels(key[0], route, str(status)).observe
        observe(seconds)


def route_template(scope: Mapping[str, Any]) -> str:
    """The path template of the route that took the request (`/api/v3/contents/generations/tasks/
    {task_id}`), set in the scope by Starlette's router, also for a 405 of a known path; else
    `UNMATCHED`."""
    route = scope.get("route")
    return getattr(route, "path_format", None) or UNMATCHED


def _after_each_commit(engine: Engine, action: Callable[[dict], None]) -> None:
    """Call `action(info)` with the connection's `info` after each COMMIT on `engine` that went
    through. SQLAlchemy Core has no event after a commit (its `commit` event comes before the
    COMMIT, which may still fail), so the dialect's own commit is wrapped; it serves every
    connection of the engine, the writer's included (db.writer shares the dialect)."""
    dialect = engine.dialect
    commit = dialect.do_commit

    def do_commit(dbapi_connection) -> None:
        commit(dbapi_connection)
        try:
            action(dbapi_connection.info)
        except Exception:  # a metric never fails a write that is already committed
            log.exception("counting what a committed transaction recorded failed")

    dialect.do_commit = do_commit  # type: ignore[method-assign]  # this engine's dialect instance, on purpose
