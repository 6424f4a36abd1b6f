"""`create_app(settings)`: the FastAPI application of the task service.

Nothing is built at import time: the engine, the workers and the callback queue (`Services`,
services.py) belong to the app made here, started and stopped with its lifespan.
"""

from __future__ import annotations

import logging
import time
import uuid
from contextlib import asynccontextmanager

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.datastructures import MutableHeaders
from starlette.exceptions import HTTPException as StarletteHTTPException
from starlette.routing import Match
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from dailies import __version__, log_format
from dailies.generator.protocol import Generator
from dailies.service.api import live_api, notifications_api, own_api, upstream_callbacks
from dailies.service.api.openapi import install_openapi
from dailies.service.api.routes import router
from dailies.service.errors import ApiError, dependency_unavailable
from dailies.service.gateway.wiring import GatewayFactory
from dailies.service.node.services import Services
from dailies.service.runtime.faults import dependency_down, describe
from dailies.service.runtime.metrics import RequestDurations, route_template
from dailies.service.settings import Settings

log = logging.getLogger("dailies.http")


def create_app(settings: Settings, generator: Generator | None = None, start_background: bool = True,
               grace_period: float = 0.0, gateway: GatewayFactory | None = None) -> FastAPI:
    """The service app. `start_background=False` leaves workers and callback delivery stopped
    (tests drive them by hand). At shutdown, running renders get `grace_period` seconds to finish
    before they are put back in the queue. `generator`, `gateway`: as `Services` takes them."""
    services = Services(settings, generator, gateway)

    @asynccontextmanager
    async def lifespan(app: FastAPI):
        if start_background:
            services.start()
        try:
            yield
        finally:
            if start_background:
                services.stop(grace_period)

    app = FastAPI(
        title="Dailies video task service",
        version=__version__,
        description="Asynchronous video generation tasks (Ark-compatible `/api/v3`). Results are "
                    "rendered by the Dailies preview renderer, not by a real model.",
        lifespan=lifespan,
        # `/tasks/` is not `/tasks`: a 404 in the spec's error shape, not an empty 307 (a redirected
        # DELETE met a 405, and a redirect drops the body of a POST in some clients).
        redirect_slashes=False,
    )
    app.state.services = services
    app.include_router(router)
    app.include_router(own_api.router)
    app.include_router(notifications_api.router)
    app.include_router(live_api.router)
    app.include_router(upstream_callbacks.router)
    install_openapi(app)
    _install_error_handlers(app)
    app.add_middleware(OutageAnswers)  # inside the request log (added later: outermost)
    app.add_middleware(RequestLog, enabled=settings.log_requests, durations=services.metrics.serve_requests())
    return app


def _methods_of_path(request: Request) -> list[str]:
    """The methods some route takes on this request's path: each asked of the router as if the request
    had used it (routes may be nested in included routers, which answer for their own)."""
    return [method for method in _METHODS
            if any(route.matches({**request.scope, "method": method})[0] == Match.FULL
                   for route in request.app.router.routes)]


_METHODS = ("GET", "HEAD", "POST", "PUT", "PATCH", "DELETE")


def loggable(path: str) -> str:
    """A request's path as one line of the log says it: the path is percent-decoded, so `%0A` would be
    a line break and let anyone without a key write lines ("... DELETE ... -> 200") into the log an
    operator reads to learn who did what; control characters are written escaped."""
    return path if path.isprintable() else repr(path)[1:-1]


def _request_id(request: Request) -> str:
    return getattr(request.state, "request_id", None) or uuid.uuid4().hex


def _error_response(request: Request, error: ApiError) -> JSONResponse:
    request_id = _request_id(request)
    services = getattr(request.app.state, "services", None)
    if services is not None and error.counted:
        services.metrics.error_answers.labels(str(error.status), error.code).inc()
    headers = {"X-Request-Id": request_id}
    if error.status == 409:
        # A conflict (deleting a running or cancelled task) is the same on every try: the official
        # SDK would retry it twice (and a gateway send each retry's DELETE upstream) unless told not to.
        headers["x-should-retry"] = "false"
    return JSONResponse(error.body(request_id), status_code=error.status, headers=headers)


def _install_error_handlers(app: FastAPI) -> None:
    @app.exception_handler(ApiError)
    async def _api_error(request: Request, exc: ApiError):
        response = _error_response(request, exc)
        response.headers.update(exc.headers())
        return response

    @app.exception_handler(RequestValidationError)
    async def _validation(request: Request, exc: RequestValidationError):
        first = exc.errors()[0] if exc.errors() else {"loc": (), "msg": "invalid request"}
        param = ".".join(str(p) for p in first["loc"][1:]) or "body"
        return _error_response(request, ApiError(400, "InvalidParameter", f"{param}: {first['msg']}", param))

    @app.exception_handler(StarletteHTTPException)
    async def _http(request: Request, exc: StarletteHTTPException):
        if exc.status_code == 404:
            error = ApiError(404, "NotFound", f"No route for {request.method} {request.url.path}.", "")
        elif exc.status_code == 405:
            error = ApiError(405, "MethodNotAllowed", f"{request.method} is not allowed on {request.url.path}.", "")
        else:
            error = ApiError(exc.status_code, "InvalidParameter", str(exc.detail), "")
        response = _error_response(request, error)
        if exc.status_code == 405:
            # RFC 9110 requires Allow. Starlette's names only the first route of the path, and each
            # method here is a route of its own (GET and POST of the tasks): every route of the path.
            response.headers["Allow"] = ", ".join(_methods_of_path(request))
        return response

    @app.exception_handler(Exception)
    async def _unexpected(request: Request, exc: Exception):
        down = dependency_down(exc)
        if down is not None:  # OutageAnswers answers these first; kept for one raised outside it
            return _outage_response(request, down, exc)
        log.exception("unexpected error on %s %s", request.method, loggable(request.url.path))
        return _error_response(request, ApiError(500, "InternalServiceError",
                                                 "The service failed unexpectedly; the error is logged.", ""))


def _outage_response(request: Request, down, exc: Exception) -> JSONResponse:
    """Not a bug of ours and not the client's: a 503 that clients retry, and nothing lost (a create
    either committed or did not). The outage itself is logged once per state change (health.py)."""
    request.app.state.services.health.failed(down, exc)
    log.warning("%s %s: the %s does not answer (%s)", request.method, loggable(request.url.path), down, describe(exc))
    response = _error_response(request, dependency_unavailable({str(down): describe(exc)}))
    response.headers["Retry-After"] = "2"
    return response


class OutageAnswers:
    """A database or bucket that does not answer becomes the 503 it is here, inside the request log,
    rather than in the catch-all `Exception` handler: Starlette re-raises an exception after that
    handler has answered, and uvicorn then logged every 503 of an outage as "Exception in ASGI
    application" with its traceback (913 of them in a 24 s database stop). Anything else goes on up."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = False

        async def send_tracked(message: Message) -> None:
            nonlocal started
            started = started or message["type"] == "http.response.start"
            await send(message)

        try:
            await self.app(scope, receive, send_tracked)
        except Exception as exc:
            down = dependency_down(exc)
            if down is None or started:
                raise
            await _outage_response(Request(scope, receive), down, exc)(scope, receive, send)


class RequestLog:
    """Gives every HTTP request an id (`request.state.request_id`, the `X-Request-Id` header unless
    the response set one), times it into `durations` (metrics.RequestDurations: by route template and
    status) and, when enabled, logs one line per answered request.

    A pure ASGI middleware: `@app.middleware("http")` (BaseHTTPMiddleware) runs each request in
    an extra task with memory streams, measured at 0.3 to 1 ms of CPU per request, more than the
    create's own work."""

    def __init__(self, app: ASGIApp, enabled: bool, durations: RequestDurations | None = None) -> None:
        self.app = app
        self.enabled = enabled
        self.durations = durations

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = uuid.uuid4().hex[:20]
        scope.setdefault("state", {})["request_id"] = request_id
        log_format.request_id.set(request_id)  # lines logged for it carry it (a task per request: no reset)
        started = time.perf_counter()
        status = 0

        async def send_with_id(message: Message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
                headers = MutableHeaders(scope=message)
                if "x-request-id" not in headers:
                    headers.append("X-Request-Id", request_id)
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            # Timed here, outermost but for the 500 handler: an exception going on up is the 500
            # that handler answers, and a request with no answer started is counted as one too.
            if self.durations is not None:
                self.durations.observe(scope["method"], route_template(scope), status or 500,
                                       time.perf_counter() - started)
        # An exception propagating from here is answered (and logged) by the 500 handler instead.
        if self.enabled and status:
            log.info("%s %s -> %d in %.1f ms (request %s)", scope["method"], loggable(scope["path"]), status,
                     (time.perf_counter() - started) * 1000, request_id)
