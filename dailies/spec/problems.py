"""A problem found in a request: where it is, what is wrong, and the API error code it maps to."""

from __future__ import annotations

from dataclasses import dataclass

MISSING = "MissingParameter"
INVALID = "InvalidParameter"


@dataclass(frozen=True)
class Problem:
    """One thing wrong with a request.

    `path` names the field as the API's `param` does: `duration`, `content[2].role`,
    `content[0].image_url.url`. `message` is written for a person and starts with what is wrong.
    """

    path: str
    message: str
    code: str = INVALID

    def __str__(self) -> str:
        return f"{self.path}: {self.message}" if self.path else self.message


def join_path(loc: tuple[str | int, ...]) -> str:
    """('content', 2, 'role') -> 'content[2].role'."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out
