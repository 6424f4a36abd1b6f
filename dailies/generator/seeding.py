"""Randomness that depends only on the request: the same prompt and seed give the same video."""

from __future__ import annotations

import hashlib

import numpy as np


def stable_rng(*parts: object) -> np.random.Generator:
    """A random generator seeded from a SHA-256 of `parts` (stable across runs and machines,
    unlike Python's salted `hash`)."""
    digest = hashlib.sha256("\x1f".join(str(part) for part in parts).encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:16], "big"))
