"""Who is calling: a key's project, its member name and its request limits.

A key belongs to a project (isolation, quotas, budgets) and may carry a member name (what spend,
charts and review show; never the key) and two limits: creates per minute (`rpm`) and reads per
minute (`read_rpm`: list, get and DELETE). Where they come from:

- `DAILIES_API_KEYS` entries (`project:key`), each optionally followed by `;name=alice;rpm=30;read_rpm=600`;
- the data directory's keys file, `dailies keys create --name alice --rpm 30` (one machine);
- the database's keys table, the same command with `--database-url` (a team).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from dailies.api_keys import fingerprint

# Member names are shown in tables and charts and written in CSV: printable, short.
MEMBER_NAME_MAX_CHARS = 64


@dataclass(frozen=True)
class KeyOptions:
    name: str | None = None
    rpm: int | None = None
    read_rpm: int | None = None


NO_OPTIONS = KeyOptions()


@dataclass(frozen=True)
class Caller:
    """The authenticated caller of one request."""

    project: str
    key_id: str  # the key's fingerprint: rate-limit windows are per key, never per key text
    options: KeyOptions = NO_OPTIONS

    @property
    def member(self) -> str:
        """The member name, or '' for a key that has none."""
        return self.options.name or ""

    @classmethod
    def of(cls, key: str, project: str, options: KeyOptions | None) -> Caller:
        return cls(project, fingerprint(key), options or NO_OPTIONS)


def check_member_name(name: str) -> str:
    name = name.strip()
    if not name or len(name) > MEMBER_NAME_MAX_CHARS or not name.isprintable() or any(c in name for c in ",;:="):
        raise ValueError(f"a member name is 1 to {MEMBER_NAME_MAX_CHARS} printable characters without , ; : =")
    return name


def check_limit(value: int | None, what: str) -> int | None:
    if value is not None and value < 1:
        raise ValueError(f"{what} must be 1 or more (or not given: no limit)")
    return value


def parse_options(text: str, where: str) -> KeyOptions:
    """`name=alice;rpm=30;read_rpm=600` (any of them, any order)."""
    values: dict[str, str] = {}
    for part in filter(None, (p.strip() for p in text.split(";"))):
        field, sep, value = part.partition("=")
        field = field.strip()
        if not sep or field not in ("name", "rpm", "read_rpm") or field in values:
            raise ValueError(f"{where}: expected name=..., rpm=N, read_rpm=N after the key, got {field!r}")
        values[field] = value.strip()
    try:
        return KeyOptions(
            name=check_member_name(values["name"]) if "name" in values else None,
            rpm=check_limit(int(values["rpm"]), "rpm") if "rpm" in values else None,
            read_rpm=check_limit(int(values["read_rpm"]), "read_rpm") if "read_rpm" in values else None,
        )
    except ValueError as exc:
        raise ValueError(f"{where}: {exc}") from None


def options_from_entry(entry: Mapping[str, Any]) -> KeyOptions:
    """The options stored with a key (keys file entry or keys table row as a mapping)."""
    return KeyOptions(entry.get("name") or None, entry.get("rpm"), entry.get("read_rpm"))
