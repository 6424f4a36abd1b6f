"""What a Dailies service's ledger charges for the tasks on a page (`client.charges`, `POST
/dailies/v1/charges`): the cost the Tasks table and the spend charts show for a task of a Dailies
service is that line, so it is what the team is billed (a gateway's task in its upstream region's
currency, 2.0 with a video input at its price, a task the upstream made but whose result could not be
taken at its estimate). The real Ark keeps no ledger: `charges` answers None there (its hosts are not
asked) and the caller prices the record itself (costs.record_cost).

One request per page run at most, for every row at once: a settled or released line never changes,
so it is kept (per connection, an LRU of a few thousand) and never asked again; a task without a
line is remembered as such; only reserved lines (a task still running, or held while a gateway's
upstream may bill it) are asked again, at most every HELD_MAX_AGE_S. A service without the endpoint
is remembered as such and not asked again.

The read runs beside the page and is waited for at most WAIT_S: a slow or failing service costs a
run that much, never the client's retries; an answer that comes later is kept for the next run.
"""

from __future__ import annotations

import logging
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from concurrent.futures import Future, ThreadPoolExecutor, wait

from components.common import catalogs
from dailies.client import Client, DailiesError, UnsupportedEndpointError
from dailies.spec.catalog import Region, region_of_host
from dailies.spec.prices import Charge

log = logging.getLogger(__name__)

MAX_KEPT = 4000
# A reserved line read this recently is taken as it is: two parts of one page run (the table, the
# charts) ask once between them.
HELD_MAX_AGE_S = 1.0
WAIT_S = 2.0

# (cache_id, task_id) -> (when read, its line); None: the ledger has none (remembered: a line is
# written with the create, so one missing now never comes).
_kept: OrderedDict[tuple[str, str], tuple[float, Charge | None]] = OrderedDict()
_unsupported: set[str] = set()
_lock = threading.Lock()
_reader = ThreadPoolExecutor(max_workers=2, thread_name_prefix="dailies-charges")
_reading: dict[str, Future] = {}  # per connection, the read under way: a run never starts a second one


def charges(client: Client | None, cache_id: str, task_ids: Iterable[str],
            wait_s: float | None = None) -> dict[str, Charge] | None:
    """The ledger's lines of these tasks that are known, by task id; None when the service keeps no
    ledger (the real Ark, an older Dailies) or there is no client. A task whose line is not known
    (no line, or the read failed or is still under way) is left out; nothing here raises."""
    if client is None or cache_id in _unsupported or region_of_host(client.base_url) is not None:
        return None  # the real Ark's hosts keep no ledger: not asked (nor sent the key for nothing)
    wait_s = WAIT_S if wait_s is None else wait_s
    ids = list(dict.fromkeys(task_ids))
    now = time.monotonic()
    with _lock:
        missing = [task_id for task_id in ids if _stale(_kept.get((cache_id, task_id)), now)]
    if missing:
        future = _read(client, cache_id, missing)
        wait([future], timeout=wait_s)
        if cache_id in _unsupported:
            return None
    return known(cache_id, ids)


def ask(client: Client | None, cache_id: str, task_ids: Iterable[str]) -> None:
    """Start reading the lines `charges` will want, without waiting (the page reads other things
    meanwhile)."""
    charges(client, cache_id, task_ids, wait_s=0)


def known(cache_id: str, task_ids: Iterable[str]) -> dict[str, Charge]:
    """The lines of these tasks read already, without asking."""
    found: dict[str, Charge] = {}
    with _lock:
        for task_id in task_ids:
            entry = _kept.get((cache_id, task_id))
            if entry is not None:
                _kept.move_to_end((cache_id, task_id))
                if entry[1] is not None:
                    found[task_id] = entry[1]
    return found


def billing_region(client: Client | None) -> Region | None:
    """The region whose prices bill this service's tasks, for pricing a record here where no line
    is known: its host's (the real Ark); else a gateway's upstream region as it says
    (`/dailies/v1/service`, asked once per few minutes); else None (billed as written)."""
    if client is None:
        return None
    by_host = region_of_host(client.base_url)
    if by_host is not None:
        return by_host
    upstream = catalogs.upstream_region(client)
    return Region(upstream) if upstream in {r.value for r in Region} else None


def _stale(entry: tuple[float, Charge | None] | None, now: float) -> bool:
    if entry is None:
        return True
    read_at, charge = entry
    return charge is not None and not charge.final and now - read_at > HELD_MAX_AGE_S


def _read(client: Client, cache_id: str, task_ids: list[str]) -> Future:
    """The read of these lines, or the one under way for this connection (its answer lands in the
    cache; ids it does not cover are asked on the next run)."""
    with _lock:
        future = _reading.get(cache_id)
        if future is None or future.done():
            future = _reading[cache_id] = _reader.submit(_ask, client, cache_id, task_ids)
    return future


def _ask(client: Client, cache_id: str, task_ids: list[str]) -> None:
    try:
        answer = client.charges(task_ids)
    except UnsupportedEndpointError:
        _unsupported.add(cache_id)
        return
    except DailiesError:  # no answer now: asked again on the next run
        return
    except Exception:  # e.g. a client closed by a change of connection: the rows are priced without lines
        log.warning("reading the ledger's lines failed", exc_info=True)
        return
    read_at = time.monotonic()
    with _lock:
        for task_id in task_ids:
            _kept[(cache_id, task_id)] = (read_at, answer.get(task_id))
            _kept.move_to_end((cache_id, task_id))
        while len(_kept) > MAX_KEPT:
            _kept.popitem(last=False)
