"""The scope of a journal view: the connection whose rows it reads and writes, and the folder its files go in."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass

from ..api_keys import fingerprint


@dataclass(frozen=True)
class Scope:
    """Whose rows a journal view holds: one connection (base URL + key fingerprint).

    `include_unscoped` also shows the rows from before scopes (see dailies.journal's docstring).
    """

    base_url: str
    key_fingerprint: str
    include_unscoped: bool = False

    @classmethod
    def of(cls, base_url: str, api_key: str, include_unscoped: bool = False) -> Scope:
        return cls(base_url.rstrip("/"), fingerprint(api_key) if api_key else "no-key", include_unscoped)

    @property
    def name(self) -> str:
        return f"{self.key_fingerprint}@{self.base_url}"

    @property
    def folder(self) -> str:
        """A directory name for the scope's files (a base URL is no file name)."""
        return hashlib.sha256(self.name.encode("utf-8")).hexdigest()[:16]
