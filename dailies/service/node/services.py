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
from functools import lru_cache

from sqlalchemy import Connection, text

from dailies.generator.protocol import Generator
from dailies.service.access import keys as key_store
from dailies.service.access import legacy_projects, shared_secrets
from dailies.service.billing import budgets
from dailies.service.callbacks.delivery import CallbackQueue
from dailies.service.callbacks.notifications import Notifications
from dailies.service.callers import Caller
from dailies.service.db.engine import is_postgres, make_engine
from dailies.service.gateway.checkpoint import UpstreamCheckpoint
from dailies.service.gateway.wiring import Gateway, GatewayFactory, build_gateway
from dailies.service.node.slots import WorkerPool
from dailies.service.runtime.breakers import Health
from dailies.service.runtime.faults import Dependency
from dailies.service.runtime.metrics import Metrics
from dailies.service.runtime.wakeups import TASKS_CHANNEL, Wakeups
from dailies.service.sessions.live import LiveSessions
from dailies.service.settings import Settings, key_options_from_environment, keys_from_environment
from dailies.service.storage.files import ResultFiles
from dailies.service.storage.opener import open_storage
from dailies.service.storage.signing import UrlSigner, load_or_create_secret
from dailies.service.tasks.actions import TaskService
from dailies.service.tasks.records import build_record
from dailies.service.tasks.rows import TaskRow
from dailies.service.tasks.store import TaskStore
from dailies.spec.models import TaskRecord
from dailies.spec.prices import Cost, NoPrice, billed_model, cost, has_video_input, prices_from_env
from dailies.spec.statuses import TERMINAL, TaskStatus

log = logging.getLogger("dailies.service")


class Services:
    """Reachable from routes as `request.app.state.services`."""

    def __init__(self, settings: Settings, generator: Generator | None = None,
                 gateway: GatewayFactory | None = None) -> None:
        """`generator`: another renderer than the preview's. Without one, `settings.upstream_url` makes
        the service a gateway, whose forwarding generator is made here with this service's hooks
        (`gateway`: made by that factory instead, as tests give their own transport and clocks)."""
        self.settings = settings
        settings.data_dir.mkdir(parents=True, exist_ok=True)
        self.engine = make_engine(settings.database)
        self.shared_database = is_postgres(self.engine)
        # key -> project: the team database's table (refreshed), or the keys known at start.
        self.api_keys: shared_secrets.DatabaseKeys | key_store.FileKeys
        if self.shared_database:
            configured = settings.api_keys or keys_from_environment()
            options = settings.key_options if settings.api_keys else key_options_from_environment()
            self.api_keys = shared_secrets.DatabaseKeys(self.engine, configured, options)
            self.signer = UrlSigner(shared_secrets.url_signing_secret(self.engine))
        else:
            configured = settings.api_keys or keys_from_environment()
            _rename_legacy_projects(settings, self.engine, configured)
            self.api_keys = key_store.FileKeys(
                settings.data_dir, configured,
                settings.key_options if settings.api_keys else key_options_from_environment())
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
        self.store = TaskStore(self.engine, on_change=self._task_changed)
        # Prices: the built-in table, or an operator's file over it (DAILIES_PRICES_FILE, docs/prices.md).
        self.prices = prices_from_env()
        self.gateway: Gateway | None = None
        if gateway is not None or (generator is None and settings.upstream_url):
            self.gateway = build_gateway(settings, self.engine, self.store, self.metrics, self.signer, gateway)
        self.generator: Generator = self.gateway.generator if self.gateway else generator or _preview()
        self.wakeups = Wakeups(self.engine, settings,
                               on_upstream=self.gateway.generator.wake if self.gateway else None)
        self.callbacks = CallbackQueue(
            self.engine, settings,
            record_for=lambda row: build_record(row, self.storage, settings.public_url),
            secret_for=self.webhook_secret, wakeups=self.wakeups, metrics=self.metrics,
        )
        self.live = LiveSessions(self.engine, settings.clock)
        self.notifications = Notifications(self.engine, settings, self.wakeups, members=self.api_keys.members)
        self.tasks = TaskService(settings, self.store, self.storage, self.prices,
                                 forwarding=self.gateway.tasks if self.gateway else None,
                                 billed_model=self._billed_model)
        self.workers = WorkerPool(settings, self.store, self.generator, self.storage, self.wakeups, self.health,
                                  self.metrics, gateway=self.gateway.generator if self.gateway else None)
        self.tasks.health = self.health

    def _task_changed(self, conn: Connection, row: TaskRow) -> None:
        """In the transaction of every status change: its callback event, and a wake-up of the
        render slots (of every process) when it put a task in the queue."""
        self.callbacks.enqueue(conn, row)
        if row.status == TaskStatus.QUEUED:
            self.wakeups.announce(conn, TASKS_CHANNEL)
        elif row.status in TERMINAL:
            self.metrics.task_ended(conn, row.status, row.error_code)  # once committed
            # What the upstream may bill (a gateway's checkpoint says; none without one): the ledger decides.
            state = UpstreamCheckpoint.from_json(row.generator_state)
            budgets.on_status_change(conn, row.id, row.status, self.settings.clock(),
                                     actual=lambda: self._actual_cost(row), bill=state.bill,
                                     upstream_key=state.key)
        self.notifications.task_changed(conn, row)  # after the ledger moved: budgets are read as they are now

    def _actual_cost(self, row: TaskRow) -> Cost | NoPrice:
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
        return billed_model(model_id, self.gateway.generator.region if self.gateway else None)

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
        return Caller.of(key, project, self.api_keys.options(key))

    @lru_cache(maxsize=256)  # noqa: B019 - one Services per app; the cache dies with it
    def webhook_secret(self, project: str) -> str:
        if self.shared_database:
            return shared_secrets.webhook_secret(self.engine, project)
        return key_store.webhook_secret(self.settings.data_dir, project)

    def info(self) -> dict:
        """What `/dailies/v1/service` answers: local preview or gateway, and the upstream's health."""
        if self.gateway is None:
            return {"mode": "preview", "upstream": None}
        return {"mode": "gateway",
                "upstream": {**self.gateway.generator.info(), "concurrency": self.settings.upstream_concurrency}}

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


def _rename_legacy_projects(settings: Settings, engine, configured: dict[str, str]) -> None:
    """Rename the project names earlier versions made from parts of keys (legacy_projects.py says
    how), for the keys given (`configured`) or else the keys file's."""
    file_renames = legacy_projects.keys_file_renames(key_store.stored_entries(settings.data_dir))
    key_store.rename_projects(settings.data_dir, file_renames)
    api_keys = configured or key_store.load_keys(settings.data_dir)
    renames = {**legacy_projects.bare_key_renames(legacy_projects.stored_projects(engine), api_keys),
               **file_renames}
    key_store.rename_projects(settings.data_dir, renames)
    legacy_projects.rename_projects(engine, renames)


def _preview() -> Generator:
    from dailies.generator import PreviewGenerator  # PyAV and Pillow: loaded only by a service that renders

    return PreviewGenerator()
