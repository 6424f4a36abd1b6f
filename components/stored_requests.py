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


def kept_request(cache_id: str, task_id: str) -> TaskRequest | None:
    """The task's stored request if it was asked already, without asking (for labels drawn before the
    cards that ask)."""
    with _lock:
        return _kept.get((cache_id, task_id))


# The parameters of a stored request that a request sent again carries (the rest is content and model).
_PARAMETERS = ("resolution", "ratio", "duration", "frames", "seed", "camera_fixed", "watermark", "generate_audio",
               "return_last_frame", "service_tier", "execution_expires_after", "draft", "tools", "safety_identifier")


def request_of(stored: TaskRequest) -> dict | None:
    """The request to open in Compose from a task's stored request (a rerun or an edit of a task made
    outside the dashboard); None when an input was inline: only its thumbnail came back."""
    content: list[dict] = []
    for item in stored.content:
        if item.type == "text":
            content.append({"type": "text", "text": item.text or ""})
        elif item.type == "draft_task" and item.draft_task is not None:
            content.append({"type": "draft_task", "draft_task": {"id": item.draft_task.id}})
        else:
            media = getattr(item, item.type, None)
            if media is None or media.inline is not None or not media.url:
                return None
            content.append({"type": item.type, item.type: {"url": media.url}, **({"role": item.role} if item.role
                                                                                 else {})})
    parameters = {name: getattr(stored, name) for name in _PARAMETERS if getattr(stored, name, None) is not None}
    return {"model": stored.model, "content": content, **parameters}
