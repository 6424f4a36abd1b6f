"""Which errors are a dependency being down (wait and try again) and which are final (fail the task).

A team deployment depends on two servers it does not run, the database and the bucket, and both
go away now and then: a restart, a failover, a network cut. An error that only says "not reachable
right now" must never become a task failure; the work waits until the dependency is back
(health.py pauses claims, workers.py keeps the rendered files and retries). Only an error about
the task itself is final.

Pure functions of the exception (and what it was caused by), no I/O.
"""

from __future__ import annotations

import errno
from collections.abc import Iterator
from enum import StrEnum


class Dependency(StrEnum):
    DATABASE = "database"
    STORAGE = "storage"


# The error code of a task whose result the storage refused for good.
RESULT_STORAGE_REJECTED = "ResultStorageRejected"

# S3 error codes that mean the bucket is busy or failing, not that the request is wrong.
_S3_BUSY = {"SlowDown", "ServiceUnavailable", "RequestTimeout", "RequestTimeTooSkewed", "InternalError",
            "Throttling", "ThrottlingException", "RequestLimitExceeded", "OperationAborted"}
# OS errors of a local results folder (or a network mount behind it) that pass with time.
_TRANSIENT_ERRNOS = {errno.ENOSPC, errno.EIO, errno.ETIMEDOUT, errno.ENOTCONN, errno.EAGAIN, errno.EDQUOT,
                     errno.ESTALE, errno.EROFS}


def _chain(exc: BaseException) -> Iterator[BaseException]:
    """The exception and what caused it (boto3 wraps botocore's errors in its own)."""
    seen: set[int] = set()
    current: BaseException | None = exc
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def database_unreachable(exc: BaseException) -> bool:
    """The database could not be reached or dropped the connection (restart, failover, network),
    or SQLite's file was locked past its timeout: the same statement may succeed later."""
    from sqlalchemy.exc import DBAPIError, InterfaceError, OperationalError

    for err in _chain(exc):
        if isinstance(err, OperationalError | InterfaceError):
            return True
        if isinstance(err, DBAPIError) and err.connection_invalidated:
            return True
        if type(err).__module__.startswith("psycopg") and type(err).__name__ in (
                "OperationalError", "InterfaceError", "AdminShutdown", "CannotConnectNow", "ConnectionTimeout"):
            return True
    return False


def storage_unavailable(exc: BaseException) -> bool:
    """The bucket (or results folder) cannot take or give files right now: unreachable, timing
    out, busy or failing (5xx). Worth retrying as it is."""
    for err in _chain(exc):
        module = type(err).__module__
        if module.startswith(("botocore", "boto3", "urllib3")):
            code = _s3_code(err)
            if code is None:
                if type(err).__name__ in ("S3UploadFailedError", "RetriesExceededError"):
                    continue  # boto3's wrappers: their cause says what happened
                return True  # connection errors, timeouts
            return code in _S3_BUSY or _http_status(err) >= 500
        if isinstance(err, ConnectionError | TimeoutError):
            return True
        if isinstance(err, OSError) and err.errno in _TRANSIENT_ERRNOS:
            return True
    return False


def storage_refused(exc: BaseException) -> bool:
    """The bucket answered and refused (a 4xx). Whether that is about this object (final) or about
    the bucket or the credentials (every request would get it: an outage for us) is for a probe
    of the bucket to tell (workers.py)."""
    for err in _chain(exc):
        code = _s3_code(err)
        if code is not None and not storage_unavailable(err):
            return True
    return False


def dependency_down(exc: BaseException) -> Dependency | None:
    """Which dependency an error says is down, if any."""
    if database_unreachable(exc):
        return Dependency.DATABASE
    if storage_unavailable(exc) or storage_refused(exc):
        return Dependency.STORAGE
    return None


def _s3_code(err: BaseException) -> str | None:
    response = getattr(err, "response", None)
    if not isinstance(response, dict):
        return None
    return str(response.get("Error", {}).get("Code") or "") or None


def _http_status(err: BaseException) -> int:
    response = getattr(err, "response", None)
    try:
        return int(response["ResponseMetadata"]["HTTPStatusCode"])  # type: ignore[index]
    except (TypeError, KeyError, ValueError):
        return 0


def describe(exc: BaseException) -> str:
    """One line for a log or a readiness answer: the error's type and first line, nothing more
    (no traceback, no URL with a signature, no password: engines render URLs with it hidden)."""
    first = str(exc).strip().splitlines()[0] if str(exc).strip() else ""
    return f"{type(exc).__name__}: {first[:300]}" if first else type(exc).__name__
