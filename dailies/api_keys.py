"""What may be said of an API key outside the request that carries it.

A key is a credential: it never appears in a project name, a log line, an error message or the
dashboard. What appears is the masked form (enough for a person to recognise their own key) or the
fingerprint (a hash, for names and cache keys). Both the service and the dashboard use these, so
that a key looks the same everywhere it is shown.
"""

from __future__ import annotations

import hashlib

# Keys often share long prefixes (`sk-proj-...`, `ark-...`, `team-key-00..`), so names and cache
# keys are made from a hash of the whole key, never from a slice of it.
FINGERPRINT_HEX_CHARS = 16  # 64 bits: no collision among any realistic number of keys
MASK_SHOWS_FIRST = 5
MASK_SHOWS_LAST = 4
# Below this length, showing 9 characters would show most of the key.
MASK_MIN_LENGTH = 13


def fingerprint(key: str) -> str:
    """A stable, non-reversible name for a key: the first 16 hex digits of its SHA-256."""
    return hashlib.sha256(key.encode("utf-8")).hexdigest()[:FINGERPRINT_HEX_CHARS]


def project_for_bare_key(key: str) -> str:
    """The project of a key given without a project name: its own, named after the whole key."""
    return f"key-{fingerprint(key)}"


def mask(key: str) -> str:
    """A key as it may be shown: its first 5 and last 4 characters, or nothing of a short key."""
    if not key:
        return "(none)"
    if len(key) < MASK_MIN_LENGTH:
        return "…"
    return key[:MASK_SHOWS_FIRST] + "…" + key[-MASK_SHOWS_LAST:]
