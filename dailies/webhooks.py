"""Standard Webhooks signing and verification (https://www.standardwebhooks.com).

The service signs each callback with the project's secret; receivers call `verify` with the
same secret (shown by `dailies keys`) to check that a callback is genuine and recent.

    signed content  = f"{webhook-id}.{webhook-timestamp}.{body}"
    webhook-signature = "v1," + base64(HMAC-SHA256(secret bytes, signed content))
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import time
from collections.abc import Mapping

SECRET_PREFIX = "whsec_"
DEFAULT_TOLERANCE_SECONDS = 300


class WebhookVerificationError(ValueError):
    """The callback is not signed by the expected secret, or is too old or too new."""


def _secret_bytes(secret: str) -> bytes:
    return base64.b64decode(secret.removeprefix(SECRET_PREFIX))


def sign(secret: str, webhook_id: str, timestamp: int, body: bytes) -> str:
    """The `webhook-signature` header value for one delivery."""
    content = f"{webhook_id}.{timestamp}.".encode() + body
    digest = hmac.new(_secret_bytes(secret), content, hashlib.sha256).digest()
    return "v1," + base64.b64encode(digest).decode("ascii")


def signed_headers(secret: str, webhook_id: str, timestamp: int, body: bytes) -> dict[str, str]:
    return {
        "webhook-id": webhook_id,
        "webhook-timestamp": str(timestamp),
        "webhook-signature": sign(secret, webhook_id, timestamp, body),
    }


def verify(secret: str, headers: Mapping[str, str], body: bytes,
           tolerance: int = DEFAULT_TOLERANCE_SECONDS, now: float | None = None) -> None:
    """Raise WebhookVerificationError unless the headers sign `body` with `secret` and the
    timestamp is within `tolerance` seconds of now. Header names are matched case-insensitively."""
    lower = {k.lower(): v for k, v in headers.items()}
    try:
        webhook_id = lower["webhook-id"]
        timestamp = int(lower["webhook-timestamp"])
        signatures = lower["webhook-signature"]
    except (KeyError, ValueError) as exc:
        raise WebhookVerificationError("missing or malformed webhook headers") from exc
    now = time.time() if now is None else now
    if abs(now - timestamp) > tolerance:
        raise WebhookVerificationError("webhook timestamp is outside the tolerance")
    expected = sign(secret, webhook_id, timestamp, body).split(",", 1)[1]
    # The header may carry several space-separated signatures (secret rotation).
    for candidate in signatures.split():
        version, _, value = candidate.partition(",")
        # Compared as bytes: compare_digest raises TypeError on a str with non-ASCII characters,
        # which a forged header may carry.
        if version == "v1" and hmac.compare_digest(value.encode(), expected.encode()):
            return
    raise WebhookVerificationError("no signature matches")
