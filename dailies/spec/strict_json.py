"""A strict parse of a JSON request body that a hostile body cannot turn into a crash or a long stall,
shared by the service (dailies/service/api/body.py, which adds the transport's checks) and the CLI's
`--body` (which sends a file as it is, so must refuse what the service would).

1. the shape of the text without parsing it (`json_shape_problem`): nesting deeper than
   `JSON_DEPTH_MAX` or more than `JSON_TOKENS_MAX` tokens is refused before the parser builds
   anything (the parser recurses per level, and millions of tiny values cost gigabytes);
2. UTF-8;
3. the parse, strict where Python's `json` is lenient and the real service's Go decoder is not:
   no `NaN`/`Infinity`, no number that overflows (`1e999`), no integer of thousands of digits, no
   duplicate key (Go keeps the last silently; refusing is safer than guessing), no lone UTF-16
   surrogate (`"\\ud800"`, which cannot be written back as UTF-8).

A refusal is a `JsonRefused`: its message for a person, the field's path (`seed`,
`content[0].text`) when the parse found the offending value, else `body`.
"""

from __future__ import annotations

import json
import math
from typing import Any

from . import limits as L
from .problems import join_path


class JsonRefused(ValueError):
    def __init__(self, message: str, param: str = "body", code: str = "InvalidParameter") -> None:
        super().__init__(message)
        self.message, self.param, self.code = message, param, code


# What the shape of a body is made of: brackets, separators and string quotes.
_TOKENS = b'[]{},:"'
_NOT_TOKENS = bytes(b for b in range(256) if b not in _TOKENS)
_QUOTE = ord('"')
_OPENERS = b"[{"
_CLOSERS = b"]}"


# ---------- the shape of the text ----------


def json_shape_problem(raw: bytes) -> str | None:
    """Why the body is too deep or too large to parse, found without parsing it; None otherwise.

    Only bytes.replace, bytes.translate and bytes.find touch the whole body (C loops at memory
    speed: a 64 MB body costs tens of milliseconds whatever it holds); the Python loop walks at
    most `JSON_TOKENS_MAX` tokens. Text that is not JSON (an unclosed string, a stray `]`) is
    left to the parser, which names the position."""
    # Escapes go first, left to right as JSON reads them: pairs of backslashes, then escaped
    # quotes. Every quote left opens or closes a string (UTF-8 never puts an ASCII byte inside
    # a multi-byte character, so bytes are as good as characters here).
    if b"\\" in raw:
        raw = raw.replace(b"\\\\", b"").replace(b'\\"', b"")
    skeleton = raw.translate(None, delete=_NOT_TOKENS)
    depth = tokens = pos = 0
    end = len(skeleton)
    while pos < end:
        tokens += 1
        if tokens > L.JSON_TOKENS_MAX:
            return f"it holds more than {L.JSON_TOKENS_MAX:,} JSON tokens; a task request holds a few hundred"
        char = skeleton[pos]
        pos += 1
        if char == _QUOTE:
            closing = skeleton.find(b'"', pos)
            if closing < 0:
                return None
            pos = closing + 1
        elif char in _OPENERS:
            depth += 1
            if depth > L.JSON_DEPTH_MAX:
                return f"it nests arrays and objects more than {L.JSON_DEPTH_MAX} levels deep"
        elif char in _CLOSERS:
            depth -= 1
            if depth < 0:
                return None
    return None


# ---------- a strict parse ----------


class _Refused:
    """A value the parser met that no field may hold; reported with its path after the parse."""

    def __init__(self, why: str) -> None:
        self.why = why


class _Object(dict[str, Any]):
    """A JSON object whose text named `duplicate` twice."""

    duplicate: str | None = None


def _first_repeated(keys: list[str]) -> str:
    seen: set[str] = set()
    for key in keys:
        if key in seen:
            return key
        seen.add(key)
    raise ValueError("no key appears twice")


def _object(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = _Object(pairs)
    if len(obj) != len(pairs):
        obj.duplicate = _first_repeated([k for k, _ in pairs])
    return obj


def _integer(text: str) -> int | _Refused:
    digits = len(text.lstrip("-"))
    if digits > L.JSON_NUMBER_DIGITS_MAX:
        return _Refused(f"a number of {digits:,} digits is out of range")
    return int(text)


def _real(text: str) -> float | _Refused:
    value = float(text)
    if not math.isfinite(value):
        return _Refused(f"{text[:30]} is too large for a number")
    return value


def _constant(name: str) -> _Refused:
    return _Refused(f"{name} is not a JSON value")


def _refusal(value: Any, path: tuple[str | int, ...] = ()) -> tuple[str, str] | None:
    """(param, message) for the first value the parse marked as refused, or None."""
    here = join_path(path) or "body"
    if isinstance(value, _Refused):
        return here, value.why
    if isinstance(value, str):
        return _surrogate(value, here)
    if isinstance(value, dict):
        # Keys first: a param naming a key must be text that can be written back.
        for key in value:
            found = _surrogate(key, here)
            if found:
                return found
        if isinstance(value, _Object) and value.duplicate is not None:
            return join_path((*path, value.duplicate)), "the key appears twice in one object"
        for key, item in value.items():
            found = _refusal(item, (*path, key))
            if found:
                return found
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found = _refusal(item, (*path, index))
            if found:
                return found
    return None


def _surrogate(text: str, here: str) -> tuple[str, str] | None:
    if text.isascii():  # the common case, and a 64 MB data URL, cost no copy
        return None
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return here, "holds a lone UTF-16 surrogate (\\ud800 to \\udfff), which is not text"
    return None


def parse_strict_json(raw: bytes) -> object:
    """The decoded body, or a JsonRefused saying what makes it unacceptable."""
    if not raw.strip():
        raise JsonRefused("The request body is empty; send the task as JSON.", code="MissingParameter")
    shape = json_shape_problem(raw)
    if shape:
        raise JsonRefused(f"The request body is refused unparsed: {shape}.")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise JsonRefused(f"The request body is not UTF-8 (byte {raw[exc.start]:#04x} at {exc.start}).") from exc
    try:
        body = json.loads(text, object_pairs_hook=_object, parse_int=_integer, parse_float=_real,
                          parse_constant=_constant)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError is a ValueError
        raise JsonRefused(f"The request body is not valid JSON: {exc}.") from exc
    refused = _refusal(body)
    if refused:
        param, why = refused
        raise JsonRefused(f"{param}: {why}.", param)
    return body
