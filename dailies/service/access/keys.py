"""API keys and per-project secrets kept in the data directory (`keys.json`).

`dailies keys create` adds a key; the service reads the file again whenever it changes (`FileKeys`).
Each project also has a webhook signing secret (Standard Webhooks, `whsec_` + Base64) used for its callbacks.
"""

from __future__ import annotations

import base64
import fcntl
import json
import os
import secrets
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from dailies.api_keys import fingerprint
from dailies.service.callers import NO_OPTIONS, KeyOptions, options_from_entry

KEYS_FILE = "keys.json"
_THREAD_LOCK = threading.Lock()


@dataclass(frozen=True)
class KeyEntry:
    key: str
    project: str


def _path(data_dir: Path) -> Path:
    return data_dir / KEYS_FILE


def _load(data_dir: Path) -> dict:
    path = _path(data_dir)
    if not path.exists():
        return {"keys": [], "projects": {}}
    return json.loads(path.read_text())


@contextmanager
def _locked(data_dir: Path):
    """An exclusive lock around a read-modify-write of the keys file, across threads and processes."""
    data_dir.mkdir(parents=True, exist_ok=True)
    with _THREAD_LOCK, open(data_dir / f"{KEYS_FILE}.lock", "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


def _save(data_dir: Path, data: dict) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    path = _path(data_dir)
    tmp = path.with_name(f"{KEYS_FILE}.{os.getpid()}.{threading.get_ident()}.tmp")
    # The file holds credentials: readable by its owner only.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump(data, fh, indent=2)
    tmp.replace(path)


def new_key() -> str:
    return "dk-" + secrets.token_urlsafe(24)


def new_webhook_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode("ascii")


def create_key(data_dir: Path, project: str | None = None, options: KeyOptions = NO_OPTIONS) -> KeyEntry:
    """Add a key to the keys file (a new project unless one is named), with its member name and
    limits, and return it."""
    with _locked(data_dir):
        data = _load(data_dir)
        key = new_key()
        project = project or f"project-{fingerprint(key)}"
        entry = {"key": key, "project": project}
        entry.update({k: v for k, v in vars(options).items() if v is not None})
        data["keys"].append(entry)
        data["projects"].setdefault(project, {"webhook_secret": new_webhook_secret()})
        _save(data_dir, data)
    return KeyEntry(key, project)


def load_keys(data_dir: Path) -> dict[str, str]:
    """key -> project from the keys file (empty when there is none)."""
    return {entry["key"]: entry["project"] for entry in _load(data_dir)["keys"]}


def load_key_options(data_dir: Path) -> dict[str, KeyOptions]:
    """key -> member name and limits, for the keys file's keys that have any."""
    options = {entry["key"]: options_from_entry(entry) for entry in _load(data_dir)["keys"]}
    return {key: opts for key, opts in options.items() if opts != NO_OPTIONS}


def webhook_secret(data_dir: Path, project: str) -> str:
    """The project's signing secret, made and stored on first use."""
    entry = _load(data_dir)["projects"].get(project)
    if entry is not None:
        return entry["webhook_secret"]
    with _locked(data_dir):
        data = _load(data_dir)  # another process may have made it meanwhile
        entry = data["projects"].setdefault(project, {"webhook_secret": new_webhook_secret()})
        _save(data_dir, data)
    return entry["webhook_secret"]


def list_projects(data_dir: Path, extra_keys: dict[str, str] | None = None) -> dict[str, dict]:
    """Every project known to the data directory (from the keys file, plus `extra_keys` such as
    those of DAILIES_API_KEYS) with its keys and webhook secret."""
    data = _load(data_dir)
    out: dict[str, dict] = {name: {"keys": [], **info} for name, info in data["projects"].items()}
    pairs = [(e["key"], e["project"]) for e in data["keys"]] + list((extra_keys or {}).items())
    for key, project in pairs:
        out.setdefault(project, {"keys": [], **data["projects"].get(project, {})})
        out[project]["keys"].append(key)
    return out


def rename_projects(data_dir: Path, renames: dict[str, str]) -> None:
    """Rename projects in the keys file: its keys and its webhook secret (kept, so callback
    receivers go on verifying) follow the new name. A secret the new name already has wins."""
    if not renames or not _path(data_dir).exists():
        return
    with _locked(data_dir):
        data = _load(data_dir)
        for entry in data["keys"]:
            entry["project"] = renames.get(entry["project"], entry["project"])
        for old, new in renames.items():
            info = data["projects"].pop(old, None)
            if info is not None:
                data["projects"].setdefault(new, info)
        _save(data_dir, data)


def stored_entries(data_dir: Path) -> list[dict]:
    """The keys file's entries as stored ({"key", "project"})."""
    return list(_load(data_dir)["keys"])


_UNREAD = object()


class FileKeys:
    """key -> project for one node on the data directory: the keys given at start (settings or
    DAILIES_API_KEYS) as they are, else the keys file, read again whenever it changes, so a key that
    `dailies keys create` adds while the service runs works on its next request."""

    def __init__(self, data_dir: Path, configured: dict[str, str] | None = None,
                 configured_options: dict[str, KeyOptions] | None = None) -> None:
        self._path = _path(data_dir)
        self._fixed = bool(configured)
        self._keys: dict[str, str] = dict(configured or {})
        self._options: dict[str, KeyOptions] = dict(configured_options or {})
        self._seen: object = _UNREAD
        self._lock = threading.Lock()
        if not self._fixed:
            self._reload_if_changed()

    def get(self, key: str, default: str | None = None) -> str | None:
        if not self._fixed:
            self._reload_if_changed()
        return self._keys.get(key, default)

    def options(self, key: str) -> KeyOptions:
        return self._options.get(key, NO_OPTIONS)

    def members(self, project: str) -> list[str]:
        """The member names of the project's keys (a key without a name names no one)."""
        if not self._fixed:
            self._reload_if_changed()
        names = {self.options(key).name for key, owner in self._keys.items() if owner == project}
        return sorted((n for n in names if n), key=str.casefold)

    def answers_at_once(self, key: str) -> bool:
        """Always: a stat of a local file, and a read of a small one when it changed."""
        return True

    def __bool__(self) -> bool:
        if not self._fixed:
            self._reload_if_changed()
        return bool(self._keys)

    def _reload_if_changed(self) -> None:
        try:
            stat = self._path.stat()
            seen: tuple[int, int, int] | None = (stat.st_mtime_ns, stat.st_size, stat.st_ino)
        except FileNotFoundError:
            seen = None
        if seen == self._seen:
            return
        with self._lock:
            # The file is replaced whole (`_save`), so a read sees one version or the next.
            entries = _load(self._path.parent)["keys"] if seen is not None else []
            self._keys = {entry["key"]: entry["project"] for entry in entries}
            options = {entry["key"]: options_from_entry(entry) for entry in entries}
            self._options = {key: opts for key, opts in options.items() if opts != NO_OPTIONS}
            self._seen = seen
