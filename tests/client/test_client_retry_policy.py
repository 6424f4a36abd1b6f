"""The pure retry decisions: which outcomes are retried, backoff bounds, Retry-After parsing."""

from __future__ import annotations

import httpx
import pytest
from hypothesis import given
from hypothesis import strategies as st

from dailies.client._retry import (
    RetryPolicy,
    backoff_delay,
    is_retryable_status,
    parse_retry_after,
    retry_delay,
)

NOW = 1_700_000_000.0  # 2023-11-14T22:13:20Z


@pytest.mark.parametrize("status", [408, 429, 500, 502, 503, 504])
def test_transient_statuses_are_retried(status):
    assert is_retryable_status(status)


@pytest.mark.parametrize("status", [200, 400, 401, 403, 404, 409, 413, 422])
def test_other_statuses_are_not(status):
    assert not is_retryable_status(status)


@given(retry_index=st.integers(0, 1000), u=st.floats(0, 1, exclude_max=True))
def test_backoff_is_full_jitter_under_an_exponential_ceiling(retry_index, u):
    policy = RetryPolicy()
    delay = backoff_delay(retry_index, policy, lambda: u)
    ceiling = min(policy.backoff_cap, policy.backoff_base * 2**min(retry_index, 62))
    assert 0 <= delay <= ceiling


def test_backoff_ceiling_doubles_then_caps():
    policy = RetryPolicy(backoff_base=0.5, backoff_cap=8.0)
    ceilings = [backoff_delay(i, policy, lambda: 1.0) for i in range(7)]
    assert ceilings == [0.5, 1.0, 2.0, 4.0, 8.0, 8.0, 8.0]


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        ({}, None),
        ({"Retry-After": "7"}, 7.0),
        ({"Retry-After": " 1.5 "}, 1.5),
        ({"Retry-After": "-3"}, 0.0),
        ({"Retry-After": "soon"}, None),
        ({"Retry-After": "nan"}, None),
        ({"Retry-After": "Tue, 14 Nov 2023 22:13:50 GMT"}, 30.0),
        ({"Retry-After": "Tue, 14 Nov 2023 22:13:00 GMT"}, 0.0),
        # Measured against the response's Date, not the client's clock, when the server sends one.
        ({"Retry-After": "Tue, 14 Nov 2023 22:13:50 GMT", "Date": "Tue, 14 Nov 2023 22:13:45 GMT"}, 5.0),
        ({"Retry-After": "Tue, 14 Nov 2023 22:13:50 -0000"}, 30.0),
    ],
)
def test_retry_after(headers, expected):
    assert parse_retry_after(httpx.Headers(headers), NOW) == expected


@pytest.mark.parametrize(
    ("headers", "expected"),
    [
        # Not finite, or not a number as a header writes one: None, the caller's usual backoff.
        ({"Retry-After": "NaN"}, None),
        ({"Retry-After": "-nan"}, None),
        ({"Retry-After": "inf"}, None),
        ({"Retry-After": "-Infinity"}, None),
        ({"Retry-After": "1e400"}, None),
        ({"Retry-After": "1_0"}, None),
        ({"Retry-After": "0x10"}, None),
        ({"Retry-After": ""}, None),
        ({"Retry-After": "7 seconds"}, None),
        # Numbers: a sign, a fraction, an exponent; negatives are no wait; huge is left to the caller's cap.
        ({"Retry-After": "+5"}, 5.0),
        ({"Retry-After": "-0.5"}, 0.0),
        ({"Retry-After": "1e308"}, 1e308),
        ({"Retry-After": ".5"}, 0.5),
        # Dates that are no date, or beyond any clock: None.
        ({"Retry-After": "Tue, 32 Nov 2023 22:13:50 GMT"}, None),
        ({"Retry-After": "Tue, 14 Nov 99999 22:13:50 GMT"}, None),
        ({"Retry-After": "Tue, 14 Nov 2023 25:13:50 GMT"}, None),
        # A Date header that is no date: the caller's clock.
        ({"Retry-After": "Tue, 14 Nov 2023 22:13:50 GMT", "Date": "yesterday"}, 30.0),
    ],
)
def test_retry_after_refuses_what_is_no_wait(headers, expected):
    assert parse_retry_after(httpx.Headers(headers), NOW) == expected


def test_the_client_and_the_gateway_share_one_parser():
    import dailies.retry_after as shared
    import dailies.service.gateway.forwarding as gateway

    assert parse_retry_after is shared.parse_retry_after is gateway.parse_retry_after


def _response(status: int, headers: dict[str, str] | None = None) -> httpx.Response:
    return httpx.Response(status, headers=headers)


def test_retry_delay_stops_after_max_retries():
    policy = RetryPolicy(max_retries=2)
    assert retry_delay(0, policy, lambda: 1.0, NOW, response=_response(503)) == 0.5
    assert retry_delay(1, policy, lambda: 1.0, NOW, response=_response(503)) == 1.0
    assert retry_delay(2, policy, lambda: 1.0, NOW, response=_response(503)) is None


def test_retry_delay_without_a_response_is_backoff():
    assert retry_delay(0, RetryPolicy(), lambda: 0.5, NOW) == 0.25


def test_retry_delay_honours_and_caps_retry_after():
    policy = RetryPolicy(retry_after_cap=60.0)
    assert retry_delay(0, policy, lambda: 0.0, NOW, response=_response(429, {"Retry-After": "12"})) == 12.0
    assert retry_delay(0, policy, lambda: 0.0, NOW, response=_response(429, {"Retry-After": "600"})) == 60.0


def test_retry_delay_never_retries_a_client_error():
    assert retry_delay(0, RetryPolicy(), lambda: 0.5, NOW, response=_response(400)) is None
    assert retry_delay(0, RetryPolicy(), lambda: 0.5, NOW, response=_response(409)) is None


def test_negative_max_retries_is_refused():
    with pytest.raises(ValueError):
        RetryPolicy(max_retries=-1)
