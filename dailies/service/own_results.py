"""Inputs that are this service's own result URLs are read from disk, not downloaded.

Chaining shots (a previous task's video or last frame as the next task's input) hands the
service one of its own signed URLs. Fetching it over HTTP would need loopback downloads, which
the SSRF guard rightly refuses by default; reading the file directly needs no network, and the
URL's signature and expiry are checked just as the file route checks them.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from ..generator.inputs import InputError, InputResolver
from .files import ResultFiles
from .signing import UrlSigner


class ServiceInputResolver(InputResolver):
    def __init__(self, *args, signer: UrlSigner, files: ResultFiles, clock: Callable[[], float], **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self._signer = signer
        self._files = files
        self._clock = clock

    def own_file(self, url: str, where: str) -> Path | None:
        """The local file behind one of our signed result URLs; None for any other URL."""
        parts = urlsplit(url)
        segments = parts.path.split("/")
        if parts.scheme not in ("http", "https") or len(segments) != 4 or segments[1] != "files":
            return None
        query = parse_qs(parts.query)
        try:
            expires = int(query["expires"][0])
            signature = query["signature"][0]
        except (KeyError, ValueError, IndexError):
            return None
        if not self._signer.verify(parts.path, expires, signature):
            return None  # not ours (or tampered): treat it as any other URL
        if self._clock() >= expires:
            raise InputError(f"{where}: resource download failed (the result URL has expired)")
        path = self._files.path(segments[2], segments[3])
        if path is None:
            raise InputError(f"{where}: resource download failed (the result no longer exists)")
        return path

    def fetch(self, url: str, where: str, scratch_dir: Path, max_bytes: int | None = None) -> Path:
        own = self.own_file(url, where)
        return own if own is not None else super().fetch(url, where, scratch_dir, max_bytes)

    def read_bytes(self, url: str, where: str, max_bytes: int | None = None) -> bytes:
        own = self.own_file(url, where)
        return own.read_bytes() if own is not None else super().read_bytes(url, where, max_bytes)
