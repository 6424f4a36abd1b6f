"""The uploads a submission sent, stored once each (in the bucket, or as files in the data directory;
named by their hash) so it can be rerun without megabytes of Base64 in every row."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

from .view import View

STORED_PREFIX = "journal-input:"


class StoredInputsMixin(View):
    @property
    def inputs_dir(self) -> Path:
        root = self.path.parent / "inputs"
        return root / self._scope.folder if self._scope is not None else root

    def _stash_inline_data(self, request: dict[str, Any]) -> dict[str, Any]:
        """The request with each Base64 data URL stored once (in the bucket, or as a file; named by its
        hash) and replaced by a reference: the journal keeps uploads so a submission can be rerun,
        without megabytes of Base64 in every row."""
        from ..spec.media import decode_data_url

        request = json.loads(json.dumps(request))
        for payload in _payload_urls(request):
            if not payload["url"].startswith("data:"):
                continue
            mime, raw = decode_data_url(payload["url"])
            mime = mime or "application/octet-stream"
            name = hashlib.sha256(raw).hexdigest()[:32]
            if self._store.bucket is not None:
                self._store.bucket.store_input(self._folder, name, raw, mime)
            else:
                self.inputs_dir.mkdir(parents=True, exist_ok=True)
                path = self.inputs_dir / name
                if not path.exists():
                    path.write_bytes(raw)
            payload["url"] = f"{STORED_PREFIX}{name};{mime}"
        return request

    def _stored_input(self, name: str) -> bytes:
        """A stored upload: in the bucket when there is one, else (or when it is not there: stored
        before the bucket was configured) in the scope's folder; for rows from before scopes (which
        only a view that sees them holds), in the shared folder they were written to; for the
        unscoped view, which holds every scope's rows, in any scope's folder."""
        if self._store.bucket is not None:
            try:
                return self._store.bucket.read_input(self._folder, name)
            except FileNotFoundError:
                pass
        own = self.inputs_dir / name
        if own.exists() or (self._scope is not None and not self._scope.include_unscoped):
            return own.read_bytes()
        shared = self.path.parent / "inputs"
        if self._scope is None:
            return next(iter(sorted(shared.glob(f"*/{name}"))), own).read_bytes()
        return (shared / name).read_bytes()

    def restore_request(self, request: dict[str, Any]) -> dict[str, Any]:
        """A journaled request with stored inputs turned back into data URLs, ready to resend."""
        from ..spec.media import encode_data_url

        request = json.loads(json.dumps(request))
        for payload in _payload_urls(request):
            if payload["url"].startswith(STORED_PREFIX):
                name, _, mime = payload["url"].removeprefix(STORED_PREFIX).partition(";")
                if "/" in name or "\\" in name or name.startswith("."):
                    raise ValueError(f"not a stored input name: {name!r}")
                payload["url"] = encode_data_url(self._stored_input(name), mime)
        return request


def _payload_urls(request: dict[str, Any]):
    for item in request.get("content", []):
        for kind in ("image_url", "video_url", "audio_url"):
            payload = item.get(kind)
            if isinstance(payload, dict) and isinstance(payload.get("url"), str):
                yield payload
