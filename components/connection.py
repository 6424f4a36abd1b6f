"""Which service the dashboard talks to, and the shared client and journal.

Order of precedence: what the user typed on the Settings page, then `ARK_BASE_URL` /
`ARK_API_KEY` (which `dailies up` sets for the local service), then the local default.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

import streamlit as st

from dailies.client import DEFAULT_BASE_URL, Client
from dailies.journal import Journal

BASE_URL_KEY = "settings.base_url"
API_KEY_KEY = "settings.api_key"


@dataclass(frozen=True)
class Connection:
    base_url: str
    api_key: str

    @property
    def is_local(self) -> bool:
        host = self.base_url.split("://", 1)[-1].split("/", 1)[0].split(":", 1)[0]
        return host in ("127.0.0.1", "localhost", "::1", "[::1]")

    @property
    def masked_key(self) -> str:
        key = self.api_key
        if not key:
            return "(none)"
        return key[:4] + "…" + key[-4:] if len(key) > 12 else "…" * 3


def base_url_problem(typed: str) -> str | None:
    """What is wrong with a typed base URL, or None: an http(s) address with a host."""
    parsed = urlsplit(typed.strip())
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        return f"'{typed.strip()}' is not an http:// or https:// address (for example http://127.0.0.1:8000/api/v3)"
    return None


def current() -> Connection:
    base_url = st.session_state.get(BASE_URL_KEY) or os.environ.get("ARK_BASE_URL") or DEFAULT_BASE_URL
    api_key = st.session_state.get(API_KEY_KEY) or os.environ.get("ARK_API_KEY") or ""
    return Connection(base_url.rstrip("/"), api_key)


@st.cache_resource(show_spinner=False)
def _client(base_url: str, api_key: str) -> Client:
    return Client(base_url=base_url, api_key=api_key, timeout=30, max_retries=2)


def client() -> Client | None:
    """The client for the current connection, or None when no API key is known."""
    conn = current()
    if not conn.api_key:
        return None
    return _client(conn.base_url, conn.api_key)


def require_client() -> Client:
    """The client, or a message pointing to Settings and a stop of the page."""
    found = client()
    if found is None:
        st.warning("No API key yet. Open **Settings** to enter the service address and key, or start "
                   "everything with `dailies up`, which hands the dashboard a local key.")
        st.page_link("views/settings.py", label="Open Settings", icon="⚙️")
        st.stop()
    return found


def data_dir() -> Path:
    return Path(os.environ.get("DAILIES_DATA_DIR", ".dailies"))


@st.cache_resource(show_spinner=False)
def _journal(path: str) -> Journal:
    return Journal(Path(path))


def journal() -> Journal:
    return _journal(str((data_dir() / "dashboard" / "journal.sqlite3").resolve()))
