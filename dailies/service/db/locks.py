"""Every PostgreSQL advisory lock Dailies takes, in one registry, so that no two parts ever share one
by accident. All are transaction-scoped (released at commit or rollback).

Two forms, whose key spaces never meet (PostgreSQL tells them apart): one 64-bit key for a lock of a
whole schema, and a 32-bit namespace with `hashtext` of a name for locks per project, per upstream key
and model, per journal row. Each value spells its name in ASCII, so it reads in `pg_locks`.
"""

from __future__ import annotations

from enum import IntEnum

from sqlalchemy import Connection, text


class WholeLock(IntEnum):
    """One 64-bit key each: held by the process that installs or upgrades a schema."""

    SERVICE_SCHEMA = 0x6461696C696573  # "dailies"
    JOURNAL_SCHEMA = 0x6A6F75726E616C  # "journal"


class Namespace(IntEnum):
    """The first key of the two-key form; the second is `hashtext` of the name locked."""

    PROJECT = 0x6461696C  # "dail": a project's quota, idempotency and budget check at create
    CAPPED_CLAIMS = 0x63616C69  # "cali": a gateway's claims under a running cap (one name: "")
    UPSTREAM_PACE = 0x70616365  # "pace": admissions of one upstream key and model
    JOURNAL_ROW = 0x6A726E6C  # "jrnl": a journal write that must not race another dashboard's


_WHOLE = text("SELECT pg_advisory_xact_lock(:key)")
_NAMED = text("SELECT pg_advisory_xact_lock(:namespace, hashtext(:name))")


def hold_whole(conn: Connection, lock: WholeLock) -> None:
    """Wait for and hold `lock` until the transaction ends (PostgreSQL only)."""
    conn.execute(_WHOLE, {"key": int(lock)})


def hold(conn: Connection, namespace: Namespace, name: str) -> None:
    """Wait for and hold the lock of `name` in `namespace` until the transaction ends (PostgreSQL only)."""
    conn.execute(_NAMED, {"namespace": int(namespace), "name": name})
