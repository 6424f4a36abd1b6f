"""Inputs that are this service's own result URLs are read from storage, not downloaded.

Chaining shots (a previous task's video or last frame as the next task's input) hands the
service one of its own result URLs: signed by the service (local files) or presigned for its
bucket (S3). Fetching it over HTTP would need loopback or private-network downloads, which the
SSRF guard rightly refuses by default; reading the stored file needs no network, and the URL's
signature and expiry are checked just as whoever serves it would check them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from dailies.generator.inputs import InputError, InputResolver
from dailies.service.storage.results import ResultStorage, StoredResult


def is_own_result_url(url: str, storage: ResultStorage) -> bool:
    """Whether the URL is one of our result URLs (expired or not): it is read from storage, never
    downloaded, so where its host points does not matter."""
    return storage.recognise(url) is not None


class ServiceInputResolver(InputResolver):
    def __init__(self, *args, storage: ResultStorage, clock: Callable[[], float], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._storage = storage
        self._clock = clock

    def own_result(self, url: str, where: str) -> StoredResult | None:
        """The stored file behind one of our result URLs; None for any other URL (a tampered one
        included: it is treated as any other URL)."""
        found = self._storage.recognise(url)
        if found is None:
            return None
        if self._clock() >= found.valid_until:
            raise InputError(f"{where}: resource download failed (the result URL has expired)")
        if not self._storage.exists(found.task_id, found.name):
            raise InputError(f"{where}: resource download failed (the result no longer exists)")
        return found

    def fetch(self, url: str, where: str, scratch_dir: Path, max_bytes: int | None = None) -> Path:
        own = self.own_result(url, where)
        if own is None:
            return super().fetch(url, where, scratch_dir, max_bytes)
        return self._storage.local_path(own.task_id, own.name, scratch_dir)

    def read_bytes(self, url: str, where: str, max_bytes: int | None = None) -> bytes:
        own = self.own_result(url, where)
        if own is None:
            return super().read_bytes(url, where, max_bytes)
        return self._storage.read_bytes(own.task_id, own.name)
