"""Small builders for request bodies, so the tables read like the spec's lines."""

from __future__ import annotations

from typing import Any

from dailies.spec.problems import Problem
from dailies.spec.validation import check_create_body

V20 = "doubao-seedance-2-0-260128"
V20_FAST = "doubao-seedance-2-0-fast-260128"
V15 = "doubao-seedance-1-5-pro-251215"
V10 = "doubao-seedance-1-0-pro-250528"

IMAGE_URL = "https://example.com/cat.png"
VIDEO_URL = "https://example.com/clip.mp4"
AUDIO_URL = "https://example.com/voice.mp3"


def text(prompt: str = "a cat walks on the roof") -> dict[str, Any]:
    return {"type": "text", "text": prompt}


def image(role: str | None = None, url: str = IMAGE_URL) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "image_url", "image_url": {"url": url}}
    if role is not None:
        item["role"] = role
    return item


def video(role: str | None = None, url: str = VIDEO_URL) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "video_url", "video_url": {"url": url}}
    if role is not None:
        item["role"] = role
    return item


def audio(role: str | None = None, url: str = AUDIO_URL) -> dict[str, Any]:
    item: dict[str, Any] = {"type": "audio_url", "audio_url": {"url": url}}
    if role is not None:
        item["role"] = role
    return item


def draft_task(task_id: str = "cgt-20250101120000-abcde") -> dict[str, Any]:
    return {"type": "draft_task", "draft_task": {"id": task_id}}


def body(model: str = V20, content: list[dict[str, Any]] | None = None, **fields: Any) -> dict[str, Any]:
    return {"model": model, "content": [text()] if content is None else content, **fields}


def rule_problems(model: str, content: list[dict[str, Any]], **fields: Any) -> list[Problem]:
    """Problems of a body that parses: the cross-field rules' findings only."""
    checked = check_create_body(body(model, content, **fields))
    assert checked.request is not None, [str(p) for p in checked.problems]
    return checked.problems


def paths(problems: list[Problem]) -> list[str]:
    return [p.path for p in problems]
