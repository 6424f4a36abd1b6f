"""Signed result URLs: HMAC-SHA256 over the path and the expiry time.

The secret lives in the data directory, so every process serving that directory signs alike and
a URL survives a restart.
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

SECRET_FILE = "url-signing.key"


def load_or_create_secret(data_dir: Path) -> bytes:
    path = data_dir / SECRET_FILE
    data_dir.mkdir(parents=True, exist_ok=True)
    if not path.exists():
        tmp = path.with_name(f"{SECRET_FILE}.{os.getpid()}.tmp")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as fh:
            fh.write(secrets.token_hex(32))
        # Two processes may race here; os.link fails for the loser, which then reads the winner's.
        try:
            os.link(tmp, path)
        except FileExistsError:
            pass
        finally:
            tmp.unlink()
    return bytes.fromhex(path.read_text().strip())


class UrlSigner:
    def __init__(self, secret: bytes) -> None:
        self._secret = secret

    def signature(self, path: str, expires: int) -> str:
        return hmac.new(self._secret, f"{path}\n{expires}".encode(), hashlib.sha256).hexdigest()

    def sign(self, base_url: str, path: str, expires: int) -> str:
        # Nothing to quote: an integer and a hex digest (urlencode was a third of a list's records).
        return f"{base_url.rstrip('/')}{path}?expires={expires}&signature={self.signature(path, expires)}"

    def verify(self, path: str, expires: int, signature: str) -> bool:
        # Compared as bytes: compare_digest refuses non-ASCII str, and a URL may carry anything.
        return hmac.compare_digest(self.signature(path, expires).encode(), signature.encode("utf-8", "replace"))
