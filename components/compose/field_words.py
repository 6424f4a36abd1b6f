"""A request path in the words of the form: `content[1].image_url` is the "First frame" a person
filled, `execution_expires_after` is "Give up after". The JSON path stays in the JSON preview. Pure."""

from __future__ import annotations

import re

from components.compose.state_keys import FIRST_SLOT, LAST_SLOT, REF_AUDIO_SLOT, REF_IMAGE_SLOT, REF_VIDEO_SLOT
from dailies.spec.problems import Problem

# The label of each field's widget, by the request path it fills.
FIELD_LABELS = {
    "model": "Model", "prompt": "Prompt", "content": "Inputs", "draft_task": "Draft",
    "resolution": "Resolution", "ratio": "Ratio", "frames": "Frames", "duration": "Duration", "seed": "Seed",
    "priority": "Priority", "service_tier": "Flex tier", "camera_fixed": "Fixed camera",
    "generate_audio": "Generate sound", "tools": "Web search tool", "watermark": "Watermark",
    "return_last_frame": "Return the last frame", "execution_expires_after": "Give up after",
    "safety_identifier": "Safety identifier", "callback_url": "Callback URL", "draft": "Draft",
}
_SLOT_LABELS = [(FIRST_SLOT, "First frame"), (LAST_SLOT, "Last frame")]
_NUMBERED = [(REF_IMAGE_SLOT, "Reference image {}"), (REF_VIDEO_SLOT, "Reference video {}"),
             (REF_AUDIO_SLOT, "Reference audio {}")]


def slot_label(slot: str) -> str | None:
    for key, label in _SLOT_LABELS:
        if slot == key:
            return label
    for pattern, label in _NUMBERED:
        found = re.fullmatch(re.escape(pattern).replace(r"\{\}", r"(\d+)"), slot)
        if found:
            return label.format(int(found.group(1)) + 1)
    return None


def in_words(problem: Problem, paths: dict[str, str]) -> str:
    """"First frame: the image is 30 px wide; at least 300 px" for a problem at `content[1].image_url`."""
    path = problem.path or ""
    by_path = {item_path: slot for slot, item_path in paths.items()}
    item = re.match(r"content\[\d+\]", path)
    label = None
    if item is not None and item.group(0) in by_path:
        key = by_path[item.group(0)]
        label = FIELD_LABELS.get(key) or slot_label(key)
    if label is None:
        head = re.split(r"[.\[]", path, maxsplit=1)[0]
        label = FIELD_LABELS.get(head)
    if label is None:
        return f"{path}: {problem.message}" if path else problem.message
    return f"{label}: {problem.message}"
