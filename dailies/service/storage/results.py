"""Where result files live, behind one small interface, so that the workers, the records and the
housekeeper do not care whether it is a folder of this machine or an S3-compatible bucket.

- `LocalStorage` (the embedded default): `<data_dir>/files/<task_id>/<name>`, served by the
  service's own `/files/...` route under URLs signed with HMAC (signing.py).
- `S3Storage` (s3_storage.py, `--storage s3://bucket/prefix`): objects under the prefix, handed
  out as presigned GET URLs, so no request for a video passes through the API.

A result URL is a pure function of the object and its validity window: each API node computes the
same URL for the same result, and the service recognises its own URLs when a task names one as an
input (a chained shot) and reads the object directly instead of downloading it.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol
from urllib.parse import parse_qs, urlsplit

from dailies.service.storage.files import ResultFiles
from dailies.service.storage.signing import UrlSigner

# The names and media types are the contract's (the dashboard's copies use the same), imported
# here so that storage callers find them beside the storage.
from dailies.spec.results import LAST_FRAME_NAME, MEDIA_TYPES, RESULT_NAMES, VIDEO_NAME  # noqa: E402,F401


def file_path(task_id: str, name: str) -> str:
    """The URL path of a task's result file on the service (signed when handed out)."""
    return f"/files/{task_id}/{name}"


def safe_part(part: str) -> bool:
    """A task id or file name that stays inside its task's folder or key prefix."""
    return bool(part) and "/" not in part and "\\" not in part and not part.startswith(".")


def signed_parts(url: str) -> tuple[str, str, str, int, str] | None:
    """(path, task id, file name, expires, signature) of a URL shaped like one of the service's
    own result URLs (`/files/<task>/<name>?expires=..&signature=..` over http or https), or None."""
    try:
        parts = urlsplit(url)
    except ValueError:  # an unclosed IPv6 bracket: not ours
        return None
    segments = parts.path.split("/")
    if parts.scheme not in ("http", "https") or len(segments) != 4 or segments[1] != "files":
        return None
    query = parse_qs(parts.query)
    try:
        return parts.path, segments[2], segments[3], int(query["expires"][0]), query["signature"][0]
    except (KeyError, ValueError, IndexError):
        return None


@dataclass(frozen=True)
class StoredResult:
    """A result file named by one of our own URLs, whose signature checked out."""

    task_id: str
    name: str
    valid_until: int  # unix seconds; the URL is refused from then on


class ResultStorage(Protocol):
    def put(self, task_id: str, name: str, source: Path) -> None:
        """Store a rendered file as the task's `name`; `source` may be moved away."""

    def url(self, task_id: str, name: str, valid_from: int, valid_until: int, base_url: str) -> str:
        """The GET URL of a stored file, valid in [valid_from, valid_until). `base_url` is where
        the service answers (local storage only)."""

    def recognise(self, url: str) -> StoredResult | None:
        """The file behind one of our own result URLs (signature checked, expiry not); None for
        any other URL, a tampered one included."""

    def exists(self, task_id: str, name: str) -> bool: ...

    def read_bytes(self, task_id: str, name: str) -> bytes: ...

    def local_path(self, task_id: str, name: str, scratch_dir: Path) -> Path:
        """A file on this machine with the content: the file itself, or a download into
        `scratch_dir`."""

    def delete(self, task_ids: Iterable[str], quick: bool = False) -> None:
        """Remove every file of these tasks (missing ones are no error). `quick`: on a request's path,
        with the probe's short timeouts and no retries (what fails is remembered and swept later)."""

    def probe(self) -> None:
        """Raise unless the storage answers now (readiness, and the breaker's probe: health.py).
        Quick: short timeouts, no retries."""


class LocalStorage:
    """Result files in a folder of this machine, served by the service's `/files` route."""

    def __init__(self, files: ResultFiles, signer: UrlSigner) -> None:
        self.files = files
        self.signer = signer

    def put(self, task_id: str, name: str, source: Path) -> None:
        folder = self.files.dir_for(task_id)
        folder.mkdir(parents=True, exist_ok=True)
        os.replace(source, folder / name)

    def url(self, task_id: str, name: str, valid_from: int, valid_until: int, base_url: str) -> str:
        return self.signer.sign(base_url, file_path(task_id, name), valid_until)

    def recognise(self, url: str) -> StoredResult | None:
        signed = signed_parts(url)
        if signed is None:
            return None
        path, task_id, name, expires, signature = signed
        if not self.signer.verify(path, expires, signature):
            return None
        return StoredResult(task_id, name, expires)

    def exists(self, task_id: str, name: str) -> bool:
        return self.files.path(task_id, name) is not None

    def read_bytes(self, task_id: str, name: str) -> bytes:
        return self._existing(task_id, name).read_bytes()

    def local_path(self, task_id: str, name: str, scratch_dir: Path) -> Path:
        return self._existing(task_id, name)

    def delete(self, task_ids: Iterable[str], quick: bool = False) -> None:
        for task_id in task_ids:
            self.files.remove(task_id)

    def probe(self) -> None:
        # A folder can be there and still refuse files (a full or read-only disk): write one.
        probe = self.files.root / ".probe"
        probe.write_bytes(b"ok")
        probe.unlink()

    def _existing(self, task_id: str, name: str) -> Path:
        path = self.files.path(task_id, name)
        if path is None:
            raise FileNotFoundError(f"{task_id}/{name}")
        return path
