"""Reading a JSON request body with a size limit, without holding an oversized body in memory."""

from __future__ import annotations

import json

from fastapi import Request
from starlette.requests import ClientDisconnect

from ..spec import limits as L
from .api_errors import ApiError


def _too_large() -> ApiError:
    return ApiError(413, "RequestEntityTooLarge",
                    f"The request body is larger than {L.REQUEST_BODY_MAX_BYTES // L.MB} MB.", "body")


async def read_json_body(request: Request, limit: int = L.REQUEST_BODY_MAX_BYTES) -> object:
    """The decoded JSON body. A declared Content-Length over the limit is refused before reading;
    a chunked body is read until it passes the limit, then refused."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large()
    chunks: list[bytes] = []
    size = 0
    try:
        async for chunk in request.stream():
            size += len(chunk)
            if size > limit:
                raise _too_large()
            chunks.append(chunk)
    except ClientDisconnect as exc:
        # Nobody will read the answer; a 400 keeps it out of the 500 handler's traceback log.
        raise ApiError(400, "InvalidParameter", "The client disconnected before the request body was complete.",
                       "body") from exc
    raw = b"".join(chunks)
    if not raw.strip():
        raise ApiError(400, "MissingParameter", "The request body is empty; send the task as JSON.", "body")
    try:
        return json.loads(raw)
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise ApiError(400, "InvalidParameter", f"The request body is not valid JSON: {exc}.", "body") from exc
