"""Keys people saved on the Settings page, remembered for their own browser only.

How a key survives a reload, a deep link and a new tab, and never reaches another browser:

- the browser holds a random, opaque token (256 bits) in a cookie, and nothing else: not the key,
  not a hash of it, nothing another service would accept;
- the dashboard's server holds SHA-256(token) -> (base URL, key) in `remembered_keys.json` in its
  data directory, written atomically with file mode 0600. The file keeps digests of tokens, so
  reading it gives no cookie that would open anyone's session here;
- an entry lives 30 days from the save (so does the cookie); "Forget this key" deletes both.

Why this and not the alternatives (issue 12, point 9):
- the key itself in localStorage or a cookie puts the credential in the browser, readable by any
  script on the page and copied into browser profiles and backups; and localStorage is readable
  only by JavaScript, which answers after the first run of a page, so every deep link would first
  draw "No API key" and then jump;
- a cookie arrives with the session (`st.context.cookies`), so the first run of every page
  already knows the connection;
- third-party components (streamlit-cookies-controller, extra-streamlit-components,
  streamlit-local-storage, streamlit_js_eval) would add a dependency for a dozen lines of
  JavaScript that Streamlit's own `st.components.v2` runs (see `browser_cookie`);
- `st.login` needs an OpenID Connect provider reachable from the dashboard and its users, and
  someone to map each identity to a key: a local or offline dashboard has neither.

Streamlit gives an app no way to send a Set-Cookie header, so the cookie is written by script and
cannot be HttpOnly; it is SameSite=Strict (and Secure over https), and the token is worth nothing
but a session of this one dashboard.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import secrets
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

MAX_AGE_S = 30 * 24 * 3600
TOKEN_BYTES = 32
# Tokens are URL-safe Base64 of 32 bytes: 43 characters. Anything much longer is not ours.
TOKEN_MAX_CHARS = 64
FILE_NAME = "remembered_keys.json"


@dataclass(frozen=True)
class Remembered:
    """What one browser saved: a base URL and a key (either may be empty: "keep the default")."""

    base_url: str
    api_key: str = field(repr=False)
    saved_at: float


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


class RememberedKeys:
    """The server's side of remembered keys: token digests mapped to connections, in one file."""

    def __init__(self, path: Path, max_age_s: float = MAX_AGE_S, clock: Callable[[], float] = time.time) -> None:
        self.path = path
        self.max_age_s = max_age_s
        self._clock = clock
        self._lock = threading.Lock()

    @property
    def cookie_name(self) -> str:
        """One name per data directory: two dashboards on one host (cookies ignore the port) do not
        overwrite each other's cookie."""
        return "dailies_key_" + hashlib.sha256(str(self.path.resolve()).encode()).hexdigest()[:10]

    def remember(self, base_url: str, api_key: str) -> str:
        """Store a connection under a fresh token and return the token (for the browser's cookie)."""
        token = secrets.token_urlsafe(TOKEN_BYTES)
        with self._locked() as entries:
            entries[_digest(token)] = {"base_url": base_url, "api_key": api_key, "saved_at": self._clock()}
        return token

    def lookup(self, token: str | None) -> Remembered | None:
        if not token or len(token) > TOKEN_MAX_CHARS:
            return None
        entry = self._read().get(_digest(token))
        if entry is None:
            return None
        return Remembered(entry["base_url"], entry["api_key"], entry["saved_at"])

    def forget(self, token: str | None) -> bool:
        """Delete the token's entry; False when there was none."""
        if not token or len(token) > TOKEN_MAX_CHARS:
            return False
        with self._locked() as entries:
            return entries.pop(_digest(token), None) is not None

    def __len__(self) -> int:
        return len(self._read())

    # ---------- the file ----------

    def _live(self, entries: dict[str, dict]) -> dict[str, dict]:
        oldest = self._clock() - self.max_age_s
        return {d: e for d, e in entries.items() if isinstance(e, dict) and e.get("saved_at", 0) >= oldest}

    def _read(self) -> dict[str, dict]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError):  # unreadable or half-written by hand: remember nothing rather than crash
            return {}
        return self._live(data.get("entries", {}) if isinstance(data, dict) else {})

    @contextlib.contextmanager
    def _locked(self) -> Iterator[dict[str, dict]]:
        """The entries for a read-modify-write, under a lock that holds across threads and processes
        (several dashboards may share one data directory); written back when the block ends."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        with self._lock, open(self.path.with_suffix(".lock"), "a") as lock_file:
            fcntl.flock(lock_file, fcntl.LOCK_EX)
            entries = self._read()
            yield entries
            self._write(entries)

    def _write(self, entries: dict[str, dict]) -> None:
        temporary = self.path.with_suffix(".tmp")
        # Created 0600 from the start: the keys are never readable by others, not even for a moment.
        fd = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump({"version": 1, "entries": entries}, out)
        os.chmod(temporary, 0o600)  # O_CREAT's mode only applies to a new file
        os.replace(temporary, self.path)
