"""Who is using the dashboard, and so which journal scope they read and write.

- On a Dailies service the key says it (`GET /dailies/v1/me`): its project and member name. The
  journal's scope is then the project, shared by all its members; each change carries the member's name.
- Elsewhere (the real Ark, ModelArk) nothing says who a key belongs to: the scope stays the key's, and
  the name on statuses and comments is the display name the person gives in Settings, remembered
  with that key's journal (so per browser, like the key).

The answer is asked once per connection and kept a few minutes: not on every run of a page.
"""

from __future__ import annotations

import threading
import time

from dailies.client import Client, DailiesError
from dailies.journal import Journal, Scope
from dailies.spec.catalog import region_of_host
from dailies.spec.models import Identity

IDENTITY_MAX_AGE_S = 300
DISPLAY_NAME_PREF = "identity.display_name"
_identities: dict[str, tuple[float, Identity | None]] = {}
# A key's journal is adopted into its project's scope once per process (adopt.py: it runs once anyway).
_adopted: set[tuple[str, str, str]] = set()
_adopting = threading.Lock()


def identity(client: Client | None, cache_id: str) -> Identity | None:
    """The key's project and member on a Dailies service; None elsewhere or without an answer."""
    if client is None or region_of_host(client.base_url) is not None:
        return None  # Ark's and ModelArk's hosts have no /dailies/v1
    cached = _identities.get(cache_id)
    if cached is not None and time.monotonic() - cached[0] < IDENTITY_MAX_AGE_S:
        return cached[1]
    try:
        found = client.me()
    except DailiesError:
        found = None  # another service (404), or none answering now: the key's own scope
    if len(_identities) > 256:
        _identities.clear()
    _identities[cache_id] = (time.monotonic(), found)
    return found


def forget(cache_id: str) -> None:
    _identities.pop(cache_id, None)


def display_name(key_journal: Journal) -> str:
    return key_journal.preference(DISPLAY_NAME_PREF, "") or ""


def set_display_name(key_journal: Journal, name: str) -> None:
    key_journal.set_preference(DISPLAY_NAME_PREF, name.strip()[:60])


def unnamed_member(given: str, key_fingerprint: str) -> str:
    """How a key the service names no member for signs in its project's shared journal: the name the
    person gave, with the key's fingerprint start. The journal keys stars and statuses by that name,
    so a name anyone may type must not pass for a member's (or another unnamed key's)."""
    tag = f"key {key_fingerprint[:8]}"
    return given if given == tag else f"{given} ({tag})"


def journal_for(shared: Journal, key_scope: Scope, who: Identity | None, fallback_name: str = "") -> Journal:
    """The journal view of this person: the project's scope on a Dailies service (the key's own
    journal adopted into it the first time), else the key's, named with the display name, else
    `fallback_name` (the signed-in user's name from their sign-in provider: components/signin.py)."""
    key_journal = shared.scoped(key_scope)
    # A key nobody named signs as its fingerprint's start: the same person each time, never the key.
    given = display_name(key_journal) or fallback_name.strip()[:60] or f"key {key_scope.key_fingerprint[:8]}"
    if who is None:
        view = shared.scoped(Scope(key_scope.base_url, key_scope.key_fingerprint, key_scope.include_unscoped,
                                   author=given))
        project_scope = None
    else:
        project_scope = Scope.of_project(key_scope.base_url, who.project, include_unscoped=key_scope.include_unscoped,
                                         author=who.member or unnamed_member(given, key_scope.key_fingerprint))
        view = shared.scoped(project_scope)
    marker = (str(shared.path), view.scope.name, key_scope.name)
    if marker not in _adopted:
        with _adopting:
            if marker not in _adopted:
                view.adopt(key_scope if project_scope is not None else None)
                _adopted.add(marker)
    return view
