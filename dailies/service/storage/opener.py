"""The storage a service's `--storage` names: its data directory's folder, or an S3-compatible bucket."""

from __future__ import annotations

from dailies.service.storage.files import ResultFiles
from dailies.service.storage.results import LocalStorage, ResultStorage
from dailies.service.storage.signing import UrlSigner


def open_storage(spec: str | None, files: ResultFiles, signer: UrlSigner) -> ResultStorage:
    """The storage a `--storage` value names: None for the data directory's folder, or
    `s3://bucket/prefix`."""
    if not spec:
        return LocalStorage(files, signer)
    if spec.startswith("s3://"):
        # boto3 comes with the team extra, and takes a third of a second to import: only when asked.
        from dailies.service.storage.s3 import S3Storage

        return S3Storage.from_url(spec)
    raise ValueError(f"storage {spec!r}: expected s3://bucket/prefix (or nothing for the data directory)")
