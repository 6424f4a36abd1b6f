"""Reading a JSON request body: the media type, a size limit without holding an oversized body in
memory, and a strict parse that a hostile body cannot turn into a crash or a long stall.

Order of the checks, cheapest first:

1. a declared `Content-Length` over 64 MB: 413, unread;
2. a `Content-Type` that is not JSON: 415 (`application/json`, or `application/<x>+json`, with
   no charset or UTF-8: RFC 8259 makes UTF-8 the only encoding of JSON between systems); a
   `Content-Encoding` (gzip...): 415, not read as text it is not;
3. the stream, cut off as soon as it passes 64 MB: 413;
4. the strict parse of dailies/spec/strict_json.py (its shape before parsing, UTF-8, then no NaN,
   overflowing numbers, duplicate keys or lone surrogates), which the CLI's `--body` shares.

Each refusal is a 4xx in the error shape; the param is `body` for what cannot be parsed at all,
`Content-Type` or `Content-Encoding` for those headers, and the field's path (`seed`,
`content[0].text`) when the parse found the offending value.
"""

from __future__ import annotations

from fastapi import Request
from starlette.requests import ClientDisconnect

from dailies.service.errors import ApiError
from dailies.spec import limits as L
from dailies.spec.strict_json import JsonRefused, parse_strict_json


def _too_large() -> ApiError:
    return ApiError(413, "RequestEntityTooLarge",
                    f"The request body is larger than {L.REQUEST_BODY_MAX_BYTES // L.MB} MB.", "body")


# ---------- media type ----------


def is_json_media_type(value: str | None) -> bool:
    """`application/json` or `application/<x>+json`, with no charset or a UTF-8 one."""
    if not value:
        return False
    media, _, params = value.partition(";")
    media = media.strip().lower()
    if media != "application/json" and not (media.startswith("application/") and media.endswith("+json")):
        return False
    for param in params.split(";"):
        name, _, charset = param.partition("=")
        if name.strip().lower() == "charset" and charset.strip().strip('"').lower() not in ("utf-8", "utf8"):
            return False
    return True


def check_content_type(value: str | None) -> None:
    if not is_json_media_type(value):
        got = f"'{value[:60]}'" if value else "none"
        raise ApiError(415, "UnsupportedMediaType",
                       f"Send the task as JSON with 'Content-Type: application/json' (UTF-8); got {got}.",
                       "Content-Type")


def check_content_encoding(value: str | None) -> None:
    """A compressed body was read as UTF-8 and refused as "not UTF-8 (byte 0x8b)": say what it is."""
    if value is not None and value.strip().lower() not in ("", "identity"):
        raise ApiError(415, "UnsupportedMediaType", f"The request body is sent with Content-Encoding {value.strip()}; "
                       "send it uncompressed (JSON, UTF-8).", "Content-Encoding")


# ---------- the parse (dailies/spec/strict_json.py) ----------


def parse_json(raw: bytes) -> object:
    """The decoded body, or an ApiError saying what makes it unacceptable."""
    try:
        return parse_strict_json(raw)
    except JsonRefused as refused:
        raise ApiError(400, refused.code, refused.message, refused.param) from refused


async def read_json_body(request: Request, limit: int = L.REQUEST_BODY_MAX_BYTES) -> object:
    """The decoded JSON body. A declared Content-Length over the limit is refused before reading;
    a chunked body is read until it passes the limit, then refused."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large()
    check_content_type(request.headers.get("content-type"))
    return parse_json(await read_body(request, limit))


async def read_body(request: Request, limit: int) -> bytes:
    """The raw body, whatever its type, read until it passes `limit` (then refused), uncompressed only."""
    declared = request.headers.get("content-length")
    if declared is not None and declared.isdigit() and int(declared) > limit:
        raise _too_large()
    check_content_encoding(request.headers.get("content-encoding"))
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
    return b"".join(chunks)
