"""A task's stored request as `GET /dailies/v1/tasks/{id}/request` answers it: the prompt and the
inputs as sent, small enough to list (never the megabytes of an inline image or video).

- A media URL that is not a `data:` URL (http(s), `asset://`, a result URL of this service) is
  returned as sent.
- An inline image (a `data:` URL) becomes a small JPEG thumbnail data URL (longest side at most
  `THUMB_MAX_SIDE`, turned upright by its EXIF orientation as the renderer does), with what the
  original was under `inline`: media type, size in bytes, width and height.
- An inline video or audio is not returned: `url` is None and `inline` says its media type and size.
- `callback_url` is left out: its query often carries a receiver's token, and the request is
  shown to every member of the project.

Thumbnails of one answer share `THUMBS_BUDGET_CHARS`: with many large images each is made
smaller, so the answer stays well under 100 KB whatever the request held.

The stored request is the one that was rendered (`tasks.create`): text commands are kept in the
text as sent and also appear as the fields they set, and a final made from a draft holds the
draft's inputs (its `draft_task_id` says which).

Pure: no database, no network. Decoding a big image costs up to a second of CPU and a hundred
megabytes or more, so the service makes each task's answer once and keeps it (shown_requests.py).
"""

from __future__ import annotations

import io
import json
import warnings
from typing import Any

from PIL import Image, ImageOps

from dailies.spec.media import DataUrlError, decode_data_url, encode_data_url

THUMB_MAX_SIDE = 256
# Base64 characters of all the thumbnails of one answer together, and of any one of them.
THUMBS_BUDGET_CHARS = 64 * 1024
THUMB_MAX_CHARS = 24 * 1024
# Never made smaller than this: below it a thumbnail shows nothing; it is left out instead.
_THUMB_MIN_SIDE = 48
_QUALITIES = (80, 60, 45)

MEDIA_FIELDS = ("image_url", "video_url", "audio_url")
# Top-level fields of the stored request that are not returned as parameters.
_NOT_PARAMETERS = frozenset({"model", "content", "callback_url"})


def answer(stored: str | dict[str, Any], *, task_id: str, model: str, created_at: int,
           created_by: str | None = None, draft_task_id: str | None = None) -> dict[str, Any]:
    """The endpoint's answer for one task, from its stored request (the JSON text of the
    `tasks.request` column, or that decoded)."""
    request = json.loads(stored) if isinstance(stored, str) else stored
    if not isinstance(request, dict):
        request = {}
    content = request.get("content")
    items = content if isinstance(content, list) else []
    out: dict[str, Any] = {"id": task_id, "model": model, "created_by": created_by or None,
                           "created_at": created_at, "prompt": prompt_of(items),
                           "content": content_of(items)}
    if draft_task_id:
        out["draft_task_id"] = draft_task_id
    for name, value in request.items():
        if name not in _NOT_PARAMETERS and name not in out:
            out[name] = value
    return out


def prompt_of(items: list) -> str | None:
    """The text of the first text item, inline `--` commands included, as sent."""
    for item in items:
        if isinstance(item, dict) and item.get("type") == "text" and isinstance(item.get("text"), str):
            return item["text"]
    return None


def content_of(items: list) -> list[dict[str, Any]]:
    """The content items as sent (their `type` and `role` kept), each inline medium replaced."""
    inline_images = sum(1 for item in items if _inline_url(item, "image_url") is not None)
    allowance = min(THUMB_MAX_CHARS, THUMBS_BUDGET_CHARS // max(inline_images, 1))
    out = []
    for item in items:
        if not isinstance(item, dict):
            continue
        shown = dict(item)
        for field in MEDIA_FIELDS:
            url = _inline_url(item, field)
            if url is not None:
                shown[field] = inline_medium(url, field, allowance)
        out.append(shown)
    return out


def _inline_url(item: object, field: str) -> str | None:
    media = item.get(field) if isinstance(item, dict) else None
    url = media.get("url") if isinstance(media, dict) else None
    return url if isinstance(url, str) and url.startswith("data:") else None


def inline_medium(url: str, field: str, allowance: int = THUMB_MAX_CHARS) -> dict[str, Any]:
    """`{"url": thumbnail data URL or None, "inline": {media_type, bytes[, width, height]}}` of a
    `data:` URL; the thumbnail's data URL is at most `allowance` characters."""
    try:
        media_type, raw = decode_data_url(url)
    except DataUrlError:
        # Cannot happen to a request the service accepted; said without guessing.
        return {"url": None, "inline": {"media_type": None, "bytes": None}}
    inline: dict[str, Any] = {"media_type": media_type, "bytes": len(raw)}
    if field != "image_url":
        return {"url": None, "inline": inline}
    made = thumbnail(raw, allowance)
    if made is None:
        return {"url": None, "inline": inline}
    thumb_url, (width, height) = made
    inline |= {"width": width, "height": height}
    return {"url": thumb_url, "inline": inline}


def thumbnail(raw: bytes, max_chars: int = THUMB_MAX_CHARS,
              max_side: int = THUMB_MAX_SIDE) -> tuple[str | None, tuple[int, int]] | None:
    """(a JPEG data URL of at most `max_chars` characters, or None when none that small shows
    anything; the image's width and height as stored) of an image; None when it cannot be read."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(raw)) as opened:
                size = opened.size
                opened.draft("RGB", (max_side, max_side))  # a JPEG decodes at a fraction of its size
                img = opened if opened.mode in ("RGB", "L") else opened.convert("RGB")
                # Shrunk in place before anything copies it: one full-size image in memory, not three.
                img.thumbnail((max_side, max_side))
                small = ImageOps.exif_transpose(img).convert("RGB")
    except (OSError, SyntaxError, ValueError, Image.DecompressionBombError, Image.DecompressionBombWarning):
        return None
    side = max_side
    while side >= _THUMB_MIN_SIDE:
        small.thumbnail((side, side))
        for quality in _QUALITIES:
            out = io.BytesIO()
            small.save(out, format="JPEG", quality=quality)
            url = encode_data_url(out.getvalue(), "image/jpeg")
            if len(url) <= max_chars:
                return url, size
        side //= 2
    return None, size
