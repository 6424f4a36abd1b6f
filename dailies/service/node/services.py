"""`Services`: everything one service process owns (engine, store, storage, render slots, callback
delivery), built from its settings. The HTTP app (`create_app`) holds one; so does a render worker
without HTTP (`dailies worker`, worker_process.py).

Where keys and secrets come from depends on the database: on SQLite (one machine) the data
directory's keys file, as always; on PostgreSQL (a team) the database itself (shared_secrets.py),
because API nodes and workers on several machines share nothing else but the storage.
"""

from __future__ import annotations

import json
import logging
import threading
from functools import lru_cache, partial

from sqlalchemy import Connection, Row, text

from dailies.generator.protocol import Generator
from dailies.service.access import keys as key_store
from dailies.service.access import legacy_projects, shared_secrets
from dailies.service.billing import budgets
from dailies.service.callbacks.delivery import CallbackQueue
from dailies.service.callers import Caller
from dailies.service.db.engine import is_postgres, make_engine
from dailies.service.gateway import callbacks as upstream_callbacks
from dailies.service.gateway import pacing as upstream_pacing
from dailies.service.node.slots import WorkerPool
from dailies.service.runtime.breakers import Health
from dailies.service.runtime.faults import Dependency
from dailies.service.runtime.metrics import Metrics
from dailies.service.runtime.wakeups import TASKS_CHANNEL, Wakeups
from dailies.service.settings import Settings, key_options_from_environment, keys_from_environment
from dailies.service.storage.files import ResultFiles
from dailies.service.storage.opener import open_storage
from dailies.service.storage.signing import UrlSigner, load_or_create_secret
from dailies.service.tasks.actions import TaskService, upstream_may_bill
from dailies.service.tasks.records import build_record
from dailies.service.tasks.store import TaskStore
from dailies.spec.models import TaskRecord
from dailies.spec.prices import Cost, NoPrice, billed_model, cost, has_video_input, prices_from_env
from dailies.spec.statuses import TERMINAL, TaskStatus

log = logging.getLogger("dailies.service")


class Services:
    """Reachable from routes as `request.app.state.services`."""

    def __init__(self, settings: Settings, generator: Generator | None = None) -> None:
        self.settings = settings
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        self.engine = make_engine(settings.database)
        self.shared_database = is_postgres(self.engine)
        if self.shared_database:
            configured = settings.api_keys or keys_from_environment()
            options = settings.key_options if settings.api_keys else key_options_from_environment()
            self.api_keys = shared_secrets.DatabaseKeys(self.engine, configured, options)
            self.signer = UrlSigner(shared_secrets.url_signing_secret(self.engine))
        else:
            self.api_keys = _api_keys_after_renaming_legacy_projects(settings, self.engine)
            self._key_options = (settings.key_options if settings.api_keys else
                                 key_options_from_environment() if keys_from_environment() else
                                 key_store.load_key_options(settings.data_dir))
            self.signer = UrlSigner(load_or_create_secret(settings.data_dir))
        # The folder the /files route serves; empty (and so every /files URL a 404) when results
        # live in object storage, whose URLs never point at the service.
        self.files = ResultFiles(settings.files_dir)
        self.storage = open_storage(settings.storage, self.files, self.signer)
        if self.shared_database and not settings.storage:
            log.warning("the database is shared but results are files in %s: every API node and worker "
                        "must see that same folder (or use --storage s3://...)", settings.files_dir)
        self.metrics = Metrics(self.engine, settings.clock)
        self.metrics.render_slots.set(settings.workers)
        self.health = Health({Dependency.DATABASE: self._probe_database, Dependency.STORAGE: self.storage.probe},
                             on_change=self._dependency_changed, on_error=self.metrics.dependency_error)
        self.wakeups = Wakeups(self.engine, settings)
        self.callbacks = CallbackQueue(
            self.engine, settings,
            record_for=lambda row: build_record(row, self.storage, settings.public_url),
            secret_for=self.webhook_secret, wakeups=self.wakeups, metrics=self.metrics,
        )
        self.store = TaskStore(self.engine, on_change=self._task_changed)
        # Prices: the built-in table, or an operator's file over it (DAILIES_PRICES_FILE, docs/prices.md).
        self.prices = prices_from_env()
        self.generator = generator or _generator_for(settings, self.engine)
        if hasattr(self.generator, "observe"):
            self.generator.observe = self.metrics.upstream_call
            self.generator.admit = self._admit_upstream_create
            self.generator.answered = self._upstream_answered
            self.generator.orphaned = self._keep_orphan
            self._admitted = threading.local()
            self.metrics.upstream_keys_set_aside.set_function(lambda: len(self.generator.set_aside))
            self.wakeups.on_upstream = self.generator.wake
            if settings.upstream_callback_url:
                self.generator.callback_url_for = partial(
                    upstream_callbacks.callback_url, settings.upstream_callback_url, signer=self.signer)
        self.tasks = TaskService(settings, self.store, self.storage, self.prices,
                                 cancel_upstream=getattr(self.generator, "cancel_queued", None),
                                 billed_model=self._billed_model)
        self.workers = WorkerPool(settings, self.store, self.generator, self.storage, self.wakeups, self.health,
                                  self.metrics)
        self.tasks.health = self.health

    def _task_changed(self, conn: Connection, row: Row) -> None:
        """In the transaction of every status change: its callback event, and a wake-up of the
        render slots (of every process) when it put a task in the queue."""
        self.callbacks.enqueue(conn, row)
        if row.status == TaskStatus.QUEUED:
            self.wakeups.announce(conn, TASKS_CHANNEL)
        elif row.status in TERMINAL:
            self.metrics.task_ended(conn, row.status, row.error_code)  # once committed
            state = json.loads(row.generator_state) if row.generator_state else {}
            if row.status == TaskStatus.SUCCEEDED:
                budgets.settle(conn, row.id, self._actual_cost(row), self.settings.clock(), state.get("key"))
            elif state.get("upstream_succeeded"):
                # The upstream made (and billed) it, then its results could not be taken here: its
                # usage is not read again, so the estimate of what was asked is what it cost.
                budgets.settle_at_estimate(conn, row.id, self.settings.clock(), state.get("key"))
            elif row.status == TaskStatus.CANCELLED or not upstream_may_bill(state):
                budgets.release(conn, row.id, self.settings.clock())
            # Else the upstream may bill it: held until it says (WorkerPool._settle_upstream_holds).

    def _actual_cost(self, row: Row) -> Cost | NoPrice:
        """What a succeeded task cost: its record's usage at the model's price (with or without a
        video input, which the stored request says)."""
        try:
            record = TaskRecord.model_validate(build_record(row, self.storage, self.settings.public_url))
            request = json.loads(row.request)
            video_input = has_video_input(request.get("content"))
            return cost(record, prices=self.prices, model=self._billed_model(row.model), video_input=video_input)
        except Exception as exc:  # the success is recorded whatever the price; the ledger says why not priced
            log.warning("the cost of %s could not be computed: %s", row.id, exc)
            return NoPrice(row.model, f"the cost could not be computed: {type(exc).__name__}")

    def _billed_model(self, model_id: str) -> str:
        """The id a task of this model is billed as: on a gateway, the upstream region's (a member's
        Volcengine id runs on BytePlus as its BytePlus id, billed in USD, not at the CNY price)."""
        return billed_model(model_id, getattr(self.generator, "region", None))

    def _admit_upstream_create(self, key_name: str, model: str) -> float:
        """One upstream create of this key and model counted against `upstream_rpm` in any
        `upstream_rpm_window` (sliding, in the database, so every worker shares it): 0 to go, else
        the seconds to wait."""
        now = self.settings.clock()
        with self.store.write.begin() as conn:
            wait = upstream_pacing.admit(conn, key_name, model, self.settings.upstream_rpm,
                                         self.settings.upstream_rpm_window, now)
        if wait == 0:
            self._admitted.at = now  # this render thread's create: `_upstream_answered` moves it
        return wait

    def _upstream_answered(self, key_name: str, model: str) -> None:
        """The upstream answered the create this thread was admitted for: it counts from now."""
        admitted_at = getattr(self._admitted, "at", None)
        if admitted_at is None:
            return
        self._admitted.at = None
        try:
            with self.store.write.begin() as conn:
                upstream_pacing.answered(conn, key_name, model, admitted_at, self.settings.clock())
        except Exception as exc:  # the create went; its row keeps the earlier time
            log.warning("recording when the upstream answered a create failed: %s", exc)

    def _keep_orphan(self, task_id: str, state: dict) -> None:
        """An upstream task created for a task that ended here meanwhile: its id is kept with the
        task, so the sweep cancels it there or counts what it costs (it would run unowned)."""
        log.warning("task %s ended here while its upstream create was answered (%s): kept to cancel or count",
                    task_id, state.get("upstream_id"))
        try:
            self.store.keep_ended_upstream_state(task_id, json.dumps(state))
        except Exception:  # the reservation stays held; the sweep counts it at its estimate
            log.exception("keeping the upstream task of %s failed", task_id)

    def _probe_database(self) -> None:
        with self.engine.connect() as conn:
            conn.execute(text("SELECT 1"))

    def _dependency_changed(self, dependency: Dependency, up: bool) -> None:
        self.metrics.dependency_changed(dependency, up)
        self.metrics.claims_paused.set(0 if self.health.all_up or not self.settings.workers else 1)

    def caller(self, key: str) -> Caller | None:
        """The project, member name and limits of a key; None for a key that is not valid."""
        project = self.api_keys.get(key)
        if project is None:
            return None
        options = self.api_keys.options(key) if self.shared_database else self._key_options.get(key)
        return Caller.of(key, project, options)

    @lru_cache(maxsize=256)  # noqa: B019 - one Services per app; the cache dies with it
    def webhook_secret(self, project: str) -> str:
        if self.shared_database:
            return shared_secrets.webhook_secret(self.engine, project)
        return key_store.webhook_secret(self.settings.data_dir, project)

    def info(self) -> dict:
        """What `/dailies/v1/service` answers: local preview or gateway, and the upstream's health."""
        gateway = getattr(self.generator, "info", None)
        return {"mode": "gateway" if gateway else "preview",
                "upstream": {**gateway(), "concurrency": self.settings.upstream_concurrency} if gateway else None}

    def describe(self) -> str:
        """Where this process works, for its first log line (without the database password)."""
        database = self.engine.url.render_as_string(hide_password=True)
        storage = self.settings.storage or f"{self.settings.files_dir} (a local folder)"
        return f"database {database}, results in {storage}"

    def start(self, deliver_callbacks: bool = True) -> None:
        log.info("starting %d render slot(s)%s; %s", self.settings.workers,
                 ", callback delivery" if deliver_callbacks else "", self.describe())
        self.health.start()
        self.wakeups.start()
        self.workers.start()
        if deliver_callbacks:
            self.callbacks.start()

    def stop(self, grace: float = 0.0) -> None:
        """Stops whatever was started (and nothing else); safe to call more than once. Running
        renders get `grace` seconds to finish; those still running then go back to the queue."""
        self.workers.stop(grace)
        self.callbacks.stop()
        self.wakeups.stop()
        self.health.stop()
        self.engine.dispose()


def _api_keys_after_renaming_legacy_projects(settings: Settings, engine) -> dict[str, str]:
    """key -> project, from the settings, DAILIES_API_KEYS or the keys file, once the project names
    earlier versions made from parts of keys have been renamed (legacy_projects.py says how)."""
    file_renames = legacy_projects.keys_file_renames(key_store.stored_entries(settings.data_dir))
    key_store.rename_projects(settings.data_dir, file_renames)
    api_keys = settings.api_keys or keys_from_environment() or key_store.load_keys(settings.data_dir)
    renames = {**legacy_projects.bare_key_renames(legacy_projects.stored_projects(engine), api_keys),
               **file_renames}
    key_store.rename_projects(settings.data_dir, renames)
    legacy_projects.rename_projects(engine, renames)
    return api_keys


def _generator_for(settings: Settings, engine) -> Generator:
    """The preview renderer, or with an upstream URL the forwarding generator (a gateway), with the
    upstream keys of the environment first, then those stored in the database by priority."""
    if settings.upstream_url:
        from dailies.service.gateway import keys as upstream_keys
        from dailies.service.gateway.forwarding import UpstreamGenerator, UpstreamKey

        given = list(settings.upstream_keys)
        names = {k.name for k in given}
        stored = [UpstreamKey(name, key) for name, key in upstream_keys.load(engine) if name not in names]
        poll = {}
        if settings.upstream_poll:
            poll = dict(zip(("poll_first", "poll_max"), settings.upstream_poll, strict=True))
        generator = UpstreamGenerator(settings.upstream_url, given + stored, timeout=settings.upstream_timeout, **poll)
        generator.on_set_aside = lambda name, why: upstream_keys.mark_set_aside(engine, name, why)
        return generator
    from dailies.generator import PreviewGenerator

    return PreviewGenerator()
