"""Project names made by earlier versions from a slice of a key, renamed when the service starts.

Earlier versions named a bare key's project `key-<its first 8 characters>` and a project made by
`dailies keys create` `project-<characters 3 to 11>`. Both put part of a key in a name, and two
bare keys with one prefix shared a project (each read and cancelled the other's tasks). Names now
come from a hash of the whole key (`dailies.api_keys`). What happens to a data directory made
before, at the first start of this version:

- a keys-file project named the old way after its own key becomes `project-<fingerprint>`: the key
  that made the name is known. Its tasks, idempotency records, callback events and webhook secret
  move with it (callback receivers keep verifying with the same secret).
- the old name of a bare key (`DAILIES_API_KEYS`) moves to the new name of the one configured key
  that made it. When several configured keys share that prefix, nobody can tell whose tasks they
  were: they are renamed `unclaimed-<hash>`, a project no key maps to, and purged after 7 days
  like any record. The same happens to old names no configured key made any more.
"""

from __future__ import annotations

import hashlib
import logging
import re

from sqlalchemy import Engine, select, update

from dailies.api_keys import fingerprint
from dailies.service.db.tables import callback_events, idempotency, tasks
from dailies.service.db.writer import writer

log = logging.getLogger("dailies.service")

# `key-` and up to 8 characters: the shape of an old bare-key name. New names are `key-` and 16
# hex digits, so the two never meet.
_OLD_BARE_NAME = re.compile(r"key-.{1,8}", re.DOTALL)
_TABLES = (tasks, idempotency, callback_events)


def old_keys_file_name(key: str) -> str:
    return f"project-{key[3:11].lower()}"


def old_bare_key_name(key: str) -> str:
    return f"key-{key[:8]}"


def unclaimed_name(old: str) -> str:
    return "unclaimed-" + hashlib.sha256(old.encode("utf-8")).hexdigest()[:16]


def keys_file_renames(entries: list[dict]) -> dict[str, str]:
    """old -> new project name for keys-file entries still named the old way after their key."""
    return {e["project"]: f"project-{fingerprint(e['key'])}" for e in entries
            if e["project"] == old_keys_file_name(e["key"])}


def bare_key_renames(stored: set[str], api_keys: dict[str, str]) -> dict[str, str]:
    """old -> new for project names in the database that look like old bare-key names and that no
    configured key uses as it is today."""
    configured = set(api_keys.values())
    makers: dict[str, set[str]] = {}
    for key, project in api_keys.items():
        makers.setdefault(old_bare_key_name(key), set()).add(project)
    renames = {}
    for name in stored - configured:
        if not _OLD_BARE_NAME.fullmatch(name):
            continue
        candidates = makers.get(name, set())
        renames[name] = next(iter(candidates)) if len(candidates) == 1 else unclaimed_name(name)
    return renames


def stored_projects(engine: Engine) -> set[str]:
    with engine.connect() as conn:
        return set(conn.execute(select(tasks.c.project).distinct()).scalars())


def rename_projects(engine: Engine, renames: dict[str, str]) -> None:
    """Move every row of each old project to its new name, in one transaction."""
    if not renames:
        return
    with writer(engine).begin() as conn:
        for old, new in renames.items():
            for table in _TABLES:
                conn.execute(update(table).where(table.c.project == old).values(project=new))
    # The names themselves are not logged: the old ones hold part of a key.
    log.info("renamed %d project(s) named after part of a key (see README, 'Keys and projects')", len(renames))
