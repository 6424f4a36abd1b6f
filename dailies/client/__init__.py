"""A typed HTTP client of the video task API (the local service, or the real Ark / ModelArk one).

    from dailies.client import Client
    from dailies.spec.statuses import TaskStatus

    with Client() as client:            # ARK_API_KEY, ARK_BASE_URL, else http://127.0.0.1:8000/api/v3
        created = client.tasks.create({"model": "doubao-seedance-1-5-pro-251215",
                                       "content": [{"type": "text", "text": "a red kite"}]})
        record = client.wait(created.id, timeout=600)
        if record.status == TaskStatus.SUCCEEDED:
            client.download(record.content.video_url, "kite.mp4")

`AsyncClient` is the same API with `await` (and `async for` over `iter_tasks`). Errors are in
`dailies.client.errors` and re-exported here; the tree is drawn in that module's docstring.
"""

from . import errors
from ._base import (
    API_KEY_ENV,
    BASE_URL_ENV,
    DEFAULT_BASE_URL,
    IDEMPOTENCY_HEADER,
    base_url_problem,
    environment_defaults,
    normalize_base_url,
)
from ._clock import Clock, SystemClock
from ._retry import RetryPolicy
from .async_ import AsyncClient, AsyncTasks
from .errors import *  # noqa: F403 - the error tree, listed once in `errors.__all__`
from .sync import Client, Tasks

__all__ = [
    "Client",
    "AsyncClient",
    "Tasks",
    "AsyncTasks",
    "Clock",
    "SystemClock",
    "RetryPolicy",
    "API_KEY_ENV",
    "BASE_URL_ENV",
    "DEFAULT_BASE_URL",
    "IDEMPOTENCY_HEADER",
    "base_url_problem",
    "environment_defaults",
    "normalize_base_url",
    *errors.__all__,
]
