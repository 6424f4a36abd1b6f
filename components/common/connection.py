"""Which service the dashboard talks to, for this browser session, and that connection's client and journal.

Order of precedence:
1. what the person saved on the Settings page;
2. what they saved earlier in this browser (`remembered_keys`: a cookie token the server maps to
   the key), restored when a session opens, so a reload, a deep link or a new tab keeps it; where
   sign-in is set up (`signin`: `st.login`), what the signed-in user saved, in any browser, instead;
3. `ARK_BASE_URL` / `ARK_API_KEY` of the dashboard's environment (`dailies up` sets them for the
   local service). The dashboard's own key goes only to the base URL it came with (`ARK_BASE_URL`, or
   the default): a base URL saved in Settings without a key has no key. In team mode
   (`DAILIES_DASHBOARD_TEAM=1`, `dailies dashboard --team`) the dashboard has no key of its own:
   `ARK_API_KEY` is ignored, every visitor brings their own key;
4. the local default base URL.

Everything derived from the API or the journal is per connection: the client and the charts' cache
are keyed by base URL + key fingerprint, and the journal is the connection's scope of it.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

import streamlit as st

from components.common import actions, browser_cookie, identity, outbound, pages, signin
from components.common.remembered_keys import FILE_NAME as REMEMBERED_KEYS_FILE
from components.common.remembered_keys import MAX_AGE_S, RememberedKeys
from components.common.state_keys import (
    API_KEY_KEY,
    BASE_URL_KEY,
    CONNECTION_PREFIXES,
    IDENTITY_RETRY_KEY,
    RESTORED_KEY,
    TOKEN_KEY,
    USER_SAVED_KEY,
)
from dailies import config as settings_env
from dailies.api_keys import fingerprint, mask
from dailies.client import BASE_URL_ENV, Client, base_url_problem, environment_defaults, normalize_base_url
from dailies.journal import Journal, Scope

# Session state that belongs to the connection rather than to the pages: kept when it changes.


def team_mode() -> bool:
    """A dashboard shared by a team: no default key; each person's key is theirs alone."""
    return settings_env.current().dailies_dashboard_team


def shared() -> bool:
    """Visitors are not the operator (team mode, or sign-in): the base URLs they save are guarded."""
    return team_mode() or signin.configured()


@dataclass(frozen=True)
class Connection:
    base_url: str
    api_key: str = field(repr=False)
    # Where the base URL came from, to say what to fix: "Settings", "this browser", "ARK_BASE_URL", "default".
    origin: str = "default"
    # Why the client refuses the base URL (client.base_url_problem), or None.
    problem: str | None = None
    # The dashboard's own default connection in single-user mode: it also sees journal rows from
    # before the journal had scopes (see dailies.journal).
    is_default: bool = False

    @property
    def is_local(self) -> bool:
        host = self.base_url.split("://", 1)[-1].split("/", 1)[0].split(":", 1)[0]
        return host in ("127.0.0.1", "localhost", "::1", "[::1]")

    @property
    def masked_key(self) -> str:
        return mask(self.api_key)

    @property
    def cache_id(self) -> str:
        """Names the connection in caches shared by every session: base URL + key fingerprint."""
        return f"{self.base_url}#{fingerprint(self.api_key) if self.api_key else 'no-key'}"

    @property
    def journal_scope(self) -> Scope:
        return Scope.of(self.base_url, self.api_key, include_unscoped=self.is_default)

    @property
    def usable(self) -> bool:
        return bool(self.api_key) and self.problem is None


def data_dir() -> Path:
    return settings_env.current().dailies_data_dir


# ---------- remembered keys (this browser) ----------


@st.cache_resource(show_spinner=False)
def _remembered_store(path: str) -> RememberedKeys:
    # One store object per file, so its thread lock covers every session of this process.
    return RememberedKeys(Path(path))


def remembered_store() -> RememberedKeys:
    return _remembered_store(str((data_dir() / "dashboard" / REMEMBERED_KEYS_FILE).resolve()))


@st.cache_resource(show_spinner=False)
def _user_store(path: str) -> signin.UserKeys:
    return signin.UserKeys(Path(path))


def user_store() -> signin.UserKeys:
    return _user_store(str((data_dir() / "dashboard" / signin.FILE_NAME).resolve()))


def _restore_remembered() -> None:
    """Once per session: take the connection this browser saved earlier, if its cookie maps to one
    (where sign-in is set up: the one the signed-in user saved, whichever browser they saved it in)."""
    if st.session_state.get(RESTORED_KEY):
        return
    st.session_state[RESTORED_KEY] = True
    if signin.configured():
        user = signin.current_user()
        found = user_store().lookup_user(user) if user is not None else None
        if found is None:
            return
        st.session_state[USER_SAVED_KEY] = True
    else:
        store = remembered_store()
        token = browser_cookie.read(store.cookie_name)
        found = store.lookup(token)
        if found is None:
            return
        st.session_state[TOKEN_KEY] = token
    if found.base_url and base_url_problem(found.base_url) is None:
        st.session_state.setdefault(BASE_URL_KEY, found.base_url)
    if found.api_key:
        st.session_state.setdefault(API_KEY_KEY, found.api_key)


def is_remembered() -> bool:
    return bool(st.session_state.get(TOKEN_KEY) or st.session_state.get(USER_SAVED_KEY))


# ---------- the connection ----------


def _environment() -> tuple[str, str]:
    """The dashboard's default base URL and key (no key in team mode), read as the client reads them."""
    base_url, key = environment_defaults(os.environ)
    return base_url, "" if team_mode() else key


def current() -> Connection:
    """This session's connection. Never raises: a refused base URL is reported in `problem`."""
    _restore_remembered()
    env_base_url, env_key = _environment()
    typed_url = st.session_state.get(BASE_URL_KEY)
    remembered = is_remembered()
    if typed_url:
        base_url, origin = typed_url, "this browser" if remembered else "Settings"
    else:
        base_url, origin = env_base_url, BASE_URL_ENV if os.environ.get(BASE_URL_ENV) else "default"
    problem = base_url_problem(base_url)
    base_url = normalize_base_url(base_url) if problem is None else base_url.strip()
    # The dashboard's own key goes to the base URL it came with and nowhere else.
    at_env_url = problem is None and base_url_problem(env_base_url) is None and base_url == normalize_base_url(
        env_base_url)
    api_key = st.session_state.get(API_KEY_KEY) or (env_key if at_env_url else "")
    is_default = not team_mode() and bool(env_key) and api_key == env_key and at_env_url
    return Connection(base_url, api_key, origin, problem, is_default)


def _start_afresh_if_changed(before: Connection) -> None:
    """A new connection starts the pages afresh: filters, selections, review widgets and cached
    lists of the previous one must not show in this session."""
    if current().cache_id == before.cache_id:
        return
    for name in list(st.session_state.keys()):
        if not str(name).startswith(CONNECTION_PREFIXES):
            del st.session_state[name]


def base_url_refused(base_url: str) -> str | None:
    """Why a typed base URL cannot be used: the client's rule, and on a shared dashboard the outbound guard's."""
    return base_url_problem(base_url) or (outbound.address_problem(base_url) if shared() else None)


def normalized(base_url: str) -> str:
    return normalize_base_url(base_url)


def save(base_url: str, api_key: str | None) -> str | None:
    """Use (and remember in this browser) a base URL and, when given, a key. Returns the client's
    reason to refuse the base URL, in which case nothing is saved."""
    problem = base_url_refused(base_url)
    if problem is not None:
        return problem
    before = current()
    st.session_state[BASE_URL_KEY] = normalize_base_url(base_url)
    if api_key:
        st.session_state[API_KEY_KEY] = api_key
    user = signin.current_user()
    if user is not None:  # kept with the signed-in user, for any browser they sign in from; no cookie
        user_store().save(user, st.session_state[BASE_URL_KEY], st.session_state.get(API_KEY_KEY, ""))
        st.session_state[USER_SAVED_KEY] = True
        _start_afresh_if_changed(before)
        return None
    store = remembered_store()
    store.forget(st.session_state.get(TOKEN_KEY))  # a fresh token for every save: the old one is dead
    token = store.remember(st.session_state[BASE_URL_KEY], st.session_state.get(API_KEY_KEY, ""))
    st.session_state[TOKEN_KEY] = token
    browser_cookie.write(store.cookie_name, token, MAX_AGE_S)
    _start_afresh_if_changed(before)
    return None


def forget() -> None:
    """Drop what this browser saved (here and on the server): back to the dashboard's default."""
    before = current()
    user = signin.current_user()
    if user is not None:
        user_store().forget_user(user)
        st.session_state.pop(USER_SAVED_KEY, None)
    else:
        store = remembered_store()
        store.forget(st.session_state.pop(TOKEN_KEY, None))
        browser_cookie.expire(store.cookie_name)
    st.session_state.pop(BASE_URL_KEY, None)
    st.session_state.pop(API_KEY_KEY, None)
    _start_afresh_if_changed(before)


# ---------- what pages use ----------


# Clients kept at once: one per connection in use (a team dashboard has one per person's key). The
# least recently used beyond that is dropped, not closed: a session may still be using it, and its
# connections go with it once nothing holds it.
CLIENTS_MAX = 64


@st.cache_resource(show_spinner=False, max_entries=CLIENTS_MAX)
def _client(base_url: str, key_fingerprint: str, _api_key: str) -> Client:
    # Shared by the sessions of one connection (same key, same rights). The key itself is left out
    # of the cache key (the leading underscore): the fingerprint names it.
    return Client(base_url=base_url, api_key=_api_key, timeout=30, max_retries=2,
                  transport=outbound.transport_for(base_url, shared()))


def client() -> Client | None:
    """The client for the current connection, or None without a key or with a refused base URL."""
    conn = current()
    if not conn.usable:
        return None
    return _client(conn.base_url, fingerprint(conn.api_key), conn.api_key)


def show_problem(conn: Connection | None = None, link: bool = True) -> bool:
    """Say, pointing to Settings (`link`: with a link to it), that the base URL is refused; True when it is."""
    conn = conn or current()
    if conn.problem is None:
        return False
    where = {BASE_URL_ENV: f"The base URL in the dashboard's environment ({BASE_URL_ENV})",
             "default": "The default base URL"}.get(conn.origin, "The saved base URL")
    st.error(f"{where} cannot be used: {conn.problem}. Enter a valid one in **Settings** "
             "(for example http://127.0.0.1:8000/api/v3).")
    if link:
        _settings_link()
    return True


def _settings_link() -> None:
    pages.link(pages.SETTINGS, "Open Settings", icon="⚙️")


def own_key_withheld(conn: Connection | None = None) -> bool:
    """The dashboard has a key of its own, but not for this connection's base URL."""
    return not (conn or current()).api_key and bool(_environment()[1])


def no_key_message() -> str:
    if team_mode():
        kept = ("It is kept with your sign-in, in any browser, until you forget it." if signin.current_user()
                else "It is remembered in this browser only, until you forget it.")
        return f"No API key yet. This dashboard is shared: open **Settings** and enter your own key. {kept}"
    if own_key_withheld():
        return (f"No API key for {current().base_url}: the dashboard's own key is used only with its own service "
                f"({_environment()[0]}). Open **Settings** and enter a key for this address, or forget the saved one.")
    return ("No API key yet. Open **Settings** to enter the service address and key, or start "
            "everything with `dailies up`, which hands the dashboard a local key.")


def require_client() -> Client:
    """The client, or a message pointing to Settings and a stop of the page."""
    conn = current()
    if show_problem(conn):
        st.stop()
    found = client()
    if found is None:
        st.warning(no_key_message())
        _settings_link()
        st.stop()
    return found


@st.cache_resource(show_spinner=False)
def _journal(path: str) -> Journal:
    # The file's one connection, shared by every session; each session reads through its own scope.
    return Journal(Path(path))


def shared_journal() -> Journal:
    return _journal(str((data_dir() / "dashboard" / "journal.sqlite3").resolve()))


def key_journal() -> Journal:
    """The journal of the current key alone (its display name and preferences of its own)."""
    return shared_journal().scoped(current().journal_scope)


def rename_me(name: str) -> None:
    """The display name of the current key, with what it wrote under its former name moved to it."""
    conn = current()
    answer = identity.lookup(client(), conn.cache_id) if conn.usable else identity.Answer(None)
    identity.rename(shared_journal(), conn.journal_scope, answer.who, name, fallback_name=signin.display_name())


def journal() -> Journal:
    """The journal of the person using the dashboard: on a Dailies service their project's (shared
    by its members), elsewhere their key's (components/common/identity.py).

    When the service does not answer who the key is and this process never knew its project (the
    dashboard started during a restart of the service), the page stops with a message rather than
    open the key's own journal: what the person wrote there would be invisible to their project, and
    a team expects a comment or an approval either to land where the others read it or not to be
    taken. The service is not answering anyway, so the page had little to show. (A key whose
    project was known keeps it through the outage: identity.lookup.)"""
    conn = current()
    answer = identity.lookup(client(), conn.cache_id) if conn.usable else identity.Answer(None)
    if answer.who is None and not answer.reached:
        st.warning(f"Your project's journal cannot be opened now: the service at {conn.base_url} does not say "
                   f"which project this key is in ({answer.problem}). Nothing you do here would reach your "
                   f"project, so the page waits: try again in a few seconds.")
        actions.button("Try again", icon="🔄", key=IDENTITY_RETRY_KEY, on_click=identity.ask_again,
                       args=(conn.cache_id,))
        st.stop()
    return _person_journal(conn, answer)


def _person_journal(conn: Connection, answer: identity.Answer) -> Journal:
    return identity.journal_for(shared_journal(), conn.journal_scope, answer.who, fallback_name=signin.display_name())


def journal_if_known() -> Journal | None:
    """`journal()` for what is drawn beside a page (the navigation's unread count): None, and nothing
    said, where there is no usable connection or the project cannot be known now."""
    conn = current()
    if not conn.usable:
        return None
    answer = identity.lookup(client(), conn.cache_id)
    if answer.who is None and not answer.reached:
        return None
    return _person_journal(conn, answer)
