"""Text commands: parameters written at the end of a prompt, as the real service reads them.

Prompts written for the real service may end with `--resolution 720p --ratio 16:9 --duration 5
--seed 11 --camerafixed false --watermark false`, or the short forms `--rs --rt --dur --cf --wm`,
and `--fps` / `--framepersecond` (only 24) and `--frames`. ComfyUI's Seedance 1.x nodes send
nothing else (`comfy_api_nodes/nodes_bytedance.py`); the official Go SDK's example appends
`--ratio 1:1`; the BytePlus create-task reference notes that every model takes these parameters
either way, body field or text command (docs/research/real-clients.md, section 2).

Here they are parameters, not words: `apply_text_commands` moves them into the request's fields,
where the same rules as for body fields apply, and a problem with one of them names
`content[i].text`. The real service is lenient with a bad text command (it may ignore it); we
refuse it, and refuse a parameter given both ways with different values, naming both: a request
that says two things is a mistake worth showing before anything renders.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import get_args

from pydantic import ValidationError

from .models import CreateTaskRequest, Ratio, Resolution
from .problems import Problem

FRAMES_PER_SECOND = 24
_RESOLUTIONS: tuple[str, ...] = get_args(Resolution)
_RATIOS: tuple[str, ...] = get_args(Ratio)
_FPS_FIELD = "framespersecond"  # checked, never set: the frame rate is fixed


def _integer(text: str) -> int:
    if not re.fullmatch(r"-?\d{1,12}", text):
        raise ValueError("must be an integer")
    return int(text)


def _boolean(text: str) -> bool:
    lowered = text.lower()
    if lowered not in ("true", "false"):
        raise ValueError("must be true or false")
    return lowered == "true"


def _one_of(choices: tuple[str, ...]) -> Callable[[str], str]:
    def parse(text: str) -> str:
        if text not in choices:
            raise ValueError(f"must be one of {', '.join(choices)}")
        return text
    return parse


def _fps(text: str) -> int:
    value = _integer(text)
    if value != FRAMES_PER_SECOND:
        raise ValueError(f"the frame rate is {FRAMES_PER_SECOND}; no other is made")
    return value


@dataclass(frozen=True)
class CommandSpec:
    field: str
    parse: Callable[[str], object]


_SPECS = {
    "resolution": CommandSpec("resolution", _one_of(_RESOLUTIONS)),
    "ratio": CommandSpec("ratio", _one_of(_RATIOS)),
    "duration": CommandSpec("duration", _integer),
    "seed": CommandSpec("seed", _integer),
    "camera_fixed": CommandSpec("camera_fixed", _boolean),
    "watermark": CommandSpec("watermark", _boolean),
    "frames": CommandSpec("frames", _integer),
    _FPS_FIELD: CommandSpec(_FPS_FIELD, _fps),
}
# Every name a command may be written with, long and short, and the field it sets.
COMMAND_NAMES: dict[str, str] = {
    "resolution": "resolution", "rs": "resolution",
    "ratio": "ratio", "rt": "ratio",
    "duration": "duration", "dur": "duration",
    "seed": "seed",
    "camerafixed": "camera_fixed", "cf": "camera_fixed",
    "watermark": "watermark", "wm": "watermark",
    "frames": "frames",
    "framepersecond": _FPS_FIELD, "framespersecond": _FPS_FIELD, "fps": _FPS_FIELD,
}

# A command's name as written: `--name`. Commands are `--name value` pairs read from the end of a
# text while they are commands; an unknown `--word` ends them, so a prompt may contain dashes of its own.
_COMMAND_NAME = re.compile(r"--([A-Za-z_]+)")


@dataclass(frozen=True)
class TextCommand:
    name: str  # as written, without the dashes
    raw: str  # the value as written
    field: str

    @property
    def written(self) -> str:
        return f"--{self.name} {self.raw}"


@dataclass(frozen=True)
class ParsedText:
    prompt: str  # the text without its commands
    commands: tuple[TextCommand, ...]  # in the order written


def _words_from_the_end(text: str) -> Iterator[tuple[int, str]]:
    """The whitespace-separated words of a text, last first, with where each starts. Each character
    is looked at once at most, and only as far back as the caller reads: a prompt of 50 KB that ends
    in thousands of commands is split in linear time (a search from the end per command was
    quadratic: seconds of CPU for one create)."""
    end = len(text)
    while end > 0:
        while end > 0 and text[end - 1].isspace():
            end -= 1
        start = end
        while start > 0 and not text[start - 1].isspace():
            start -= 1
        if start == end:
            return
        yield start, text[start:end]
        end = start


def parse_text(text: str) -> ParsedText:
    """Split a text into its prompt and the commands at its end."""
    commands: list[TextCommand] = []
    cut = len(text)
    words = _words_from_the_end(text)
    for _, raw in words:
        start, written = next(words, (0, ""))
        match = _COMMAND_NAME.fullmatch(written)
        if match is None:
            break
        field = COMMAND_NAMES.get(match.group(1).lower())
        if field is None:
            break
        commands.append(TextCommand(match.group(1), raw, field))
        cut = start
    return ParsedText(text[:cut].rstrip(), tuple(reversed(commands)))


def prompt_of(text: str) -> str:
    """The words of a prompt, without the commands at its end (what a renderer draws)."""
    return parse_text(text).prompt


@dataclass(frozen=True)
class Applied:
    """A request with its text commands moved into fields, the problems found doing it, and
    which fields came from which text item (so later problems with them name that text)."""

    request: CreateTaskRequest
    problems: list[Problem]
    fields_from_text: dict[str, str]  # field -> "content[i].text"


def apply_text_commands(req: CreateTaskRequest) -> Applied:
    """Move the text commands of each text item into the request's fields. A bad value, a
    parameter given twice in the text with different values, or given both in the text and in
    the body with different values, is a problem of `content[i].text`."""
    problems: list[Problem] = []
    values: dict[str, object] = {}
    fields_from_text: dict[str, str] = {}
    for index, item in enumerate(req.content):
        if item.type != "text" or not item.text:
            continue
        where = f"content[{index}].text"
        for command in parse_text(item.text).commands:
            try:
                value = _SPECS[command.field].parse(command.raw)
            except ValueError as exc:
                problems.append(Problem(where, f"{command.written}: {exc}"))
                continue
            if command.field == _FPS_FIELD:
                continue
            bound = _outside_the_fields_bounds(req, command.field, value)
            if bound:
                problems.append(Problem(where, f"{command.written}: {bound}"))
                continue
            if command.field in values and values[command.field] != value:
                problems.append(Problem(where, f"{command.written} repeats {command.field} with another value"))
                continue
            in_body = getattr(req, command.field)
            if in_body is not None and in_body != value:
                problems.append(Problem(where, f"{command.written} in the text and {command.field}: "
                                               f"{_json_word(in_body)} in the body disagree; give it once"))
                continue
            values[command.field] = value
            fields_from_text[command.field] = where
    if not values:
        return Applied(req, problems, {})
    return Applied(req.model_copy(update=values), problems, fields_from_text)


def _outside_the_fields_bounds(req: CreateTaskRequest, field: str, value: object) -> str | None:
    """What the request model says of `value` as `field` (its range: a seed of -5), None when it
    holds: a command is held to the body field's own constraints, in the one place they are written
    (the merge below skips validation, and a seed out of range was stored and broke every read)."""
    try:
        CreateTaskRequest.__pydantic_validator__.validate_assignment(req.model_copy(), field, value)
    except ValidationError as exc:
        message = exc.errors(include_url=False)[0]["msg"]
        return message[:1].lower() + message[1:]
    return None


def _json_word(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)
