"""Who is using the dashboard, and so which journal scope they read and write.

- On a Dailies service the key says it (`GET /dailies/v1/me`): its project and member name. The
  journal's scope is then the project, shared by all its members; each change carries the member's name.
- Elsewhere (the real Ark, ModelArk) nothing says who a key belongs to: the scope stays the key's, and
  the name on statuses and comments is the display name the person gives in Settings, remembered
  with that key's journal (so per browser, like the key).

The answer is asked once per connection and kept a few minutes: not on every run of a page. Two kinds
of failure are told apart, because they mean opposite things for where a person's writes go:

- the service answers that it has no `/me` (404, another 4xx, a body that is not an identity): it is not
  a Dailies service, the key's own scope is right, and that is remembered like an identity;
- the service gives no answer now (refused, timed out, 5xx, 429, 408): nothing is learnt. The key keeps
  the project last known for it in this process (see `lookup`), and the failure is asked again after
  `UNREACHED_RETRY_S`, not kept as an identity for minutes.
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass

from dailies.client import (
    APIConnectionError,
    APIStatusError,
    AuthenticationError,
    Client,
    DailiesError,
    InternalServerError,
    PermissionDeniedError,
    RateLimitError,
)
from dailies.journal import Journal, Scope
from dailies.spec.catalog import region_of_host
from dailies.spec.models import Identity

IDENTITY_MAX_AGE_S = 300
# A service that gave no answer is asked again this soon: a restart or a blip is over in seconds, and
# asking on every run would make each page wait on a service that is not answering.
UNREACHED_RETRY_S = 10
DISPLAY_NAME_PREF = "identity.display_name"


@dataclass(frozen=True)
class Answer:
    """What is known of a key's identity: `who` (its project and member, or None: the key's own scope)
    and whether the service said so now (`reached`). An answer not reached carries the identity last
    known for the key in this process, or None when there is none: the project cannot be known."""

    who: Identity | None
    reached: bool = True
    problem: str = ""  # why the service gave no answer, for the person


_answers: dict[str, tuple[float, Answer]] = {}
# The identity each key was last answered in this process. Kept through a service's restart or a
# blip (an unanswered /me says nothing new about the key); dropped by `forget` (a 401: the key was
# revoked or taken out of its project) and replaced by any answer the service gives.
_last_known: dict[str, Identity] = {}
_lock = threading.Lock()
# When a key's journal was last adopted into its project's scope (journal_for), per (file, project, key).
_adopted: dict[tuple[str, str, str], float] = {}
_adopting = threading.Lock()


def _unreached(exc: DailiesError) -> bool:
    """Whether the error is "no answer now" (ask again soon) rather than an answer about the service."""
    if isinstance(exc, APIConnectionError | InternalServerError | RateLimitError):
        return True
    return isinstance(exc, APIStatusError) and exc.status_code == 408


def lookup(client: Client | None, cache_id: str) -> Answer:
    """The key's identity on a Dailies service, asked at most every few minutes (see the module's doc).

    While the service does not answer, a key whose project was known in this process keeps it: a
    team expects a member's comments and statuses to land where the team reads them, and being a
    member is not something a restart of the service changes (a revocation shows as a 401, which
    forgets it). A key never answered in this process has no project to keep: the answer says
    `reached=False` with `who=None`, and the caller must not quietly use the key's own scope
    (components/common/connection.py `journal` tells the person instead)."""
    if client is None or region_of_host(client.base_url) is not None:
        return Answer(None)  # Ark's and ModelArk's hosts have no /dailies/v1
    now = time.monotonic()
    with _lock:
        cached = _answers.get(cache_id)
    if cached is not None:
        at, answer = cached
        if now - at < (IDENTITY_MAX_AGE_S if answer.reached else UNREACHED_RETRY_S):
            return answer
    try:
        answer = Answer(client.me())
    except DailiesError as exc:
        if _unreached(exc):
            with _lock:
                answer = Answer(_last_known.get(cache_id), reached=False, problem=str(exc) or type(exc).__name__)
        else:
            answer = Answer(None)  # no /me here (another service), or the key refused: the key's own scope
            if isinstance(exc, AuthenticationError | PermissionDeniedError):
                with _lock:
                    _last_known.pop(cache_id, None)
    with _lock:
        if len(_answers) > 256:
            _answers.clear()
        if len(_last_known) > 256:
            _last_known.clear()
        if answer.reached:
            if answer.who is not None:
                _last_known[cache_id] = answer.who
            else:
                _last_known.pop(cache_id, None)  # the service says it names no project (any more)
        _answers[cache_id] = (time.monotonic(), answer)
    return answer


def identity(client: Client | None, cache_id: str) -> Identity | None:
    """The key's project and member on a Dailies service (while it does not answer: the last known in
    this process); None elsewhere, or when it has never answered for this key."""
    return lookup(client, cache_id).who


def ask_again(cache_id: str) -> None:
    """Ask the service at the next lookup, whatever the last answer's age (a person's "Try again")."""
    with _lock:
        _answers.pop(cache_id, None)


def forget(cache_id: str) -> None:
    """Forget what is known of the key (the service refused it: revoked, or out of its project)."""
    with _lock:
        _answers.pop(cache_id, None)
        _last_known.pop(cache_id, None)


def display_name(key_journal: Journal) -> str:
    return key_journal.preference(DISPLAY_NAME_PREF, "") or ""


def set_display_name(key_journal: Journal, name: str) -> None:
    key_journal.set_preference(DISPLAY_NAME_PREF, name.strip()[:60])


def is_unnamed(author: str) -> bool:
    """Whether a view signs as a key's fingerprint ("key df95cea8"), nobody having named its person."""
    return author.startswith("key ") and len(author) == 12


def unnamed_member(given: str, key_fingerprint: str) -> str:
    """How a key the service names no member for signs in its project's shared journal: the name the
    person gave, with the key's fingerprint start. The journal keys stars and statuses by that name,
    so a name anyone may type must not pass for a member's (or another unnamed key's)."""
    tag = f"key {key_fingerprint[:8]}"
    return given if given == tag else f"{given} ({tag})"


def rename(shared: Journal, key_scope: Scope, who: Identity | None, name: str, fallback_name: str = "") -> None:
    """Set the key's display name, and move what it wrote under its former name to the new one: one
    person's earlier stars, statuses and comments stay theirs across a rename (issue 37)."""
    key_journal = shared.scoped(key_scope)
    before = journal_for(shared, key_scope, who, fallback_name)
    set_display_name(key_journal, name)
    after = journal_for(shared, key_scope, who, fallback_name)
    before.rename_author(before.author, after.author)
    if after.scope != key_scope:  # rows the project has not adopted yet from the key's own scope
        key_journal.rename_author(before.author, after.author)


def journal_for(shared: Journal, key_scope: Scope, who: Identity | None, fallback_name: str = "") -> Journal:
    """The journal view of this person: the project's scope on a Dailies service (the key's own
    journal adopted into it), else the key's, named with the display name, else `fallback_name` (the
    signed-in user's name from their sign-in provider: components/common/signin.py)."""
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
    # The key's own scope: its legacy reviews are converted once per process. A project: the key's rows
    # are brought in again every few minutes, not once per process, so whatever reached the key's scope
    # meanwhile (another dashboard process, an older release writing there while /me did not answer)
    # joins the project once it is known. The display name stays with the key: it is read from there.
    every = float("inf") if project_scope is None else IDENTITY_MAX_AGE_S
    last = _adopted.get(marker)
    if last is None or time.monotonic() - last >= every:
        with _adopting:
            last = _adopted.get(marker)
            if last is None or time.monotonic() - last >= every:
                if project_scope is not None:
                    view.adopt(key_scope, keep_preferences=(DISPLAY_NAME_PREF,))
                else:
                    view.adopt(None)
                if len(_adopted) > 1024:
                    _adopted.clear()
                _adopted[marker] = time.monotonic()
    return view
