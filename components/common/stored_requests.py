"""The prompt and inputs of tasks the dashboard did not submit (the SDK, the CLI, another dashboard):
a Dailies service returns a task's stored request (`/dailies/v1/tasks/{id}/request`, inputs as small
thumbnails). A stored request never changes, so each is asked once per connection and kept (an LRU of
a few thousand); a service without the endpoint (the real Ark) is remembered as such and not asked again.

One task's request is asked where it is shown (`stored_request`: the detail); a page of them (the Tasks
table's prompts, Review's cards, its reel and report) with `stored_requests`, side by side and within a
time budget.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor, wait

from dailies.client import Client, DailiesError, NotFoundError, UnsupportedEndpointError
from dailies.spec.models import TaskRequest

MAX_KEPT = 4000
_kept: OrderedDict[tuple[str, str], TaskRequest | None] = OrderedDict()
_unsupported: set[str] = set()
# Connections whose service has answered the endpoint (a request, or "no such task"): a page of
# requests is then asked all at once; before that one is asked alone, so a service without the
# endpoint gets one 404, not a page of them.
_supported: set[str] = set()
_lock = threading.Lock()

# How long a page waits for the requests it has not seen yet. The table is drawn then, whatever is
# missing; a read still under way lands in the cache for the page's next run (never asked twice at
# once), so a slow or failing service costs the page at most this on each run, never the client's
# timeouts and retries.
WAIT_S = 2.0
# A few reads at once: each is a small HTTP request, waiting on the service with the GIL free.
_askers = ThreadPoolExecutor(max_workers=4, thread_name_prefix="dailies-request")
_asking: dict[tuple[str, str], Future] = {}
_asking_lock = threading.Lock()
_UNASKED = object()


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
    _supported.add(cache_id)
    with _lock:
        _kept[key] = found
        while len(_kept) > MAX_KEPT:
            _kept.popitem(last=False)
    return found


def stored_requests(client: Client | None, cache_id: str, task_ids: Iterable[str],
                    wait_s: float | None = None) -> dict[str, TaskRequest]:
    """The stored requests of these tasks that are known, by task id: those asked before, and those the
    service gives within `wait_s` (WAIT_S unless said; asked side by side). A task without one, or whose
    read failed or is still under way, is left out; nothing here raises (a page shows its rows without
    them)."""
    wait_s = WAIT_S if wait_s is None else wait_s
    if client is None or cache_id in _unsupported:
        return {}
    found: dict[str, TaskRequest] = {}
    missing: list[str] = []
    with _lock:
        for task_id in dict.fromkeys(task_ids):
            known = _kept.get((cache_id, task_id), _UNASKED)
            if known is _UNASKED:
                missing.append(task_id)
            elif known is not None:
                _kept.move_to_end((cache_id, task_id))
                found[task_id] = known
    if not missing:
        return found
    deadline = time.monotonic() + wait_s
    asked: dict[str, Future] = {}
    if cache_id not in _supported:
        asked[missing[0]] = _ask(client, cache_id, missing[0])
        wait(asked.values(), timeout=wait_s)
        if cache_id not in _supported:  # no such endpoint, no answer, or none yet: the rest wait
            return found | _answers(asked)
        missing = missing[1:]
    asked |= {task_id: _ask(client, cache_id, task_id) for task_id in missing}
    wait(asked.values(), timeout=max(0.0, deadline - time.monotonic()))
    return found | _answers(asked)


def _ask(client: Client, cache_id: str, task_id: str) -> Future:
    """The read of this task's request: the one under way if there is one (a refresh that comes before
    a slow answer does not ask again)."""
    key = (cache_id, task_id)
    with _asking_lock:
        future = _asking.get(key)
        if future is not None:
            return future
        future = _asking[key] = _askers.submit(stored_request, client, cache_id, task_id)
    # Outside the lock: a read done already runs the callback here, and it takes the lock.
    future.add_done_callback(lambda done: _forget_asking(key, done))
    return future


def _forget_asking(key: tuple[str, str], done: Future) -> None:
    with _asking_lock:
        if _asking.get(key) is done:
            del _asking[key]


def _answers(asked: dict[str, Future]) -> dict[str, TaskRequest]:
    """The requests among these reads that have come back."""
    out: dict[str, TaskRequest] = {}
    for task_id, future in asked.items():
        # stored_request turns the service's answers into None; anything else (a client closed by a
        # change of connection) is no prompt for this row, not a broken page.
        if future.done() and future.exception() is None and future.result() is not None:
            out[task_id] = future.result()
    return out


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
