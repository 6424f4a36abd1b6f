"""Every exception the client raises, and the one function that maps an HTTP status to its class.

    DailiesError
     ├── MissingAPIKeyError            no key in the constructor nor in ARK_API_KEY
     ├── RequestValidationError        a request refused locally, before it was sent (.errors)
     │    └── RequestRuleError         ... by the catalog's rules for its model (.problems)
     ├── WaitTimeout                   `wait()` passed its deadline (.task_id, .last)
     └── APIError                      anything that went wrong talking to the service (.request)
          ├── APIConnectionError       no response: refused, reset, DNS, TLS ...
          │    └── APITimeoutError     no response in time
          ├── APIResponseValidationError   a 2xx whose body is not the documented shape
          └── APIStatusError           a non-2xx response (.status_code, .request_id, .body,
               │                        .code, .param, .type, .response)
               ├── BadRequestError            400
               ├── AuthenticationError        401
               ├── PermissionDeniedError      403 (also an expired result URL)
               ├── NotFoundError              404
               │    └── UnsupportedEndpointError  a Dailies endpoint the service does not have
               ├── ConflictError              409
               ├── RequestTooLargeError       413
               ├── UnprocessableEntityError   422
               ├── RateLimitError             429
               └── InternalServerError        >= 500

A status without a class of its own (405, 408, 3xx ...) is a plain `APIStatusError`.
The error body is `{"error": {"message", "type", "param", "code"}}` (spec section 7, `ErrorResponse`);
a body that is not that shape (a proxy's HTML page, an empty body, a field missing) still gives the
error, with what could not be read left None.
"""

from __future__ import annotations

import re
from typing import Any

import httpx
from pydantic import ValidationError

from dailies.spec.models import ErrorDetail, TaskRecord
from dailies.spec.problems import Problem

__all__ = [
    "DailiesError",
    "MissingAPIKeyError",
    "RequestValidationError",
    "RequestRuleError",
    "WaitTimeout",
    "APIError",
    "APIConnectionError",
    "APITimeoutError",
    "APIResponseTooLargeError",
    "APIResponseValidationError",
    "APIStatusError",
    "BadRequestError",
    "AuthenticationError",
    "PermissionDeniedError",
    "NotFoundError",
    "UnsupportedEndpointError",
    "ConflictError",
    "RequestTooLargeError",
    "UnprocessableEntityError",
    "RateLimitError",
    "InternalServerError",
    "status_error_for",
    "connection_error_for",
]

# The service ends every error message with "Request ID: <id>" (DESIGN.md section 3). A proxy in
# between may drop the X-Request-Id header, so the message is the fallback source; matched
# case-insensitively because "Request id: <id>" is spelled that way too.
_REQUEST_ID_IN_MESSAGE = re.compile(r"Request ID:\s*(\S+)", re.IGNORECASE)
# Enough of a non-JSON body to recognise it in a log line, not a whole HTML page.
_BODY_EXCERPT_CHARS = 300


class DailiesError(Exception):
    """Base of every exception raised by `dailies.client`."""


class MissingAPIKeyError(DailiesError):
    """No API key was given to the constructor and `ARK_API_KEY` is unset or empty."""


class RequestValidationError(DailiesError):
    """A request was refused locally because it does not match the request model.

    `errors` is pydantic's list of problems, each with its `loc` (field path) and `msg`.
    """

    def __init__(self, message: str, errors: list[dict[str, Any]]) -> None:
        super().__init__(message)
        self.errors = errors

    @classmethod
    def from_pydantic(cls, what: str, exc: ValidationError) -> RequestValidationError:
        # Worded and named as the service's `param` and message say it (`content[1].role: 'hero' is not
        # allowed; ...`, not pydantic's `content.1.role: Input should be ...`): one rule for both.
        from ..spec.validation import problems_from_validation_error

        lines = [str(problem) if problem.path else f"(root): {problem.message}"
                 for problem in problems_from_validation_error(exc)]
        # Plain dicts, as `errors` is typed (pydantic's are TypedDicts, dicts at run time too).
        errors: list[dict[str, Any]] = [{**error} for error in exc.errors(include_url=False)]
        return cls(f"invalid {what}: " + "; ".join(lines), errors)


class RequestRuleError(RequestValidationError):
    """A create request that fits the schema but breaks the catalog's rules for its model (a
    combination the model does not take, a bad text command ...), refused before it was sent.

    Raised only for a model id in the catalog (`dailies.spec.catalog`); endpoint ids and unknown
    ids go to the service unchecked. `problems` lists every problem (`.path` is the field path the
    service would name as `param`, e.g. `content[1].role`); `errors` holds the same as dicts with
    `loc`, `msg`, `param` and `code`, the shape of `RequestValidationError.errors`.
    """

    def __init__(self, message: str, problems: list[Problem]) -> None:
        super().__init__(message, [_problem_dict(p) for p in problems])
        self.problems = problems

    @classmethod
    def from_problems(cls, model: str, problems: list[Problem]) -> RequestRuleError:
        return cls(f"invalid create request for {model}: " + "; ".join(str(p) for p in problems), problems)


def _problem_dict(problem: Problem) -> dict[str, Any]:
    # "content[1].image_url.url" -> ("content", 1, "image_url", "url"), as pydantic's `loc` reads.
    loc = tuple(int(part) if part.isdigit() else part for part in re.findall(r"[^.\[\]]+", problem.path))
    return {"loc": loc, "msg": problem.message, "param": problem.path, "code": problem.code}


class WaitTimeout(DailiesError):
    """`wait()` reached its deadline before the task reached a terminal status.

    `last` is the last record seen (None when not even one poll answered).
    """

    def __init__(self, task_id: str, timeout: float, last: TaskRecord | None) -> None:
        status = last.status if last is not None else "unknown"
        super().__init__(f"task {task_id} still {status} after {timeout:g} s")
        self.task_id = task_id
        self.timeout = timeout
        self.last = last


class APIError(DailiesError):
    """Something went wrong talking to the service. `request` is the request that failed."""

    def __init__(self, message: str, *, request: httpx.Request | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.request = request


class APIConnectionError(APIError):
    """The request got no response at all (after the retries it was allowed)."""


class APITimeoutError(APIConnectionError):
    """The request got no response within the timeout (after the retries it was allowed)."""


class APIResponseTooLargeError(APIError):
    """An answer whose body passed `limit` bytes (decoded) before it ended: nothing of it is kept.
    No service of this API answers so much; a service that does is not one to trust with memory."""

    def __init__(self, message: str, *, request: httpx.Request, status_code: int, limit: int) -> None:
        super().__init__(message, request=request)
        self.status_code = status_code
        self.limit = limit


class APIResponseValidationError(APIError):
    """A 2xx response whose body is not the documented JSON shape."""

    def __init__(self, message: str, *, response: httpx.Response, body: Any = None) -> None:
        super().__init__(message, request=response.request)
        self.response = response
        self.status_code = response.status_code
        self.body = body


class APIStatusError(APIError):
    """A non-2xx response. The fields of the error body are attributes; each may be None."""

    def __init__(
        self,
        message: str,
        *,
        response: httpx.Response,
        body: Any,
        code: str | None = None,
        param: str | None = None,
        type: str | None = None,
        request_id: str | None = None,
    ) -> None:
        super().__init__(message, request=response.request)
        self.response = response
        self.status_code = response.status_code
        self.body = body
        self.code = code
        self.param = param
        self.type = type
        self.request_id = request_id

    def __str__(self) -> str:
        parts = [f"{self.status_code}"]
        if self.code:
            parts.append(self.code)
        text = f"[{' '.join(parts)}] {self.message}"
        if self.param:
            text += f" (param: {self.param})"
        return text


class BadRequestError(APIStatusError):
    """400: a missing or invalid parameter; `param` names the field path."""


class AuthenticationError(APIStatusError):
    """401: missing, malformed or unknown bearer token."""


class PermissionDeniedError(APIStatusError):
    """403: model not enabled for this key, or a result URL past its expiry."""


class NotFoundError(APIStatusError):
    """404: unknown task (or one of another project), model or endpoint."""


class UnsupportedEndpointError(NotFoundError):
    """404 for an endpoint of Dailies' own API (`/dailies/v1/...`) that the service does not have: the
    real Ark, or an older Dailies. Raised where the endpoint's own 404 can be told apart (its
    `NotFound.Task` for an unknown task); a `NotFoundError`, so code catching that still does."""

    @classmethod
    def of(cls, error: APIStatusError) -> UnsupportedEndpointError:
        return cls(error.message, response=error.response, body=error.body, code=error.code,
                   param=error.param, type=error.type, request_id=error.request_id)


class ConflictError(APIStatusError):
    """409: e.g. deleting a running task, or an idempotency key reused with another body."""


class RequestTooLargeError(APIStatusError):
    """413: the request body is over the limit (64 MB)."""


class UnprocessableEntityError(APIStatusError):
    """422: a body the server could parse but not accept."""


class RateLimitError(APIStatusError):
    """429: too many requests, or too many queued tasks in one project."""


class InternalServerError(APIStatusError):
    """>= 500: a failure on the server's side."""


_BY_STATUS: dict[int, type[APIStatusError]] = {
    400: BadRequestError,
    401: AuthenticationError,
    403: PermissionDeniedError,
    404: NotFoundError,
    409: ConflictError,
    413: RequestTooLargeError,
    422: UnprocessableEntityError,
    429: RateLimitError,
}


def status_error_for(response: httpx.Response) -> APIStatusError:
    """The exception for a non-2xx response, with the error body's fields. The body must be read."""
    status = response.status_code
    cls = _BY_STATUS.get(status) or (InternalServerError if status >= 500 else APIStatusError)
    body = _json_or_text(response)
    fields = _error_fields(body)
    message = fields.get("message")
    if message is None:
        excerpt = body if isinstance(body, str) else repr(body)
        message = f"HTTP {status} {response.reason_phrase}".rstrip()
        if excerpt:
            message += f": {excerpt[:_BODY_EXCERPT_CHARS]}"
    request_id = response.headers.get("x-request-id") or _request_id_in(message)
    return cls(
        message,
        response=response,
        body=body,
        code=fields.get("code"),
        param=fields.get("param"),
        type=fields.get("type"),
        request_id=request_id,
    )


def connection_error_for(exc: httpx.TransportError) -> APIConnectionError:
    """The exception for a request that got no response."""
    request = _request_of(exc)
    if isinstance(exc, httpx.TimeoutException):
        return APITimeoutError(f"request timed out: {exc!r}", request=request)
    return APIConnectionError(f"connection failed: {exc!r}", request=request)


def _json_or_text(response: httpx.Response) -> Any:
    try:
        return response.json()
    except ValueError:  # json.JSONDecodeError and UnicodeDecodeError are both ValueErrors
        return response.text


def _error_fields(body: Any) -> dict[str, str]:
    """The string fields of `{"error": {...}}` (`ErrorResponse`), each taken if present, so a body
    that misses one field (a gateway's, an older server's) still gives the others."""
    error = body.get("error") if isinstance(body, dict) else None
    if not isinstance(error, dict):
        return {}
    return {name: value for name in ErrorDetail.model_fields if isinstance(value := error.get(name), str)}


def _request_id_in(message: str) -> str | None:
    match = _REQUEST_ID_IN_MESSAGE.search(message)
    return match.group(1).rstrip(".") if match else None


def _request_of(exc: httpx.TransportError) -> httpx.Request | None:
    # httpx raises RuntimeError from `.request` when the exception was built without one.
    try:
        return exc.request
    except RuntimeError:
        return None
