"""One entry point from a raw JSON body to a checked request, used by the service and the
dashboard alike: the model's type and range checks first, then every cross-field rule."""

from __future__ import annotations

import reprlib
from dataclasses import dataclass, field
from typing import Any

from pydantic import ValidationError
from pydantic_core import ErrorDetails

from .catalog import Model
from .models import SDK_ONLY_FIELDS, ContentItem, CreateTaskRequest
from .problems import INVALID, MISSING, Problem, join_path
from .rules import check_request
from .text_commands import apply_text_commands

# Pydantic's wording is for programmers; these are for the people who read our errors.
_TYPE_WORDS = {
    "int_type": "must be an integer",
    "bool_type": "must be true or false",
    "string_type": "must be a string",
    "list_type": "must be an array",
    "model_type": "must be an object",
    "dict_type": "must be an object",
}


# Echo at most this much of a refused value: a body may be 64 MB, and a message quoting a whole
# data URL would make the error response (and the logs) as large.
_SHOWN = reprlib.Repr()  # keyword arguments to Repr() need Python 3.12
_SHOWN.maxstring = _SHOWN.maxother = 60
_SHOWN.maxlist = _SHOWN.maxdict = 4
_SHOWN.maxlevel = 2


def _shown(value: Any) -> str:
    return _SHOWN.repr(value)


def _describe(error: ErrorDetails) -> Problem:
    kind = error["type"]
    loc = tuple(error["loc"])
    ctx = error.get("ctx") or {}
    got = _shown(error.get("input"))
    if kind == "extra_forbidden" and loc[-1] in SDK_ONLY_FIELDS:
        return Problem(join_path(loc), f"{loc[-1]} is not supported by this service; leave it unset")
    if kind == "extra_forbidden":
        return Problem(join_path(loc), f"unknown field {loc[-1]!r}")
    if kind == "missing":
        return Problem(join_path(loc), "is required", MISSING)
    if kind in _TYPE_WORDS:
        return Problem(join_path(loc), f"{_TYPE_WORDS[kind]}, got {got}")
    if kind == "literal_error":
        return Problem(join_path(loc), f"{got} is not allowed; expected {ctx.get('expected')}")
    if kind in ("greater_than_equal", "less_than_equal"):
        return Problem(join_path(loc), f"{got} is out of range: {error['msg'].lower()}")
    if kind in ("too_short", "string_too_short") and loc == ("content",):
        return Problem("content", "needs at least one item", MISSING)
    if kind == "string_too_short":
        return Problem(join_path(loc), "must not be empty")
    if kind == "string_too_long":
        return Problem(join_path(loc), f"is longer than {ctx.get('max_length')} characters")
    if kind == "too_long":
        return Problem(join_path(loc), f"has {ctx.get('actual_length')} items; at most {ctx.get('max_length')}")
    if kind == "string_pattern_mismatch" and loc[-1] == "safety_identifier":
        return Problem(join_path(loc), "must be ASCII characters only")
    return Problem(join_path(loc), error["msg"])


def problems_from_validation_error(exc: ValidationError) -> list[Problem]:
    return [_describe(e) for e in exc.errors(include_url=False)]


def drop_nulls(body: dict[str, Any]) -> dict[str, Any]:
    """Remove the keys of known fields whose value is null, at the top level and in each content
    item: null means "not given". An unknown field stays, null or not, so the closed schema names
    it; the SDK's own extra parameters (`SDK_ONLY_FIELDS`) are known and dropped when null.
    """
    known = set(CreateTaskRequest.model_fields) | set(SDK_ONLY_FIELDS)
    item_fields = set(ContentItem.model_fields)
    out = {k: v for k, v in body.items() if not (v is None and k in known)}
    content = out.get("content")
    if isinstance(content, list):
        out["content"] = [
            {k: v for k, v in item.items() if not (v is None and k in item_fields)} if isinstance(item, dict) else item
            for item in content
        ]
    return out


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    return {list: "an array", str: "a string", bool: "a boolean", int: "a number", float: "a number"}.get(
        type(value), type(value).__name__)


@dataclass
class Checked:
    """The outcome of checking a body: the request when it parsed, and every problem found."""

    request: CreateTaskRequest | None
    problems: list[Problem] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.request is not None and not self.problems


def check_create_body(body: Any, model: Model | None = None) -> Checked:
    """Check a decoded JSON body against the whole contract (spec 2.1 to 2.3 and the catalog).

    `model` is the catalog entry the request's model resolves to, when the caller has resolved an
    endpoint id; by default the model id is looked up in the catalog.
    """
    if not isinstance(body, dict):
        return Checked(None, [Problem("body", f"the request body must be a JSON object, not {_json_type(body)}",
                                      INVALID)])
    try:
        request = CreateTaskRequest.model_validate(drop_nulls(body))
    except ValidationError as exc:
        return Checked(None, problems_from_validation_error(exc))
    # Text commands become fields first, so that the same rules judge them as body fields.
    applied = apply_text_commands(request)
    problems = applied.problems + [_named_by_text(p, applied.fields_from_text)
                                   for p in check_request(applied.request, model)]
    return Checked(applied.request, problems)


def _named_by_text(problem: Problem, fields_from_text: dict[str, str]) -> Problem:
    """A problem with a field that a text command set is a problem of that text."""
    where = fields_from_text.get(problem.path)
    if where is None:
        return problem
    return Problem(where, f"the text command for {problem.path}: {problem.message}", problem.code)
