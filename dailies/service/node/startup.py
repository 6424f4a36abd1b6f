"""Starting a service process when its dependencies may not be there yet.

A worker or an API node started during a database restart (a rolling deploy, a node rebooting
with the database) should wait for it, not exit: `wait_for_database` tries with backoff and logs
once that it waits. What no amount of waiting fixes is a configuration error (a malformed URL, a
missing driver, a refused password, a database that does not exist): those end the process at
once with a clear message and exit code 2 (`ConfigurationError`).
"""

from __future__ import annotations

import logging
import threading

from dailies.service.db.engine import make_engine
from dailies.service.runtime.faults import database_unreachable, describe
from dailies.service.settings import Settings

log = logging.getLogger("dailies.startup")

# PostgreSQL SQLSTATEs that waiting does not cure: bad password or role, no such database.
_CONFIGURATION_SQLSTATES = {"28P01", "28000", "3D000"}


class ConfigurationError(Exception):
    """The process cannot run with these settings; the message says what to change."""


def is_configuration_error(exc: BaseException) -> bool:
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    if isinstance(exc, ArgumentError | NoSuchModuleError | ModuleNotFoundError | ValueError):
        return True
    return getattr(getattr(exc, "orig", None), "sqlstate", None) in _CONFIGURATION_SQLSTATES


def wait_for_database(settings: Settings, stop: threading.Event, max_delay: float = 5.0) -> bool:
    """Open the database (creating or upgrading its schema) once it answers. False if `stop` was
    set first; raises `ConfigurationError` for settings that cannot work."""
    delay, waiting = 0.5, False
    while not stop.is_set():
        try:
            make_engine(settings.database).dispose()
        except Exception as exc:
            if is_configuration_error(exc) or not database_unreachable(exc):
                raise ConfigurationError(f"the database cannot be used: {describe(exc)}") from exc
            if not waiting:
                waiting = True
                log.warning("the database does not answer (%s); waiting for it", describe(exc))
            stop.wait(delay)
            delay = min(delay * 2, max_delay)
            continue
        if waiting:
            log.warning("the database answers: starting")
        return True
    return False
