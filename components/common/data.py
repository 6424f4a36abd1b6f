"""The dashboard's reads of the task list, in one place, cached and shared by the sessions of one
connection: the Tasks table, the charts, the Review grid and Compose's pickers all list through here.

Every entry is keyed by the current connection's `cache_id` (base URL + key fingerprint, never the
key itself), so two keys never share an entry, even on one service; the connection's client, from
the same session state, rides along unhashed.

How fresh a listing is, is the reader's choice (`max_age`): the Tasks table's own refreshes (its
button, its timer) read anew, a page run takes a listing a few seconds old, Review and Compose
one of up to LIST_MAX_AGE_S. Whatever the reader accepts, a session never gets a listing read
before it began: a new tab shows the service as it is when it opens. What this dashboard changes
itself (a create, a cancel, a delete) drops the connection's listings at once (`changed`), in
every session of it.

Listings are kept as the client returned them, not as pickled copies (`st.cache_data`): a new
session's first listing must be read anew, and a pickling cache would first copy the old entry (200
records for Review) only to throw it away, then pickle the new one. The pages only read the records
they are given.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import streamlit as st

from components.common import connection, identity
from components.common.state_keys import SESSION_BEGAN_KEY
from dailies.client import APIError, AuthenticationError, Client, DailiesError
from dailies.journal import Journal
from dailies.spec.models import ListTasksResponse, TaskRecord

# The oldest listing any reader accepts; also how long an entry lives at all.
LIST_MAX_AGE_S = 30
# Listings kept at once, over every connection and query (a page of 500 records is ~100 KB).
LIST_MAX_ENTRIES = 200


class NoConnection(DailiesError):
    """There is nothing to read from: no key, or a base URL the client refuses."""


# Per connection, when its tasks last changed here: part of the key, so a change leaves the older
# listings behind (they age out) in every session at once. An entry older than LIST_MAX_AGE_S is
# dropped: every listing cached before that change has aged out too, so forgetting it changes
# nothing, and the dict stays as small as the connections active in the last half minute.
_changes: dict[str, float] = {}
_changes_lock = threading.Lock()


def _generation(connection_id: str) -> float:
    return _changes.get(connection_id, 0.0)


def changed() -> None:
    """The current connection's tasks changed here (created, cancelled, deleted): every session of
    it reads its listings anew."""
    connection_id = connection.current().cache_id
    now = time.time()
    with _changes_lock:
        for stale in [cid for cid, at in _changes.items() if now - at > LIST_MAX_AGE_S]:
            del _changes[stale]
        # Strictly increasing per connection, even for two changes within the clock's resolution.
        _changes[connection_id] = max(now, _generation(connection_id) + 1e-6)


@dataclass(frozen=True)
class _Listing:
    read_at: float  # when the request was sent: the listing shows the service as of then, or later
    page: ListTasksResponse


# (connection id, its generation, query) -> listing, least recently used first.
_listings: OrderedDict[tuple[str, float, tuple[tuple[str, Any], ...]], _Listing] = OrderedDict()
_listings_lock = threading.Lock()


def _cached(key: tuple, read_since: float) -> _Listing | None:
    """The listing kept for `key` if it was read at `read_since` or later (and is not past its age)."""
    now = time.time()
    with _listings_lock:
        found = _listings.get(key)
        if found is not None and now - found.read_at > LIST_MAX_AGE_S:
            del _listings[key]
            return None
        if found is not None:
            _listings.move_to_end(key)
    return found if found is not None and found.read_at >= read_since else None


def _read(key: tuple, client: Client) -> _Listing:
    listing = _Listing(time.time(), client.tasks.list(**dict(key[2])))
    with _listings_lock:
        _listings[key] = listing
        _listings.move_to_end(key)
        while len(_listings) > LIST_MAX_ENTRIES:
            _listings.popitem(last=False)
    return listing


def _query_key(query: dict[str, Any]) -> tuple[tuple[str, Any], ...]:
    return tuple(sorted((name, tuple(value) if isinstance(value, list) else value)
                        for name, value in query.items()))


def list_tasks(max_age: float = LIST_MAX_AGE_S, remember_in: Journal | None = None,
               **query: Any) -> ListTasksResponse:
    """One page of `tasks.list(**query)` on the current connection, at most `max_age` seconds old
    (0: read it now). Records read from the service by this call are kept in `remember_in` (those
    of a cached listing were kept by the call that read them). Raises the client's errors (a failed
    read is not kept), and NoConnection without a usable key and base URL."""
    page = list_each([query], max_age, remember_in)[0]
    if isinstance(page, APIError):
        raise page
    return page


# Reads of several listings at once wait for the service side by side (HTTP: the GIL is free).
_readers = ThreadPoolExecutor(max_workers=4, thread_name_prefix="dailies-list")


def list_each(queries: Sequence[dict[str, Any]], max_age: float = LIST_MAX_AGE_S,
              remember_in: Journal | None = None) -> list[ListTasksResponse | APIError]:
    """`list_tasks` of each query, in order, with the same freshness; those not served by the cache are
    read side by side (Review lists both tiers: a new session reads both). A read the service refuses
    or cannot answer is returned as its error, so one failed listing leaves the others; NoConnection
    without a usable key and base URL."""
    conn, client = connection.current(), connection.client()
    if client is None:
        raise NoConnection("no usable connection: a key and a valid base URL are needed")
    asked_at = time.time()
    session_began = st.session_state.setdefault(SESSION_BEGAN_KEY, asked_at)
    read_since = max(asked_at - max_age, session_began)
    keys = [(conn.cache_id, _generation(conn.cache_id), _query_key(query)) for query in queries]
    found: list[_Listing | APIError | None] = [_cached(key, read_since) for key in keys]
    missing = [index for index, listing in enumerate(found) if listing is None]
    if len(missing) == 1:  # no hand-off to a thread for the usual single read
        found[missing[0]] = _read_or_error(keys[missing[0]], client)
    elif missing:
        for index, listing in zip(missing, _readers.map(lambda i: _read_or_error(keys[i], client), missing),
                                  strict=True):
            found[index] = listing
    out: list[ListTasksResponse | APIError] = []
    for listing in found:
        if isinstance(listing, _Listing):
            if remember_in is not None and listing.read_at >= asked_at:
                remember(remember_in, listing.page.items)
            out.append(listing.page)
        else:
            out.append(listing)
    return out


def _read_or_error(key: tuple, client: Client) -> _Listing | APIError:
    try:
        return _read(key, client)
    except AuthenticationError as exc:
        # The key was revoked or removed from its project: the project's journal is no longer its
        # own from the next run on (the identity is otherwise kept a few minutes).
        identity.forget(key[0])
        return exc
    except APIError as exc:
        return exc


def remember(journal: Journal, records: Iterable[TaskRecord]) -> None:
    """Keep the last record of each task in the journal, so a kept result outlives the service's."""
    journal.save_records(r.model_dump(mode="json", exclude_none=True) for r in records)
