"""The member names of a connection's project, from a Dailies service (`/dailies/v1/members`), for
`@name` completion: read in the background, kept a minute per connection for every session of the
process, never waited for (a page draws with the names it has; a service that does not answer, or
is not a Dailies service, leaves the journal's names alone)."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor

from dailies.client import Client, DailiesError, UnsupportedEndpointError

MAX_AGE_S = 60
_known: dict[str, tuple[float, list[str]]] = {}
_unsupported: set[str] = set()
_asking: set[str] = set()
_lock = threading.Lock()
_askers = ThreadPoolExecutor(max_workers=1, thread_name_prefix="dailies-members")


def members(client: Client | None, cache_id: str) -> list[str]:
    """The names known now (maybe none yet), a read started when they are missing or a minute old."""
    if client is None or cache_id in _unsupported:
        return []
    with _lock:
        at, names = _known.get(cache_id, (float("-inf"), []))
        if time.monotonic() - at >= MAX_AGE_S and cache_id not in _asking:
            _asking.add(cache_id)
            _askers.submit(_ask, client, cache_id)
    return names


def _ask(client: Client, cache_id: str) -> None:
    try:
        names = client.members().members
    except UnsupportedEndpointError:
        _unsupported.add(cache_id)
        return
    except DailiesError:
        return  # no answer now: asked again on a later run
    finally:
        with _lock:
            _asking.discard(cache_id)
    with _lock:
        _known[cache_id] = (time.monotonic(), names)


def wait_for_reads(timeout: float = 5.0) -> None:
    """Until no read is under way (tests)."""
    deadline = time.monotonic() + timeout
    while _asking and time.monotonic() < deadline:
        time.sleep(0.01)
