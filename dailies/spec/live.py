"""A live review session: a presenter drives the shots, everyone's player follows.

What the presenter's player says (`state`) is checked here before the service keeps it: the version
shown (one of the session's), playing or paused, the time and the moment it was true, the speed, the
frame when paused, the drawing being made (dailies/spec/drawings.py) and a pointer. A follower's player
places itself from it: while playing, at `time + (now - at) * rate`. Pure: the service and the tests
use it; the player's JavaScript writes the same shape.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

from dailies.spec.drawings import parse_drawing
from dailies.spec.problems import MISSING, Problem

MAX_VERSIONS = 50
MAX_TITLE_CHARS = 200
MAX_STATE_BYTES = 96_000
MAX_NAME_CHARS = 200
RATES = (0.25, 0.5, 1.0, 1.5, 2.0)
MAX_SECONDS = 24 * 3600.0
LONG_POLL_MAX_S = 25.0


def _number(value: object) -> float | None:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    return float(value) if math.isfinite(value) else None


def check_versions(body: Mapping[str, Any]) -> tuple[list[Problem], list[dict[str, str]]]:
    """A new session's versions: `[{"task_id", "label"?}]`, 1 to MAX_VERSIONS, each once."""
    versions = body.get("versions")
    if not isinstance(versions, list) or not versions:
        return [Problem("versions", "is required: a list of the versions to review, each {\"task_id\", \"label\"}",
                        MISSING if versions is None else "InvalidParameter")], []
    if len(versions) > MAX_VERSIONS:
        return [Problem("versions", f"holds {len(versions)} versions; at most {MAX_VERSIONS}")], []
    problems: list[Problem] = []
    kept: list[dict[str, str]] = []
    for i, item in enumerate(versions):
        task_id = item.get("task_id") if isinstance(item, dict) else None
        label = item.get("label", "") if isinstance(item, dict) else ""
        if not isinstance(task_id, str) or not 0 < len(task_id) <= 200:
            problems.append(Problem(f"versions[{i}].task_id", "must be a task id (1 to 200 characters)"))
            continue
        if not isinstance(label, str) or len(label) > MAX_TITLE_CHARS:
            problems.append(Problem(f"versions[{i}].label", f"must be text of at most {MAX_TITLE_CHARS} characters"))
            continue
        if any(v["task_id"] == task_id for v in kept):
            problems.append(Problem(f"versions[{i}].task_id", f"{task_id!r} is listed twice"))
            continue
        kept.append({"task_id": task_id, "label": label})
    return problems, kept


def check_state(raw: object, versions: list[str]) -> tuple[list[Problem], dict[str, Any]]:
    """A presenter's state, or the problems with it (each naming `state.<field>`)."""
    if not isinstance(raw, Mapping):
        return [Problem("state", "must be an object: version, playing, time, at, rate, frame, shapes, pointer")], {}
    problems: list[Problem] = []
    version = raw.get("version")
    if version not in versions:
        problems.append(Problem("state.version", "must be one of the session's versions"))
    playing = raw.get("playing")
    if not isinstance(playing, bool):
        problems.append(Problem("state.playing", "must be true or false"))
    time, at, rate = _number(raw.get("time")), _number(raw.get("at")), _number(raw.get("rate", 1.0))
    if time is None or not 0 <= time <= MAX_SECONDS:
        problems.append(Problem("state.time", f"must be seconds from 0 to {MAX_SECONDS:g}"))
    if at is None or at < 0:
        problems.append(Problem("state.at", "must be the time it was true, in milliseconds since the epoch"))
    if rate not in RATES:
        problems.append(Problem("state.rate", f"must be one of {', '.join(f'{r:g}' for r in RATES)}"))
    frame = raw.get("frame")
    if frame is not None and (isinstance(frame, bool) or not isinstance(frame, int) or not 0 <= frame <= 10_000_000):
        problems.append(Problem("state.frame", "must be a frame number, or null"))
    shapes, drawn = parse_drawing(raw.get("shapes") or None, "state.shapes")
    problems += drawn
    pointer = raw.get("pointer")
    if pointer is not None:
        x, y = (_number(pointer.get("x")), _number(pointer.get("y"))) if isinstance(pointer, Mapping) else (None, None)
        if x is None or y is None or not (0 <= x <= 1 and 0 <= y <= 1):
            problems.append(Problem("state.pointer", "must be {\"x\", \"y\"} from 0 to 1 on the picture, or null"))
        else:
            pointer = {"x": x, "y": y}
    if problems:
        return problems, {}
    return [], {"version": version, "playing": playing, "time": time, "at": at, "rate": rate, "frame": frame,
                "shapes": [s.model_dump() for s in shapes or []], "pointer": pointer}


def placed_at(state: Mapping[str, Any], now_ms: float) -> float:
    """Where a follower's video should be at `now_ms` (the presenter's clock): still while paused."""
    if not state.get("playing"):
        return float(state["time"])
    return float(state["time"]) + max(0.0, now_ms - float(state["at"])) / 1000 * float(state["rate"])
