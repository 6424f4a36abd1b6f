"""Where the journal keeps its files when the dashboard is given a bucket (`--storage s3://bucket/prefix`,
`DAILIES_STORAGE`): kept copies of results and stored uploads, so a dashboard on any machine plays a
copy another kept and resends an upload another stored. Without one they are files in the data
directory (see dailies.journal).

The objects go beside the service's results, not among them: for `s3://bucket/prefix` the journal uses
`prefix-journal/` (`journal/` for a bucket without prefix), so a lifecycle rule that expires the
service's results under `prefix/` never takes a copy someone kept on purpose:

    <prefix>-journal/archive/<scope folder>/<task id>/<name>   kept copies
    <prefix>-journal/inputs/<scope folder>/<sha-256>           stored uploads

(the unscoped view, for tests and maintenance: `archive/<task id>/<name>`, `inputs/unscoped/<sha-256>`).

Every call goes through the service's S3Storage (dailies.service.s3_storage): the same AWS settings,
addressing, retries, and presigned GET URLs signed at a given time, so one copy's URL stays the same
for an hour and a player on an auto-refreshing page does not reload it.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections import OrderedDict
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dailies.service.storage.s3 import S3Storage

BUCKET_SCHEME = "s3://"
UNSCOPED_FOLDER = "unscoped"  # the stored uploads of the unscoped view (scope folders are 16 hex digits)
# A kept copy's URL is signed at the start of its hour for two hours: the same URL all hour, and at least
# an hour left to play it.
URL_PERIOD_S = 3600
_ARCHIVES_KEPT = 128  # per-scope archive prefixes held at once (a few hundred kB each)


def journal_root(storage: str) -> tuple[str, str]:
    """(bucket, key prefix of the journal's objects) for a `s3://bucket/prefix` setting."""
    if not storage.startswith(BUCKET_SCHEME):
        raise ValueError(f"storage {storage!r}: expected s3://bucket/prefix (or nothing for the data directory)")
    bucket, _, prefix = storage.removeprefix(BUCKET_SCHEME).partition("/")
    if not bucket:
        raise ValueError("storage s3://BUCKET/prefix: the bucket is missing")
    prefix = prefix.strip("/")
    return bucket, f"{prefix}-journal" if prefix else "journal"


class BucketError(OSError):
    """The bucket refused or could not be reached (an OSError, as a failed write to a folder would be)."""


def _bucket_errors() -> tuple[type[BaseException], ...]:
    from boto3.exceptions import Boto3Error
    from botocore.exceptions import BotoCoreError, ClientError

    return Boto3Error, BotoCoreError, ClientError


class JournalBucket:
    """The journal's objects in one bucket: one boto3 session, one S3Storage per prefix in use."""

    def __init__(self, storage: str) -> None:
        try:
            import boto3

            from dailies.service.storage.s3 import S3Storage

            from ..config import current
        except ImportError as exc:
            raise RuntimeError(f"storage {storage}: boto3 is missing (pip install 'dailies[team]')") from exc

        self.bucket, self.root = journal_root(storage)
        # One session for every prefix: a client made from it costs a few ms, not the session's 60.
        self._session = boto3.session.Session(region_name=current().aws_region or None)
        self.inputs = S3Storage(self.bucket, f"{self.root}/inputs", session=self._session)
        self._archives: OrderedDict[str, S3Storage] = OrderedDict()
        self._lock = threading.Lock()

    def archive(self, folder: str | None) -> S3Storage:
        """The kept copies of one scope folder (None: the unscoped view's, at the archive's root)."""
        from dailies.service.storage.s3 import S3Storage

        name = folder or ""
        with self._lock:
            found = self._archives.get(name)
            if found is None:
                prefix = f"{self.root}/archive/{name}" if name else f"{self.root}/archive"
                found = self._archives[name] = S3Storage(self.bucket, prefix, session=self._session)
                while len(self._archives) > _ARCHIVES_KEPT:
                    self._archives.popitem(last=False)
            self._archives.move_to_end(name)
            return found

    def location(self, key: str) -> str:
        return f"{BUCKET_SCHEME}{self.bucket}/{key}"

    def key_of(self, location: str) -> str | None:
        """The key of one of this bucket's journal objects named by `location`, else None."""
        head = f"{BUCKET_SCHEME}{self.bucket}/{self.root}/"
        return location.removeprefix(f"{BUCKET_SCHEME}{self.bucket}/") if location.startswith(head) else None

    # ---------- kept copies ----------

    def keep(self, folder: str | None, task_id: str, name: str, source: Path) -> str:
        """Upload a kept copy; returns its location (s3://bucket/key)."""
        archive = self.archive(folder)
        try:
            archive.put(task_id, name, source)
        except _bucket_errors() as exc:
            raise BucketError(f"could not store {task_id}/{name} in {self.location(archive.prefix)}: {exc}") from exc
        return self.location(archive.key(task_id, name))

    def url(self, location: str, now: float | None = None) -> str:
        """A presigned GET URL of a kept copy, the same for a whole hour."""
        folder, task_id, name = self._kept(location)
        start = int((time.time() if now is None else now) // URL_PERIOD_S * URL_PERIOD_S)
        with _as_bucket_error(f"could not sign a URL for {location}"):
            return self.archive(folder).url(task_id, name, start, start + 2 * URL_PERIOD_S)

    def read(self, location: str) -> bytes:
        """The bytes of a kept copy."""
        folder, task_id, name = self._kept(location)
        with _as_bucket_error(f"could not read {location}"):
            return self.archive(folder).read_bytes(task_id, name)

    def _kept(self, location: str) -> tuple[str | None, str, str]:
        return _split(self._own_key(location).removeprefix(f"{self.root}/archive/"))

    def _own_key(self, location: str) -> str:
        key = self.key_of(location)
        if key is None:
            raise FileNotFoundError(f"{location} is not in {self.location(self.root)}/")
        return key

    # ---------- stored uploads ----------

    def store_input(self, folder: str | None, name: str, raw: bytes, mime: str) -> None:
        """Store an upload once (its name is its hash: an object already there is the same bytes)."""
        folder = folder or UNSCOPED_FOLDER
        # Written again rather than looked for first: the same name is the same bytes, and a HEAD on a
        # missing key answers 403, not 404, to a key without s3:ListBucket (a least-privilege policy).
        with _as_bucket_error(f"could not store an upload in {self.location(self.inputs.prefix)}"):
            self.inputs.client.put_object(Bucket=self.bucket, Key=self.inputs.key(folder, name), Body=raw,
                                          ContentType=mime)

    def read_input(self, folder: str | None, name: str) -> bytes:
        """A stored upload of one scope folder; with folder None (the unscoped view), of any."""
        with _as_bucket_error(f"could not read the stored upload {name}"):
            if folder is not None:
                return self.inputs.read_bytes(folder, name)
            paginator = self.inputs.client.get_paginator("list_objects_v2")
            for page in paginator.paginate(Bucket=self.bucket, Prefix=self.inputs.prefix):
                for item in page.get("Contents", []):
                    if item["Key"].endswith(f"/{name}"):
                        folder = item["Key"].removeprefix(self.inputs.prefix).split("/")[0]
                        return self.inputs.read_bytes(folder, name)
        raise FileNotFoundError(name)


@contextlib.contextmanager
def _as_bucket_error(what: str) -> Iterator[None]:
    """boto3's and botocore's errors (refused, unreachable, no credentials, timed out) as BucketError,
    an OSError, which is what the dashboard's pages handle for a file that cannot be read or written."""
    # RuntimeError: S3Storage.url without credentials. Named before the `try`: mypy cannot type a
    # starred tuple written in the `except` clause.
    errors: tuple[type[BaseException], ...] = (*_bucket_errors(), RuntimeError)
    try:
        yield
    except errors as exc:
        raise BucketError(f"{what}: {exc}") from exc


def _split(rest: str) -> tuple[str | None, str, str]:
    """(scope folder or None, task id, name) of a key below the archive prefix."""
    parts = rest.split("/")
    if len(parts) == 2:
        return None, parts[0], parts[1]
    if len(parts) == 3:
        return parts[0], parts[1], parts[2]
    raise FileNotFoundError(f"not a kept copy: {rest}")
