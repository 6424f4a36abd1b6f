"""The prompt and inputs of tasks the dashboard did not submit (the SDK, the CLI, another dashboard):
a Dailies service returns a task's stored request (`/dailies/v1/tasks/{id}/request`, inputs as small
thumbnails). A stored request never changes, so each is asked once per connection and kept (an LRU of
a few thousand); a service without the endpoint (the real Ark) is remembered as such and not asked again.
"""

from __future__ import annotations

import threading
from collections import OrderedDict

from dailies.client import Client, DailiesError, NotFoundError, UnsupportedEndpointError
from dailies.spec.models import TaskRequest

MAX_KEPT = 4000
_kept: OrderedDict[tuple[str, str], TaskRequest | None] = OrderedDict()
_unsupported: set[str] = set()
_lock = threading.Lock()


def stored_request(client: Client | None, cache_id: str, task_id: str) -> TaskRequest | None:
    """The task's stored request, or None (not a Dailies service, no such task, no answer now)."""
    if client is None or cache_id in _unsupported:
        return None
    key = (cache_id, task_id)
    with _lock:
        if key in _kept:
            _kept.move_to_end(key)
            return _kept[key]
    try:
        found: TaskRequest | None = client.task_request(task_id)
    except UnsupportedEndpointError:
        _unsupported.add(cache_id)
        return None
    except NotFoundError:
        found = None  # gone, or never this project's: remembered, it will not come back
    except DailiesError:
        return None  # no answer now: asked again next time
    with _lock:
        _kept[key] = found
        while len(_kept) > MAX_KEPT:
            _kept.popitem(last=False)
    return found
