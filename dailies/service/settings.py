"""Settings of one service instance. Built by the CLI (or a test), passed to `create_app`;
nothing is read from the environment at import time."""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from dailies.service.callers import NO_OPTIONS, KeyOptions, parse_options

from ..api_keys import mask, project_for_bare_key
from ..spec.catalog import MODELS

# Endpoint ids that every local project may use, one per catalog model, so that requests written
# for the real service with an `ep-...` id have something to point at.
DEFAULT_ENDPOINTS: dict[str, str] = {
    f"ep-local-{m.id.removeprefix('doubao-')}": m.id for m in MODELS
}


# The longest upstream pacing window; the housekeeper keeps this much of upstream creates (gateway/pacing.py).
UPSTREAM_RPM_WINDOW_MAX = 3600.0


@dataclass
class Settings:
    data_dir: Path
    # key -> project name. Empty means: read keys from DAILIES_API_KEYS or the keys file (or, with
    # PostgreSQL, the keys table that `dailies keys create --database-url` fills).
    api_keys: dict[str, str] = field(default_factory=dict)
    # key -> member name and limits (members.py); empty means: from DAILIES_API_KEYS, the keys file
    # or the keys table, wherever the key itself was found.
    key_options: dict[str, KeyOptions] = field(default_factory=dict)
    # None: SQLite in the data directory. `postgresql://...` for a team (several API nodes and
    # workers on one database); see README, "Team deployment".
    database_url: str | None = None
    # None: result files in the data directory. `s3://bucket/prefix` for S3-compatible storage,
    # configured by the standard AWS settings (AWS_ENDPOINT_URL, AWS_ACCESS_KEY_ID, ...).
    storage: str | None = None
    workers: int = 1
    # Where result URLs point when there is no request to take the host from (callbacks).
    public_url: str = "http://127.0.0.1:8000"
    endpoints: dict[str, str] = field(default_factory=lambda: dict(DEFAULT_ENDPOINTS))
    # Refused by default: a callback to loopback lets any member probe the node's own ports. Only the
    # one-machine default (`dailies up`) allows it, or an operator's `--allow-loopback-callbacks`.
    allow_loopback_callbacks: bool = False
    allow_private_callbacks: bool = False
    allow_loopback_inputs: bool = False
    # Seconds between heartbeats of a running render; a task whose heartbeat is older than
    # `stale_after` belongs to a dead worker and is put back in the queue.
    heartbeat_interval: float = 1.0
    stale_after: float = 15.0
    # How often the housekeeper looks for expired tasks and purges old records.
    sweep_interval: float = 5.0
    # How often an idle render slot or callback deliverer looks for work. With PostgreSQL they are
    # woken by LISTEN/NOTIFY instead and only look every `notified_poll_interval`, a safety net
    # for a notification lost while the listening connection was down.
    poll_interval: float = 0.2
    notified_poll_interval: float = 5.0
    # Callback retry delays for succeeded/failed (seconds before retry 1, 2, 3).
    callback_retry_delays: tuple[float, ...] = (2.0, 10.0, 40.0)
    callback_timeout: float = 10.0
    clock: Callable[[], float] = time.time
    # Notifications out (callbacks/notifications.py). E-mail goes through this server:
    # `smtp://user:password@host:587` (STARTTLS, required) or `smtps://...:465` (TLS from the start);
    # None: e-mail targets are refused. `smtp_ca_file`: a CA the server's certificate is checked with.
    smtp_url: str | None = None
    smtp_from: str = "Dailies <dailies@localhost>"
    smtp_ca_file: str | None = None
    # Seconds a notification waits before it is sent, gathering what happens meanwhile into one message.
    notification_window: float = 30.0
    # The dashboard's address, for links in notifications; None: messages carry no link.
    dashboard_url: str | None = None
    log_requests: bool = True
    # A gateway (dailies/service/gateway/forwarding.py): renders are forwarded to this `/api/v3` base with
    # the team's upstream keys (name, key) in order of priority; at most `upstream_concurrency`
    # tasks per model and key run there at once, the rest wait in our queue.
    upstream_url: str | None = None
    upstream_keys: list = field(default_factory=list)
    upstream_concurrency: int = 10
    # Creates per minute per upstream key and model (Ark publishes 600 for Seedance), shared by every worker.
    upstream_rpm: int = 600
    # The minute `upstream_rpm` counts in, in seconds: any window this long (sliding, not calendar
    # minutes) holds at most `upstream_rpm` creates, each counted from the upstream's answer
    # (upstream_pacing.py). No command-line flag; tests shorten it.
    upstream_rpm_window: float = 60.0
    # Seconds an upstream call may take; a create whose answer does not come within it is never resent.
    upstream_timeout: float = 30.0
    # Where the upstream calls the gateway back when a forwarded task changes (a signal before the
    # next poll): the public address, when one was given (`--public-url`, DAILIES_PUBLIC_URL) that the
    # provider can reach. None: polling only.
    upstream_callback_url: str | None = None
    # Seconds before the first look at a task running upstream, and the longest between two looks
    # (the interval grows by half at each look); None: the generator's defaults (1 s, 15 s).
    upstream_poll: tuple[float, float] | None = None

    def __post_init__(self) -> None:
        if not self.callback_retry_delays or any(d < 0 for d in self.callback_retry_delays):
            raise ValueError("callback_retry_delays needs at least one delay, none negative")
        if self.workers < 0:
            raise ValueError("workers must be 0 or more")
        if not 0 < self.upstream_rpm_window <= UPSTREAM_RPM_WINDOW_MAX:
            raise ValueError(f"upstream_rpm_window must be more than 0 and at most {UPSTREAM_RPM_WINDOW_MAX:g} s")

    @property
    def database(self) -> Path | str:
        """What `db.make_engine` opens: the SQLite file, or the configured database URL."""
        return self.database_url or self.db_path

    @property
    def db_path(self) -> Path:
        return self.data_dir / "dailies.sqlite3"

    @property
    def files_dir(self) -> Path:
        return self.data_dir / "files"

    @property
    def assets_dir(self) -> Path:
        return self.data_dir / "assets"

    @property
    def scratch_dir(self) -> Path:
        """Where renders are written before they are stored (local to this machine)."""
        return self.files_dir / ".work"


def parse_api_keys(text: str) -> dict[str, str]:
    """`DAILIES_API_KEYS`: comma-separated; `project:key` puts a key in a named project, a bare
    key is a project of its own, named after a hash of the whole key (keys sharing a prefix stay
    apart, and no part of a key ends up in a name). Options after the key (`;name=...;rpm=N`,
    members.py) are read by `parse_key_options`."""
    return {key: project for key, (project, _) in _key_entries(text).items()}


def parse_key_options(text: str) -> dict[str, KeyOptions]:
    """The member name and limits given with each key of `DAILIES_API_KEYS`."""
    return {key: options for key, (_, options) in _key_entries(text).items() if options != NO_OPTIONS}


def _key_entries(text: str) -> dict[str, tuple[str, KeyOptions]]:
    keys: dict[str, tuple[str, KeyOptions]] = {}
    for part in text.split(","):
        part = part.strip()
        if not part:
            continue
        entry, _, options_text = part.partition(";")
        project, sep, key = entry.partition(":")
        if not sep:
            project, key = project_for_bare_key(entry.strip()), entry
        project, key = project.strip(), key.strip()
        if not project or not key:
            raise ValueError("DAILIES_API_KEYS: each entry is 'key' or 'project:key', neither part empty")
        if keys.get(key, (project,))[0] != project:
            raise ValueError(f"DAILIES_API_KEYS: the key {mask(key)} is given for two projects")
        keys[key] = (project, parse_options(options_text, f"DAILIES_API_KEYS, key {mask(key)}"))
    return keys


def keys_from_environment() -> dict[str, str]:
    return parse_api_keys(_api_keys_variable())


def key_options_from_environment() -> dict[str, KeyOptions]:
    return parse_key_options(_api_keys_variable())


def _api_keys_variable() -> str:
    from ..config import current

    return current().dailies_api_keys.get_secret_value()
