"""API keys and per-project secrets kept in the data directory (`keys.json`).

`dailies keys create` adds a key; the service reads the file at start. Each project also has a
webhook signing secret (Standard Webhooks, `whsec_` + Base64) used for its callbacks.
"""

from __future__ import annotations

import base64
import json
import os
import secrets
from dataclasses import dataclass
from pathlib import Path

KEYS_FILE = "keys.json"


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


def _save(data_dir: Path, data: dict) -> None:
    data_dir.mkdir(parents=True, exist_ok=True)
    path = _path(data_dir)
    tmp = path.with_suffix(".tmp")
    # The file holds credentials: readable by its owner only.
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    with os.fdopen(fd, "w") as fh:
        json.dump(data, fh, indent=2)
    tmp.replace(path)


def new_key() -> str:
    return "dk-" + secrets.token_urlsafe(24)


def new_webhook_secret() -> str:
    return "whsec_" + base64.b64encode(secrets.token_bytes(24)).decode("ascii")


def create_key(data_dir: Path, project: str | None = None) -> KeyEntry:
    """Add a key to the keys file (a new project unless one is named) and return it."""
    data = _load(data_dir)
    key = new_key()
    project = project or f"project-{key[3:11].lower()}"
    data["keys"].append({"key": key, "project": project})
    data["projects"].setdefault(project, {"webhook_secret": new_webhook_secret()})
    _save(data_dir, data)
    return KeyEntry(key, project)


def load_keys(data_dir: Path) -> dict[str, str]:
    """key -> project from the keys file (empty when there is none)."""
    return {entry["key"]: entry["project"] for entry in _load(data_dir)["keys"]}


def webhook_secret(data_dir: Path, project: str) -> str:
    """The project's signing secret, made and stored on first use."""
    data = _load(data_dir)
    entry = data["projects"].get(project)
    if entry is None:
        entry = {"webhook_secret": new_webhook_secret()}
        data["projects"][project] = entry
        _save(data_dir, data)
    return entry["webhook_secret"]


def list_projects(data_dir: Path) -> dict[str, dict]:
    data = _load(data_dir)
    out: dict[str, dict] = {}
    for entry in data["keys"]:
        out.setdefault(entry["project"], {"keys": [], **data["projects"].get(entry["project"], {})})
        out[entry["project"]]["keys"].append(entry["key"])
    return out


def mask(key: str) -> str:
    """A key as it may be shown: enough to recognise it, not enough to use it."""
    return key[:5] + "…" + key[-4:] if len(key) > 12 else "…"
