"""Sign-in with OpenID Connect (`st.login`), where the operator set it up, and each signed-in user's key.

A team dashboard whose `secrets.toml` has an `[auth]` section (redirect_uri, cookie_secret, client_id,
client_secret, server_metadata_url: Streamlit's own settings, README "Sign-in (OIDC)") asks every visitor
to sign in before any page, and keeps each user's key on the server with that user instead of in a
browser cookie (`remembered_keys`):

- a user is their provider's issuer + `sub` claim (stable; an email or a name may change or be reused),
  stored only as SHA-256 of the two, in `dashboard/user_keys.json` of the data directory (mode 0600,
  written like `remembered_keys.json`, with the same lock);
- any browser where the user signs in gets their key; another user never does;
- signing out (`st.logout`) ends the session and so its key; "Forget this key" deletes the user's record;
- the name on statuses and comments, when the service does not say whose a key is and the person gave
  none in Settings, is the provider's `name` claim, else `email`.

Who may sign in is the operator's allow-list, in the dashboard's environment (comma-separated; any
one match lets an account in; the provider alone would let in every account it has, which for Google
or a multi-tenant Entra app is anyone):

- `DAILIES_SIGNIN_ALLOWED_DOMAINS`: e-mail domains (`example.com`: exactly that domain, not its subdomains);
- `DAILIES_SIGNIN_ALLOWED_EMAILS`: e-mail addresses;
- `DAILIES_SIGNIN_ALLOWED_GROUPS`: values of the provider's groups claim, named by
  `DAILIES_SIGNIN_GROUPS_CLAIM` (default `groups`).

An e-mail matches only when the provider does not say it is unverified (`email_verified` false).

Sign-in fails closed: a secrets file that does not parse, an `[auth]` section that lacks a setting, or
sign-in without an allow-list serve nothing but a message saying what is wrong (a share link's guest
included), and an account the allow-list does not name is told so and gets nothing else.

Without any secrets file, or one without an `[auth]` section, nothing here applies: keys stay
remembered per browser.
"""

from __future__ import annotations

import hashlib
import logging
import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st
from streamlit import config as st_config

from components.common import pages
from components.common.remembered_keys import Remembered, RememberedKeys
from components.common.state_keys import SIGN_IN_KEY, SIGN_OUT_KEY
from dailies.config import current

FILE_NAME = "user_keys.json"


@dataclass(frozen=True)
class User:
    """A signed-in person as the provider names them."""

    issuer: str
    subject: str
    name: str = ""

    @property
    def digest(self) -> str:
        """What the store keeps instead of the identity: SHA-256 of issuer and subject."""
        return hashlib.sha256(f"oidc\n{self.issuer}\n{self.subject}".encode()).hexdigest()


class UserKeys(RememberedKeys):
    """Signed-in users' connections, one per user (the hash of their identity), kept until forgotten."""

    def __init__(self, path: Path, **kwargs) -> None:
        kwargs.setdefault("max_age_s", math.inf)
        super().__init__(path, **kwargs)

    def save(self, user: User, base_url: str, api_key: str) -> None:
        with self._locked() as entries:
            entries[user.digest] = {"base_url": base_url, "api_key": api_key, "saved_at": self._clock()}

    def lookup_user(self, user: User) -> Remembered | None:
        entry = self._read().get(user.digest)
        if entry is None:
            return None
        return Remembered(entry["base_url"], entry["api_key"], entry["saved_at"])

    def forget_user(self, user: User) -> bool:
        """Delete the user's record; False when there was none."""
        with self._locked() as entries:
            return entries.pop(user.digest, None) is not None


# ---------- the operator's set-up ----------

ALLOWED_DOMAINS_ENV = "DAILIES_SIGNIN_ALLOWED_DOMAINS"
ALLOWED_EMAILS_ENV = "DAILIES_SIGNIN_ALLOWED_EMAILS"
ALLOWED_GROUPS_ENV = "DAILIES_SIGNIN_ALLOWED_GROUPS"
GROUPS_CLAIM_ENV = "DAILIES_SIGNIN_GROUPS_CLAIM"
DEFAULT_GROUPS_CLAIM = "groups"
# What `st.login()` (the default provider, as `require` calls it) needs in `[auth]`.
REQUIRED_AUTH_KEYS = ("redirect_uri", "cookie_secret", "client_id", "client_secret", "server_metadata_url")

log = logging.getLogger(__name__)
_logged: set[str] = set()


@dataclass(frozen=True)
class Setup:
    """Whether sign-in applies, and why it cannot work (then nobody gets anything but that message)."""

    on: bool
    problem: str | None = None


def _secrets_absent(exc: Exception) -> bool:
    """Streamlit's error means no secrets file at all (not one that is there and does not parse)."""
    if getattr(exc, "error_id", None) == "no-secrets-found":
        return True
    try:
        paths = st_config.get_option("secrets.files") or []
    except Exception:  # an option this Streamlit lacks: say there may be a file, and fail closed
        return False
    return not any(os.path.exists(p) for p in paths)


def _list_env(name: str, lower: bool = True) -> frozenset[str]:
    items = (item.strip() for item in getattr(current(), name.lower()).split(","))
    return frozenset((item.lower() if lower else item) for item in items if item)


@dataclass(frozen=True)
class Allowed:
    """The operator's allow-list (see the module's doc)."""

    domains: frozenset[str]
    emails: frozenset[str]
    groups: frozenset[str]
    groups_claim: str

    @classmethod
    def from_env(cls) -> Allowed:
        return cls(frozenset(d.lstrip("@") for d in _list_env(ALLOWED_DOMAINS_ENV)), _list_env(ALLOWED_EMAILS_ENV),
                   _list_env(ALLOWED_GROUPS_ENV, lower=False),
                   current().dailies_signin_groups_claim.strip() or DEFAULT_GROUPS_CLAIM)

    @property
    def empty(self) -> bool:
        return not (self.domains or self.emails or self.groups)

    def admits(self, claims: Mapping[str, Any]) -> bool:
        """Whether the account these claims name is on the list."""
        email = claims.get("email")
        verified = claims.get("email_verified")
        # An address the provider says is unverified may be anyone's: it matches nothing.
        unverified = verified is False or (isinstance(verified, str) and verified.strip().lower() == "false")
        if isinstance(email, str) and "@" in email and not unverified:
            address = email.strip().lower()
            if address in self.emails or address.rsplit("@", 1)[1] in self.domains:
                return True
        groups = claims.get(self.groups_claim)
        if isinstance(groups, str):
            groups = [groups]
        return isinstance(groups, list | tuple) and any(isinstance(g, str) and g in self.groups for g in groups)


def setup() -> Setup:
    """The operator's sign-in set-up as the secrets and the environment give it."""
    try:
        auth = st.secrets["auth"] if "auth" in st.secrets else None
    except Exception as exc:
        if _secrets_absent(exc):
            return Setup(False)
        if str(exc) not in _logged:  # every run of every page asks: said once per process
            _logged.add(str(exc))
            log.error("the dashboard's secrets cannot be read, nothing is served: %s", exc)
        # The cause is tomllib's line and column, without the file's text.
        return Setup(True, f"The dashboard's secrets file cannot be read ({exc.__cause__ or exc}), so whether and "
                           "how visitors sign in is unknown.")
    if auth is None:
        return Setup(False)
    if not isinstance(auth, Mapping):
        return Setup(True, "The `[auth]` entry of the dashboard's secrets is not a table.")
    missing = [k for k in REQUIRED_AUTH_KEYS if not str(auth.get(k) or "").strip()]
    if missing:
        return Setup(True, f"The `[auth]` section of the dashboard's secrets lacks {', '.join(missing)}.")
    if Allowed.from_env().empty:
        return Setup(True, f"Sign-in is set up but no account is allowed until the dashboard's environment names "
                           f"some: {ALLOWED_DOMAINS_ENV}, {ALLOWED_EMAILS_ENV} or {ALLOWED_GROUPS_ENV}.")
    return Setup(True)


def configured() -> bool:
    """The operator set up sign-in: the secrets have an `[auth]` section, or cannot be read (which
    counts as set up, so that nothing is served until it is mended). False without any secrets file."""
    return setup().on


def _claims() -> dict[str, Any] | None:
    """The signed-in account's claims, whoever they are; None when nobody is signed in."""
    try:
        if not st.user.is_logged_in:
            return None
        return dict(st.user.to_dict())
    except Exception:  # no session (a bare script run)
        return None


def current_user() -> User | None:
    """The signed-in user of this session, or None (sign-in not set up or not working, not signed in, or
    an account the allow-list does not name)."""
    found = setup()
    if not found.on or found.problem is not None:
        return None
    claims = _claims()
    if claims is None or not Allowed.from_env().admits(claims):
        return None
    issuer, subject = str(claims.get("iss") or ""), str(claims.get("sub") or "")
    if not subject:
        return None  # a provider that names nobody: treat as not signed in
    name = str(claims.get("name") or claims.get("email") or "")
    return User(issuer, subject, name)


def display_name() -> str:
    """The provider's name (or email) of the signed-in user, for statuses and comments; "" otherwise."""
    user = current_user()
    return user.name if user is not None else ""


def require() -> None:
    """On every page, where sign-in is set up: a sign-in button and nothing else until signed in; after
    that, who is signed in and a sign-out button in the sidebar. Does nothing where it is not set up.
    A set-up that cannot work, or an account not allowed, gets the reason and nothing else."""
    found = setup()
    if not found.on:
        return
    if found.problem is not None:
        st.header("Dailies")
        st.error(f"{found.problem} Nothing is served until the operator mends it (README, \"Sign-in (OIDC)\").",
                 icon=":material/lock:")
        st.stop()
    if pages.is_guest_request():
        return  # a share link's guest has no account: the guest page checks the share itself
    user = current_user()
    claims = _claims() if user is None else None
    if claims is not None:  # signed in, but not with an account this dashboard allows
        st.header("Dailies")
        who = claims.get("email") or claims.get("name") or claims.get("sub") or "this account"
        st.error(f"The account {who} is not allowed on this dashboard. Ask its operator to allow it, or sign "
                 "out and sign in with another account.", icon=":material/block:")
        if st.button("Sign out", key=SIGN_OUT_KEY, icon=":material/logout:"):
            sign_out()
        st.stop()
    if user is None:
        st.header("Dailies")
        st.info("This dashboard is shared by a team: sign in to use it. Your API key is kept with your "
                "sign-in, so any browser where you sign in has it.", icon=":material/lock:")
        if st.button("Sign in", key=SIGN_IN_KEY, icon=":material/login:", type="primary"):
            st.login()
        st.stop()
    with st.sidebar:
        st.caption(f"Signed in as **{user.name or 'unnamed'}**")
        if st.button("Sign out", key=SIGN_OUT_KEY, icon=":material/logout:"):
            sign_out()


def sign_out() -> None:
    """End this session's sign-in, and with it the session's key (it stays with the user for next time)."""
    for name in list(st.session_state.keys()):
        del st.session_state[name]
    st.logout()
