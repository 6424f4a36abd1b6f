"""dailies.webhooks: Standard Webhooks signing and the verify helper receivers use."""

from __future__ import annotations

import base64
import re

import pytest

from dailies.service.access.keys import new_webhook_secret
from dailies.webhooks import WebhookVerificationError, sign, signed_headers, verify

# The published test vector of the Standard Webhooks specification: matching it means any of that
# specification's libraries verifies our callbacks.
VECTOR_SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
VECTOR_ID = "msg_p5jXN8AQM9LWM0D4loKWxJek"
VECTOR_TIMESTAMP = 1614265330
VECTOR_BODY = b'{"test": 2432232314}'
VECTOR_SIGNATURE = "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="

NOW = 1_790_000_000
BODY = b'{"id":"cgt-20260916-abcde","status":"succeeded"}'


@pytest.fixture
def secret() -> str:
    return new_webhook_secret()


def test_sign_matches_the_standard_webhooks_test_vector():
    assert sign(VECTOR_SECRET, VECTOR_ID, VECTOR_TIMESTAMP, VECTOR_BODY) == VECTOR_SIGNATURE
    headers = {"webhook-id": VECTOR_ID, "webhook-timestamp": str(VECTOR_TIMESTAMP),
               "webhook-signature": VECTOR_SIGNATURE}
    verify(VECTOR_SECRET, headers, VECTOR_BODY, now=VECTOR_TIMESTAMP)


def test_signed_headers_round_trip(secret):
    headers = signed_headers(secret, "msg_1", NOW, BODY)
    assert set(headers) == {"webhook-id", "webhook-timestamp", "webhook-signature"}
    assert headers["webhook-id"] == "msg_1" and headers["webhook-timestamp"] == str(NOW)
    assert re.fullmatch(r"v1,[A-Za-z0-9+/]{43}=", headers["webhook-signature"])
    assert len(base64.b64decode(headers["webhook-signature"][3:])) == 32  # an HMAC-SHA256 digest
    verify(secret, headers, BODY, now=NOW)


def test_header_names_are_matched_case_insensitively(secret):
    headers = {k.title(): v for k, v in signed_headers(secret, "msg_1", NOW, BODY).items()}
    verify(secret, headers, BODY, now=NOW)


def test_secret_without_prefix_is_the_same_secret(secret):
    headers = signed_headers(secret, "msg_1", NOW, BODY)
    verify(secret.removeprefix("whsec_"), headers, BODY, now=NOW)


@pytest.mark.parametrize("tampered", [
    BODY.replace(b"succeeded", b"failed"),
    BODY + b" ",
    b"",
])
def test_tampered_body_is_rejected(secret, tampered):
    headers = signed_headers(secret, "msg_1", NOW, BODY)
    with pytest.raises(WebhookVerificationError, match="no signature matches"):
        verify(secret, headers, tampered, now=NOW)


def test_tampered_id_or_timestamp_is_rejected(secret):
    headers = signed_headers(secret, "msg_1", NOW, BODY)
    with pytest.raises(WebhookVerificationError):
        verify(secret, {**headers, "webhook-id": "msg_2"}, BODY, now=NOW)
    with pytest.raises(WebhookVerificationError):
        verify(secret, {**headers, "webhook-timestamp": str(NOW + 1)}, BODY, now=NOW)


def test_wrong_secret_is_rejected(secret):
    headers = signed_headers(secret, "msg_1", NOW, BODY)
    with pytest.raises(WebhookVerificationError, match="no signature matches"):
        verify(new_webhook_secret(), headers, BODY, now=NOW)


@pytest.mark.parametrize("skew", [-301, 301, -10_000])
def test_timestamp_outside_tolerance_is_rejected(secret, skew):
    headers = signed_headers(secret, "msg_1", NOW + skew, BODY)
    with pytest.raises(WebhookVerificationError, match="tolerance"):
        verify(secret, headers, BODY, now=NOW)


def test_timestamp_inside_tolerance_passes_and_tolerance_is_a_parameter(secret):
    old = signed_headers(secret, "msg_1", NOW - 299, BODY)
    verify(secret, old, BODY, now=NOW)
    with pytest.raises(WebhookVerificationError):
        verify(secret, old, BODY, now=NOW, tolerance=60)
    verify(secret, signed_headers(secret, "msg_1", NOW - 3000, BODY), BODY, now=NOW, tolerance=3600)


def test_verify_defaults_to_the_current_time(secret):
    import time

    verify(secret, signed_headers(secret, "msg_1", int(time.time()), BODY), BODY)
    with pytest.raises(WebhookVerificationError):
        verify(secret, signed_headers(secret, "msg_1", int(time.time()) - 3600, BODY), BODY)


def test_any_of_several_signatures_may_match(secret):
    """Secret rotation: the header carries several space-separated signatures."""
    good = sign(secret, "msg_1", NOW, BODY)
    other = sign(new_webhook_secret(), "msg_1", NOW, BODY)
    base = {"webhook-id": "msg_1", "webhook-timestamp": str(NOW)}
    for header in (f"{other} {good}", f"{good} {other}", f"v1,AAAA {other}  {good}"):
        verify(secret, {**base, "webhook-signature": header}, BODY, now=NOW)
    with pytest.raises(WebhookVerificationError):
        verify(secret, {**base, "webhook-signature": f"{other} v1,AAAA"}, BODY, now=NOW)


def test_only_v1_signatures_count(secret):
    good = sign(secret, "msg_1", NOW, BODY)
    headers = {"webhook-id": "msg_1", "webhook-timestamp": str(NOW),
               "webhook-signature": "v1a," + good[3:] + " " + good[3:]}
    with pytest.raises(WebhookVerificationError):
        verify(secret, headers, BODY, now=NOW)


@pytest.mark.parametrize("drop", ["webhook-id", "webhook-timestamp", "webhook-signature"])
def test_missing_header_is_rejected(secret, drop):
    headers = signed_headers(secret, "msg_1", NOW, BODY)
    del headers[drop]
    with pytest.raises(WebhookVerificationError, match="missing or malformed"):
        verify(secret, headers, BODY, now=NOW)


def test_malformed_timestamp_is_rejected(secret):
    headers = {**signed_headers(secret, "msg_1", NOW, BODY), "webhook-timestamp": "yesterday"}
    with pytest.raises(WebhookVerificationError, match="missing or malformed"):
        verify(secret, headers, BODY, now=NOW)


def test_non_ascii_signature_is_rejected_not_a_crash(secret):
    # Headers arrive decoded as Latin-1; a forged one may hold any character.
    headers = {**signed_headers(secret, "msg_1", NOW, BODY), "webhook-signature": "v1,ÿÿÿÿ"}
    with pytest.raises(WebhookVerificationError):
        verify(secret, headers, BODY, now=NOW)


def test_verification_error_is_a_value_error():
    assert issubclass(WebhookVerificationError, ValueError)
