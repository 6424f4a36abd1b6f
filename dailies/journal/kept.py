"""Kept copies of results: files in the data directory, or objects in the team's bucket (dailies.journal.bucket).
A kept file's row says where it is, so copies kept before a bucket was configured keep playing from the folder."""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .bucket import BUCKET_SCHEME, JournalBucket
from .view import View


@dataclass
class KeptFile:
    task_id: str
    name: str
    path: Path | None  # the copy on this machine's disk; None for a copy in a bucket (see `location`)
    size: int
    kept_at: float
    location: str = ""  # where the copy is, to show: the file's path, or s3://bucket/key
    bucket: JournalBucket | None = field(default=None, repr=False, compare=False)

    def __post_init__(self) -> None:
        if not self.location and self.path is not None:
            self.location = str(self.path)

    @property
    def in_bucket(self) -> bool:
        return self.path is None

    def media(self, now: float | None = None) -> Path | str:
        """What a player takes: the file, or a presigned GET URL of the object (the same for an hour,
        so a page that runs again does not reload the player)."""
        if self.path is not None:
            return self.path
        assert self.bucket is not None
        return self.bucket.url(self.location, now)

    def read_bytes(self) -> bytes:
        if self.path is not None:
            return self.path.read_bytes()
        assert self.bucket is not None
        return self.bucket.read(self.location)


class KeptFilesMixin(View):
    @property
    def archive_dir(self) -> Path:
        """Where this view's kept copies go on this machine (without a bucket)."""
        root = self.path.parent / "archive"
        return root / self._scope.folder if self._scope is not None else root

    def keep_path(self, task_id: str, name: str) -> Path:
        """Where a kept copy goes on this machine: the archive itself, or, with a bucket, where it is
        downloaded before `mark_kept` uploads it."""
        if "/" in task_id or "\\" in task_id or task_id in ("", ".", ".."):
            raise ValueError(f"not a task id: {task_id!r}")
        return self.archive_dir / task_id / name

    @property
    def archive_location(self) -> str:
        """Where this view's kept copies go, to show: a folder, or s3://bucket/prefix/."""
        bucket = self._store.bucket
        if bucket is None:
            return str(self.archive_dir)
        archive = bucket.archive(self._folder)
        return bucket.location(archive.prefix)

    def mark_kept(self, task_id: str, name: str, path: Path) -> KeptFile:
        """Note a kept copy at `path`. With a bucket the file is uploaded to it, then removed here."""
        size, bucket = path.stat().st_size, self._store.bucket
        if bucket is not None:
            location = bucket.keep(self._folder, task_id, name, path)
            path.unlink(missing_ok=True)
            kept = KeptFile(task_id, name, None, size, time.time(), location, bucket)
        else:
            kept = KeptFile(task_id, name, path, size, time.time())
        self._write("kept", [{"scope": self._writes_as, "task_id": task_id, "name": name, "path": kept.location,
                              "size": size, "kept_at": kept.kept_at}])
        return kept

    def _kept_file(self, row: Any) -> KeptFile | None:
        """A kept copy this dashboard can play: its file exists here, or it is in this dashboard's bucket."""
        if row.path.startswith(BUCKET_SCHEME):
            bucket = self._store.bucket
            if bucket is None or bucket.key_of(row.path) is None:
                return None
            return KeptFile(row.task_id, row.name, None, row.size, row.kept_at, row.path, bucket)
        path = Path(row.path)
        return KeptFile(row.task_id, row.name, path, row.size, row.kept_at) if path.exists() else None

    def _kept_rows(self, task_id: str | None) -> list[KeptFile]:
        where = [self._table("kept").c.task_id == task_id] if task_id is not None else []
        rows = self._preferred("kept", *where)
        files = {(r.task_id, r.name): r for r in rows[::-1]}  # the preferred row of each file wins
        return [k for k in map(self._kept_file, files.values()) if k is not None]

    def kept(self, task_id: str) -> dict[str, KeptFile]:
        return {k.name: k for k in self._kept_rows(task_id)}

    def all_kept(self) -> list[KeptFile]:
        return sorted(self._kept_rows(None), key=lambda k: k.kept_at, reverse=True)
