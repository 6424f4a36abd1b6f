"""The error body of spec section 7 and the statuses of DESIGN.md section 3, in one place.

Routes and services raise `ApiError`; one handler turns it into
`{"error": {"message", "type", "param", "code"}}` with the request id at the end of the message
and in the `X-Request-Id` header.
"""

from __future__ import annotations

from dailies.spec.problems import Problem

STATUS_TYPES = {
    400: "BadRequest",
    401: "Unauthorized",
    403: "Forbidden",
    404: "NotFound",
    405: "MethodNotAllowed",
    409: "Conflict",
    413: "RequestEntityTooLarge",
    415: "UnsupportedMediaType",
    429: "TooManyRequests",
    500: "InternalServerError",
    503: "ServiceUnavailable",
}


class ApiError(Exception):
    # Counted in dailies_error_answers_total (a readiness probe's 503 is not a client's error).
    counted = True

    def __init__(self, status: int, code: str, message: str, param: str = "") -> None:
        super().__init__(message)
        self.status = status
        self.code = code
        self.message = message
        self.param = param

    @property
    def type(self) -> str:
        return STATUS_TYPES.get(self.status, "BadRequest")

    def headers(self) -> dict[str, str]:
        """Response headers the error comes with (Retry-After of a rate limit, for one)."""
        return {}

    def body(self, request_id: str) -> dict:
        return {"error": {
            "message": f"{_writable(self.message)} Request ID: {request_id}",
            "type": self.type,
            "param": _writable(self.param),
            "code": self.code,
        }}


class TryAgain(ApiError):
    """A 503 for something that may answer in a moment (a name server, a dependency): clients retry."""

    def __init__(self, message: str, param: str = "", retry_after: int = 2) -> None:
        super().__init__(503, "ServiceUnavailable", message, param)
        self.retry_after = retry_after

    def headers(self) -> dict[str, str]:
        return {"Retry-After": str(self.retry_after)}


def _writable(text: str) -> str:
    """The text with anything UTF-8 cannot encode (a lone surrogate echoed from a request)
    escaped, so an error about hostile input can always be written."""
    if text.isascii():
        return text
    return text.encode("utf-8", "backslashreplace").decode("utf-8")


def from_problems(problems: list[Problem]) -> ApiError:
    """A 400 for a request with problems: `param` names the first, the message lists them all."""
    first = problems[0]
    message = "; ".join(str(p) for p in problems)
    if not message.endswith("."):
        message += "."
    return ApiError(400, first.code, message, first.path)


def shown(value: str, limit: int = 80) -> str:
    """A value from a request as an error message quotes it: at most `limit` characters, so a
    100 KB id or model name is not sent (and logged) back whole."""
    return value if len(value) <= limit else f"{value[:limit]}… ({len(value):,} characters)"


def task_not_found(task_id: str) -> ApiError:
    return ApiError(404, "NotFound.Task", f"The task {shown(task_id)} was not found.", "id")


def dependency_unavailable(dependencies: dict[str, str]) -> ApiError:
    """503 while the database or the storage does not answer (readiness, or a request that needed
    it): `param` names the first, the message each with its reason. Clients retry a 503."""
    named = "; ".join(f"the {name} does not answer ({why})" for name, why in dependencies.items())
    return ApiError(503, "ServiceUnavailable", f"Not ready: {named}.", next(iter(dependencies), ""))


def unauthorized(why: str) -> ApiError:
    return ApiError(401, "AuthenticationError", why, "Authorization")
