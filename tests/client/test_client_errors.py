"""Each HTTP status maps to its error class, carrying the fields of the error body."""

from __future__ import annotations

import httpx
import pytest

from dailies import client as dc
from dailies.client import errors

from .client_fakes import ScriptedServer, error_body, reply

STATUS_CASES = [
    (400, dc.BadRequestError, "InvalidParameter", "BadRequest", "content[1].image_url"),
    (401, dc.AuthenticationError, "AuthenticationError", "Unauthorized", None),
    (403, dc.PermissionDeniedError, "AccessDenied", "Forbidden", None),
    (404, dc.NotFoundError, "NotFound.Task", "NotFound", None),
    (409, dc.ConflictError, "InvalidAction.RunningTaskDeletion", "Conflict", None),
    (413, dc.RequestTooLargeError, "RequestEntityTooLarge", "RequestEntityTooLarge", None),
    (422, dc.UnprocessableEntityError, "InvalidParameter", "UnprocessableEntity", "model"),
    (429, dc.RateLimitError, "QuotaExceeded", "TooManyRequests", None),
    (500, dc.InternalServerError, "InternalServiceError", "InternalServerError", None),
    (503, dc.InternalServerError, "ServiceUnavailable", "ServiceUnavailable", None),
]


@pytest.mark.parametrize(("status", "cls", "code", "type_", "param"), STATUS_CASES)
def test_each_status_raises_its_class_with_the_body_fields(make_client, status, cls, code, type_, param):
    body = error_body(code, type_, param, request_id="from-message")
    server = ScriptedServer(reply(status, body, headers={"X-Request-Id": "req-abc"}))
    client = make_client(server, max_retries=0)

    with pytest.raises(cls) as caught:
        client.tasks.get("cgt-20250101000000-abcde")

    exc = caught.value
    assert isinstance(exc, dc.APIStatusError) and isinstance(exc, dc.DailiesError)
    assert exc.status_code == status
    assert (exc.code, exc.type, exc.param) == (code, type_, param)
    assert exc.request_id == "req-abc"  # the header wins over the message
    assert exc.body == body
    assert exc.message == body["error"]["message"]
    assert exc.response.status_code == status
    assert exc.request is not None and exc.request.method == "GET"
    assert code in str(exc)


def test_request_id_falls_back_to_the_message():
    response = httpx.Response(404, json=error_body("NotFound.Task", "NotFound", request_id="0217abc"),
                              request=httpx.Request("GET", "http://x/api/v3/contents/generations/tasks/a"))
    assert errors.status_error_for(response).request_id == "0217abc"


def test_request_id_in_message_is_matched_whatever_the_case():
    body = {"error": {"message": "bad. Request id: 0217xyz.", "type": "BadRequest", "code": "X"}}
    response = httpx.Response(400, json=body, request=httpx.Request("GET", "http://x/"))
    assert errors.status_error_for(response).request_id == "0217xyz"


def test_a_status_without_its_own_class_is_a_plain_status_error():
    response = httpx.Response(405, json=error_body("MethodNotAllowed", "MethodNotAllowed"),
                              request=httpx.Request("PUT", "http://x/"))
    exc = errors.status_error_for(response)
    assert type(exc) is dc.APIStatusError
    assert exc.code == "MethodNotAllowed"


def test_a_non_json_error_body_still_gives_the_error():
    response = httpx.Response(502, text="<html>Bad Gateway</html>", request=httpx.Request("GET", "http://x/"))
    exc = errors.status_error_for(response)
    assert isinstance(exc, dc.InternalServerError)
    assert exc.code is None and exc.param is None and exc.type is None and exc.request_id is None
    assert exc.body == "<html>Bad Gateway</html>"
    assert "502" in exc.message and "Bad Gateway" in exc.message


def test_json_that_is_not_the_error_shape_is_tolerated():
    response = httpx.Response(400, json={"detail": "nope"}, request=httpx.Request("GET", "http://x/"))
    exc = errors.status_error_for(response)
    assert isinstance(exc, dc.BadRequestError)
    assert exc.body == {"detail": "nope"} and exc.code is None
    assert "nope" in exc.message


def test_an_empty_error_body_is_tolerated():
    exc = errors.status_error_for(httpx.Response(500, request=httpx.Request("GET", "http://x/")))
    assert isinstance(exc, dc.InternalServerError)
    assert exc.message == "HTTP 500 Internal Server Error"


def test_timeouts_and_other_transport_errors_map_to_connection_errors():
    request = httpx.Request("GET", "http://x/")
    timeout = errors.connection_error_for(httpx.ReadTimeout("slow", request=request))
    refused = errors.connection_error_for(httpx.ConnectError("refused", request=request))
    assert type(timeout) is dc.APITimeoutError and isinstance(timeout, dc.APIConnectionError)
    assert type(refused) is dc.APIConnectionError
    assert refused.request is request
    assert errors.connection_error_for(httpx.ConnectError("no request")).request is None


def test_the_error_tree():
    assert issubclass(dc.APIError, dc.DailiesError)
    assert issubclass(dc.APIStatusError, dc.APIError)
    assert issubclass(dc.APIConnectionError, dc.APIError)
    assert issubclass(dc.APITimeoutError, dc.APIConnectionError)
    assert issubclass(dc.APIResponseValidationError, dc.APIError)
    for cls in (dc.MissingAPIKeyError, dc.RequestValidationError, dc.WaitTimeout):
        assert issubclass(cls, dc.DailiesError) and not issubclass(cls, dc.APIError)
    for _, cls, *_ in STATUS_CASES:
        assert issubclass(cls, dc.APIStatusError)


def test_an_error_body_missing_a_field_keeps_the_others():
    body = {"error": {"message": "model not enabled. Request ID: r1", "type": "Forbidden"}}
    exc = errors.status_error_for(httpx.Response(403, json=body, request=httpx.Request("POST", "http://x/")))
    assert exc.message == body["error"]["message"]
    assert (exc.type, exc.code, exc.param, exc.request_id) == ("Forbidden", None, None, "r1")
