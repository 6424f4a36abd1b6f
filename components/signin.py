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

Without an `[auth]` section nothing here applies: keys stay remembered per browser.
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from pathlib import Path

import streamlit as st

from . import pages
from .remembered_keys import Remembered, RememberedKeys

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


def configured() -> bool:
    """The operator set up sign-in: the secrets have an `[auth]` section. False without any secrets file."""
    try:
        return "auth" in st.secrets
    except Exception:  # no secrets.toml anywhere (Streamlit raises), or one that does not parse
        return False


def current_user() -> User | None:
    """The signed-in user of this session, or None (sign-in not set up, or not signed in)."""
    if not configured():
        return None
    try:
        if not st.user.is_logged_in:
            return None
        claims = st.user.to_dict()
    except Exception:  # no session (a bare script run)
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
    that, who is signed in and a sign-out button in the sidebar. Does nothing where it is not set up."""
    if not configured() or pages.is_guest_request():
        return  # a share link's guest has no account: the guest page checks the share itself
    user = current_user()
    if user is None:
        st.header("Dailies")
        st.info("This dashboard is shared by a team: sign in to use it. Your API key is kept with your "
                "sign-in, so any browser where you sign in has it.", icon=":material/lock:")
        if st.button("Sign in", key="signin.login", icon=":material/login:", type="primary"):
            st.login()
        st.stop()
    with st.sidebar:
        st.caption(f"Signed in as **{user.name or 'unnamed'}**")
        if st.button("Sign out", key="signin.logout", icon=":material/logout:"):
            sign_out()


def sign_out() -> None:
    """End this session's sign-in, and with it the session's key (it stays with the user for next time)."""
    for name in list(st.session_state.keys()):
        del st.session_state[name]
    st.logout()
