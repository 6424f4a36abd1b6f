"""The scope of a journal view: the connection whose rows it reads and writes, and the folder its files go in."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field

from ..api_keys import fingerprint

PROJECT_PREFIX = "project:"


@dataclass(frozen=True)
class Scope:
    """Whose rows a journal view holds: one connection (base URL + key fingerprint), or on a Dailies
    service, which says which project a key belongs to, the project (`of_project`).

    `include_unscoped` also shows the rows from before scopes (see dailies.journal's docstring).
    `author` is the person writing through the view (their member name, or the display name they
    gave): the name statuses, ratings and comments carry. It does not change whose rows they are.
    """

    base_url: str
    key_fingerprint: str
    include_unscoped: bool = False
    author: str = field(default="", compare=False)

    @classmethod
    def of(cls, base_url: str, api_key: str, include_unscoped: bool = False, author: str = "") -> Scope:
        return cls(base_url.rstrip("/"), fingerprint(api_key) if api_key else "no-key", include_unscoped, author)

    @classmethod
    def of_project(cls, base_url: str, project: str, include_unscoped: bool = False, author: str = "") -> Scope:
        """Every member of the project shares it: a key's fingerprint never reads as `project:...`."""
        return cls(base_url.rstrip("/"), f"{PROJECT_PREFIX}{project}", include_unscoped, author)

    @property
    def is_project(self) -> bool:
        return self.key_fingerprint.startswith(PROJECT_PREFIX)

    @property
    def name(self) -> str:
        return f"{self.key_fingerprint}@{self.base_url}"

    @property
    def folder(self) -> str:
        """A directory name for the scope's files (a base URL is no file name)."""
        return hashlib.sha256(self.name.encode("utf-8")).hexdigest()[:16]
