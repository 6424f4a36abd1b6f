"""The storage backends the service tests run against, as one fixture parameter.

`backend` is "sqlite" (SQLite in the test's data directory + result files in a local folder: the
embedded default) or "pg+s3" (a fresh database on a throwaway PostgreSQL cluster + a fresh prefix
in a SeaweedFS bucket: a team deployment). The servers start once per test session, and only when a
test asks for that backend. Where they cannot start (not installed), the pg+s3 tests skip with the
reason locally and fail under CI: CI never passes without them.
"""

from __future__ import annotations

import itertools
import os
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from sqlalchemy import create_engine, select

from tests.support.servers import PostgresServer, SeaweedServer, ServerUnavailable

BACKENDS = ["sqlite", "pg+s3"]
TEST_BUCKET = "dailies-tests"
_names = itertools.count(1)


def running_in_ci() -> bool:
    return os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")


def unavailable(reason: str):
    if running_in_ci():
        pytest.fail(f"{reason} (CI is set: the PostgreSQL + S3 backend must run there)", pytrace=False)
    pytest.skip(reason)


@dataclass
class Backend:
    name: str
    database_url: str | None = None
    storage: str | None = None
    aws_environment: dict[str, str] = field(default_factory=dict)
    s3: SeaweedServer | None = None

    @property
    def team(self) -> bool:
        return self.database_url is not None

    def settings(self) -> dict:
        """Settings fields that put a service on this backend."""
        return {"database_url": self.database_url, "storage": self.storage}

    def environment(self) -> dict[str, str]:
        """Environment of a `dailies serve` / `dailies worker` subprocess on this backend."""
        env = dict(self.aws_environment)
        if self.database_url:
            env["DAILIES_DATABASE_URL"] = self.database_url
        if self.storage:
            env["DAILIES_STORAGE"] = self.storage
        return env

    def database(self, data_dir: Path) -> str:
        return self.database_url.replace("postgresql://", "postgresql+psycopg://") if self.database_url \
            else f"sqlite:///{data_dir / 'dailies.sqlite3'}"

    def task_states(self, data_dir: Path) -> dict[str, tuple[str, int]]:
        """task id -> (status, attempts), read straight from the database."""
        from dailies.service.db.tables import tasks

        engine = create_engine(self.database(data_dir))
        try:
            with engine.connect() as conn:
                return {row.id: (row.status, row.attempts)
                        for row in conn.execute(select(tasks.c.id, tasks.c.status, tasks.c.attempts))}
        finally:
            engine.dispose()

    def webhook_secret(self, data_dir: Path, project: str) -> str:
        """The project's callback signing secret where this backend keeps it (made on first use),
        as `dailies keys` shows it."""
        if not self.team:
            from dailies.service.access.keys import webhook_secret

            return webhook_secret(data_dir, project)
        from dailies.service.access.shared_secrets import webhook_secret
        from dailies.service.db.engine import make_engine

        engine = make_engine(self.database_url)
        try:
            return webhook_secret(engine, project)
        finally:
            engine.dispose()

    def cli_arguments(self) -> list[str]:
        """What `dailies keys` needs to find this backend's keys and secrets, besides --data-dir."""
        return ["--database-url", self.database_url] if self.team else []

    def stored_names(self, data_dir: Path, task_id: str) -> set[str]:
        """The result files stored for a task."""
        if self.s3 is None:
            folder = data_dir / "files" / task_id
            return {p.name for p in folder.iterdir()} if folder.is_dir() else set()
        prefix = self.storage.removeprefix(f"s3://{TEST_BUCKET}/") + f"{task_id}/"
        return {key.rsplit("/", 1)[1] for key in self.s3.keys(TEST_BUCKET, prefix)}


@contextmanager
def started_postgres() -> Iterator[PostgresServer]:
    """A throwaway PostgreSQL cluster for as long as the block runs (skipped, or failed under CI,
    where it cannot start)."""
    try:
        server = PostgresServer().start()
    except ServerUnavailable as exc:
        unavailable(str(exc))
    try:
        yield server
    finally:
        server.stop()


@contextmanager
def started_s3(bucket: str) -> Iterator[SeaweedServer]:
    """A SeaweedFS S3 server with `bucket`, for as long as the block runs."""
    try:
        server = SeaweedServer().start()
    except ServerUnavailable as exc:
        unavailable(str(exc))
    try:
        server.create_bucket(bucket)
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def postgres_server():
    with started_postgres() as server:
        yield server


@pytest.fixture(scope="session")
def s3_server():
    with started_s3(TEST_BUCKET) as server:
        yield server


# Fixtures whose in-process service starts on a database already at the head revision (they test
# what the service does, not how it migrates): their PostgreSQL database is this process's one head
# database, emptied for each test, instead of a new one migrated each time (~0.4 s a test on 2 cores).
AT_HEAD_FIXTURES = {"env", "open_env", "rendering_env"}
_head_databases: dict[int, str] = {}  # PostgreSQL server (by id) -> this process's head database


def _emptied_head_database(postgres: PostgresServer) -> str:
    """This process's head database on `postgres`, migrated once, every row of the last test gone."""
    from dailies.service.db.engine import make_engine

    name = _head_databases.get(id(postgres))
    if name is None:
        name = _head_databases[id(postgres)] = f"dailies_head_{os.getpid()}"
        make_engine(postgres.create_database(name)).dispose()
        return name
    postgres.empty_database(name, keep={"dailies_service_version", "journal_version"})
    return name


@contextmanager
def open_backend(request: pytest.FixtureRequest, kind: str, at_head: bool = False) -> Iterator[Backend]:
    """A backend of `kind` for one test (or one module): a new database and key prefix each time
    (`at_head`: the emptied head database and a new prefix), with the AWS settings in this process's
    environment while it is open."""
    if kind == "sqlite":
        yield Backend("sqlite")
        return
    postgres = request.getfixturevalue("postgres_server")
    s3 = request.getfixturevalue("s3_server")
    name = f"dailies_{os.getpid()}_{next(_names)}"
    database = _emptied_head_database(postgres) if at_head else name
    url = postgres.url(database) if at_head else postgres.create_database(name)
    backend = Backend(kind, url, f"s3://{TEST_BUCKET}/{name}/", s3.aws_environment(), s3)
    with pytest.MonkeyPatch.context() as patch:
        for key, value in backend.aws_environment.items():
            patch.setenv(key, value)
        try:
            yield backend
        finally:
            if not at_head:
                postgres.drop_database(name)


@pytest.fixture(params=BACKENDS)
def backend(request) -> Iterator[Backend]:
    with open_backend(request, request.param, at_head=bool(AT_HEAD_FIXTURES & set(request.fixturenames))) as opened:
        yield opened


@pytest.fixture(scope="module", params=BACKENDS)
def module_backend(request) -> Iterator[Backend]:
    """`backend` for module-scoped fixtures (a server shared by a module's tests)."""
    with open_backend(request, request.param) as opened:
        yield opened



# The longest work units, longest first (a full run's --durations on 2 cores, 2026-11-28), handed out
# first under xdist so that none is left to run at the end while the other worker idles: the browser's,
# the multi-process fault tests, then every module above ~15 s; the rest follow in file order.
LONGEST_FIRST = ["tests/browser", "tests/team/test_faults.py", "tests/service/api/test_sdk_and_processes.py",
                 "tests/dashboard/test_compose.py", "tests/team/test_cluster.py",
                 "tests/service/gateway/test_gateway.py", "tests/service/runtime/test_faults.py",
                 "tests/cli/test_cli.py", "tests/service/gateway/test_gateway_upstream_answers.py",
                 "tests/dashboard/test_tasks_page.py", "tests/service/callbacks/test_delivery.py",
                 "tests/dashboard/test_review_page.py", "tests/team/test_frozen_database.py",
                 "tests/install/test_core_install.py", "tests/service/callbacks/test_ssrf.py",
                 "tests/service/gateway/test_gateway_limits.py", "tests/service/gateway/test_gateway_scenarios.py",
                 "tests/service/tasks/test_lifecycle.py", "tests/dashboard/test_tasks_actions.py",
                 "tests/dashboard/test_review_report.py", "tests/cli/test_log_format.py",
                 "tests/service/api/test_fuzz_openapi.py", "tests/cli/test_serve_options.py",
                 "tests/cli/test_dashboard_stops.py"]


def work_unit(nodeid: str) -> str:
    """What one xdist worker runs as one unit, in order: a test module, so its module fixtures (a
    product, a gateway and its upstream, a cluster) start once; or every browser test, because the
    package's Playwright fixtures must be closed before the worker's asyncio tests run
    (tests/browser/conftest.py) and two `dailies up` with Chromium at once would overload 2 cores."""
    path = nodeid.split("::", 1)[0]
    return "tests/browser" if path.startswith("tests/browser/") else path


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    """`--dist loadscope` (pyproject.toml) with work_unit's units. Not xdist's own loadgroup: it
    groups by appending to the test ids, which pytest 9.2's structured ids no longer allow, so its
    groups silently do nothing."""
    if config.getoption("dist") != "loadscope":
        return None
    from xdist.scheduler import LoadScopeScheduling

    class WorkUnitScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return work_unit(nodeid)

    return WorkUnitScheduling(config, log)


def _set_nodeid(item: pytest.Item, nodeid: str) -> None:
    if hasattr(item, "_id"):  # pytest >= 9.2 keeps a structured id
        from _pytest.nodeid import NodeId

        item._id = NodeId.parse(nodeid)
    else:
        item._nodeid = nodeid


def pytest_collection_modifyitems(config, items):
    # pytest-xdist hands out tests by id, so tests sharing one would run once, the others silently
    # never: schemathesis's items (tests/service/api/test_fuzz_openapi.py, one per API operation) all
    # carry their function's id under pytest 9.2; each is given the id pytest gives a parametrized
    # test, its name.
    ids = Counter(item.nodeid for item in items)
    for item in items:
        if ids[item.nodeid] > 1 and item.name != item.nodeid.rsplit("::", 1)[-1]:
            _set_nodeid(item, f"{item.parent.nodeid}::{item.name}")
    repeated = [nodeid for nodeid, n in Counter(item.nodeid for item in items).items() if n > 1]
    if repeated:
        raise pytest.UsageError(f"tests sharing an id would run only once under xdist: {repeated}")
    if os.environ.get("PYTEST_XDIST_WORKER"):  # every worker sorts alike: their collections must match
        rank = {unit: n for n, unit in enumerate(LONGEST_FIRST)}
        items.sort(key=lambda item: rank.get(work_unit(item.nodeid), len(rank)))
