"""Keys and secrets kept in the database, for a team deployment (PostgreSQL), where the API nodes
and workers share nothing but the database and the storage.

- API keys: those of `DAILIES_API_KEYS` (the same on every node, from the operator's secret
  store) plus those made by `dailies keys create --database-url ...`, of which the `api_keys` table
  keeps only a SHA-256 (a copy of the database hands out no working key). A key made on one
  machine works on every API node within a second, without a restart. A key this node does not
  know is looked up in a thread of its own, waited for at most `LOOKUP_TIMEOUT`; when the table
  cannot be read, such keys get `KeysUnavailable` (a 503, routes.py) without asking again for
  `RETRY_AFTER_FAILURE_SECONDS`, so a database that does not answer costs neither a request's
  thread for long nor a query per wrong key.
- Webhook signing secrets, one per project (`project_secrets`), and the result-URL signing secret
  (`service_secrets`, used when results are served by the service itself): made by whichever
  process needs one first; `INSERT ... ON CONFLICT DO NOTHING` then a read makes every process
  agree on the one that was stored.

The embedded default (SQLite) keeps all of this in the data directory's keys file, as before.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
import threading
import time
from dataclasses import dataclass

from sqlalchemy import Engine, select
from sqlalchemy.dialects.postgresql import insert as pg_insert

from dailies.api_keys import fingerprint, mask
from dailies.service.access.keys import new_key, new_webhook_secret
from dailies.service.callers import NO_OPTIONS, KeyOptions, options_from_entry
from dailies.service.db.tables import api_keys, project_secrets, service_secrets
from dailies.service.runtime.breakers import OneAtATime
from dailies.service.runtime.faults import describe

URL_SIGNING = "url-signing"
# A key not known to this node is looked up again at most this often (a key just made elsewhere
# starts working within this time; a flood of wrong keys costs one query per interval).
REFRESH_SECONDS = 1.0
# How long a request waits for the key table before it is answered 503: a database that does not
# answer (host frozen, network cut without a reset) would otherwise hold it until TCP gives up. Past
# the database's connect_timeout (5 s, db.py), so a connection that fails says so itself.
LOOKUP_TIMEOUT = 6.0
# After a lookup failed, unknown keys are answered 503 at once for this long, without asking again:
# a flood of requests with wrong keys during an outage costs nothing and waits for nothing.
RETRY_AFTER_FAILURE_SECONDS = 5.0

log = logging.getLogger("dailies.service")


class KeysUnavailable(Exception):
    """The key table could not be read: whether a key this node does not know is valid is unknown."""


def key_sha256(key: str) -> str:
    return hashlib.sha256(key.encode("utf-8")).hexdigest()


def _stored_once(engine: Engine, table, key_column, key: str, value_column, make) -> str:
    """The value stored under `key`, made with `make()` by whichever process asks first."""
    with engine.begin() as conn:
        conn.execute(pg_insert(table).values({key_column.name: key, value_column.name: make()})
                     .on_conflict_do_nothing(index_elements=[key_column]))
        return conn.execute(select(value_column).where(key_column == key)).scalar_one()


def url_signing_secret(engine: Engine) -> bytes:
    value = _stored_once(engine, service_secrets, service_secrets.c.name, URL_SIGNING,
                         service_secrets.c.value, lambda: secrets.token_hex(32))
    return bytes.fromhex(value)


def webhook_secret(engine: Engine, project: str) -> str:
    return _stored_once(engine, project_secrets, project_secrets.c.project, project,
                        project_secrets.c.webhook_secret, new_webhook_secret)


@dataclass(frozen=True)
class CreatedKey:
    key: str
    project: str


def create_key(engine: Engine, project: str | None = None, options: KeyOptions = NO_OPTIONS) -> CreatedKey:
    """A new key in the keys table (a new project unless one is named), with its member name and
    limits; the key itself is only returned, never stored."""
    key = new_key()
    project = project or f"project-{fingerprint(key)}"
    with engine.begin() as conn:
        conn.execute(api_keys.insert().values(key_sha256=key_sha256(key), project=project, masked=mask(key),
                                              created_at=int(time.time()), name=options.name, rpm=options.rpm,
                                              read_rpm=options.read_rpm))
    webhook_secret(engine, project)
    return CreatedKey(key, project)


def list_projects(engine: Engine, extra_keys: dict[str, str]) -> dict[str, dict]:
    """Every project with keys in the table or in `extra_keys` (DAILIES_API_KEYS): its keys
    (masked: the table has no more) and webhook secret."""
    with engine.connect() as conn:
        rows = conn.execute(select(api_keys.c.project, api_keys.c.masked).order_by(api_keys.c.created_at)).all()
    out: dict[str, dict] = {}
    for project, masked in [*rows, *((p, mask(k)) for k, p in extra_keys.items())]:
        out.setdefault(project, {"keys": []})["keys"].append(masked)
    for project, info in out.items():
        info["webhook_secret"] = webhook_secret(engine, project)
    return out


class DatabaseKeys:
    """key -> project, as the routes ask it (`.get(key)`): the configured keys, then the table."""

    def __init__(self, engine: Engine, configured: dict[str, str],
                 configured_options: dict[str, KeyOptions] | None = None) -> None:
        self.engine = engine
        self.configured = dict(configured)
        self.configured_options = dict(configured_options or {})
        self._by_hash: dict[str, str] = {}
        self._options_by_hash: dict[str, KeyOptions] = {}
        self._lock = threading.Lock()
        self._refreshed_at = float("-inf")
        self._failed_at = float("-inf")
        self._failure = ""
        self._lookups = OneAtATime(self._refresh, "dailies-key-lookup")
        self._refresh()

    def get(self, key: str, default: str | None = None) -> str | None:
        """The key's project, else `default`. May wait for the key table (up to `LOOKUP_TIMEOUT`;
        `answers_at_once` says whether it will); `KeysUnavailable` when it cannot be read."""
        project = self._known(key)
        if project is None and self._stale():
            if time.monotonic() - self._failed_at < RETRY_AFTER_FAILURE_SECONDS:
                raise KeysUnavailable(self._failure)
            self._look_up()
            project = self._known(key)
        return project if project is not None else default

    def answers_at_once(self, key: str) -> bool:
        """Whether `get(key)` answers without asking the database (no need to leave the event loop)."""
        return (self._known(key) is not None or not self._stale()
                or time.monotonic() - self._failed_at < RETRY_AFTER_FAILURE_SECONDS)

    def _known(self, key: str) -> str | None:
        project = self.configured.get(key)
        return project if project is not None else self._by_hash.get(key_sha256(key))

    def _stale(self) -> bool:
        return time.monotonic() - self._refreshed_at >= REFRESH_SECONDS

    def _look_up(self) -> None:
        """Read the key table again, waiting at most `LOOKUP_TIMEOUT` (a lookup still under way from
        an earlier request is waited for, not doubled)."""
        try:
            self._lookups.call(LOOKUP_TIMEOUT)
        except Exception as exc:
            self._failed_at = time.monotonic()
            self._failure = describe(exc)
            log.warning("the API keys table could not be read (%s): keys this node does not know are "
                        "answered 503 for %g s", self._failure, RETRY_AFTER_FAILURE_SECONDS)
            raise KeysUnavailable(self._failure) from exc

    def options(self, key: str) -> KeyOptions:
        """The member name and limits of a key `get` knows."""
        if key in self.configured:
            return self.configured_options.get(key, NO_OPTIONS)
        return self._options_by_hash.get(key_sha256(key), NO_OPTIONS)

    def members(self, project: str) -> list[str]:
        """The member names of the project's keys, configured and in the table: read again when the
        copy is older than REFRESH_SECONDS (waits on the database: call it off the event loop), the
        copy kept when the table does not answer."""
        if self._stale():
            try:
                self._look_up()
            except KeysUnavailable:
                pass  # the names last read: the route still answers
        names = {self.configured_options.get(key, NO_OPTIONS).name for key, owner in self.configured.items()
                 if owner == project}
        names |= {self._options_by_hash.get(digest, NO_OPTIONS).name for digest, owner in self._by_hash.items()
                  if owner == project}
        return sorted((n for n in names if n), key=str.casefold)

    def __bool__(self) -> bool:
        return bool(self.configured or self._by_hash)

    def _refresh(self) -> None:
        with self._lock:
            if time.monotonic() - self._refreshed_at < REFRESH_SECONDS and self._by_hash:
                return
            with self.engine.connect() as conn:
                rows = conn.execute(select(api_keys.c.key_sha256, api_keys.c.project, api_keys.c.name,
                                           api_keys.c.rpm, api_keys.c.read_rpm)).all()
            self._by_hash = {row.key_sha256: row.project for row in rows}
            self._options_by_hash = {row.key_sha256: options_from_entry(row._asdict()) for row in rows}
            self._refreshed_at = time.monotonic()
            self._failed_at = float("-inf")
