"""Fetching the media a request points at: Base64 data URLs, http(s) URLs and `asset://<id>`.

A failure is an `InputError` in the real service's style: code `InvalidParameter`, message naming
the content item (`content[1].image_url`) and saying "resource download failed". The service puts
that pair into the failed task's `error`.
"""

from __future__ import annotations

import io
import re
import tempfile
import time
from pathlib import Path
from typing import IO

import httpx

from dailies import netguard
from dailies.spec.limits import VIDEO_MAX_BYTES
from dailies.spec.media import DataUrlError, decode_data_url
from dailies.spec.models import ContentItem

DOWNLOAD_FAILED = "resource download failed"
ASSET_SCHEME = "asset://"
# Asset ids name files in one folder: no separators, no "..", so an id cannot leave the folder.
_ASSET_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$")
_CHUNK = 64 * 1024


class InputError(Exception):
    """A content item's resource could not be fetched or read.

    `code` and `message` are what the failed task's record shows in `error`.
    """

    def __init__(self, message: str, code: str = "InvalidParameter") -> None:
        super().__init__(message)
        self.code = code
        self.message = message


def content_path(index: int, item: ContentItem) -> str:
    """The path of a content item's media field, as error messages name it: `content[1].image_url`."""
    return f"content[{index}].{item.type}"


def item_url(item: ContentItem) -> str | None:
    """The URL a media content item carries, or None for text and draft items."""
    media = {"image_url": item.image_url, "video_url": item.video_url, "audio_url": item.audio_url}.get(item.type)
    return media.url if media is not None else None


class InputResolver:
    """Turns a content item's URL into bytes or a local file.

    - `data:` URLs are decoded (Base64 only, as the specification says).
    - `http://` and `https://` URLs are downloaded: the host must resolve to public addresses
      (`dailies.netguard`; loopback only with `allow_loopback`, private ranges only with
      `allow_private`), redirects are followed by hand so every hop is checked, the body is
      streamed and the download stops past `max_bytes`, and the whole download must finish
      within `timeout` seconds.
    - `asset://<id>` is the file `<data_dir>/assets/<id>` or `<data_dir>/assets/<id>.<ext>`.

    `transport` lets tests or the service plug in an httpx transport.
    """

    def __init__(
        self,
        data_dir: Path,
        allow_loopback: bool = False,
        max_bytes: int = VIDEO_MAX_BYTES,
        timeout: float = 30.0,
        *,
        allow_private: bool = False,
        max_redirects: int = 5,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        self.data_dir = Path(data_dir)
        self.allow_loopback = allow_loopback
        self.allow_private = allow_private
        self.max_bytes = max_bytes
        self.timeout = timeout
        self.max_redirects = max_redirects
        self._transport = transport

    @property
    def assets_dir(self) -> Path:
        return self.data_dir / "assets"

    def fetch(self, url: str, where: str, scratch_dir: Path, max_bytes: int | None = None) -> Path:
        """A local file holding the resource at `url`.

        Assets are returned in place (read them, never write them); anything else is written to
        a new file in `scratch_dir`, which the caller cleans up. `where` names the content item
        in error messages; `max_bytes` tightens the resolver's own limit for this item.
        """
        limit = self._limit(max_bytes)
        if url.startswith(ASSET_SCHEME):
            return self._asset_file(url, where, limit)
        with tempfile.NamedTemporaryFile(dir=scratch_dir, prefix="input-", delete=False) as sink:
            target = Path(sink.name)
            try:
                self._copy_into(url, where, sink, limit)
            except BaseException:
                sink.close()
                target.unlink(missing_ok=True)
                raise
        return target

    def read_bytes(self, url: str, where: str, max_bytes: int | None = None) -> bytes:
        """The resource at `url` as bytes (for small inputs such as images)."""
        limit = self._limit(max_bytes)
        if url.startswith(ASSET_SCHEME):
            return self._asset_file(url, where, limit).read_bytes()
        sink = io.BytesIO()
        self._copy_into(url, where, sink, limit)
        return sink.getvalue()

    # ---------- one source per scheme ----------

    def _limit(self, max_bytes: int | None) -> int:
        return self.max_bytes if max_bytes is None else min(self.max_bytes, max_bytes)

    def _copy_into(self, url: str, where: str, sink: IO[bytes], limit: int) -> None:
        scheme = url.split(":", 1)[0].lower() if ":" in url else ""
        if scheme == "data":
            sink.write(_decode_data_url(url, where, limit))
        elif scheme in ("http", "https"):
            self._download(url, where, sink, limit)
        else:
            raise InputError(f"{where}: {DOWNLOAD_FAILED} (unsupported URL scheme {scheme or url[:16]!r})")

    def _asset_file(self, url: str, where: str, limit: int) -> Path:
        asset_id = url[len(ASSET_SCHEME):]
        if not _ASSET_ID.match(asset_id) or ".." in asset_id:
            raise InputError(f"{where}: {DOWNLOAD_FAILED} (invalid asset id {asset_id!r})")
        exact = self.assets_dir / asset_id
        candidates = [exact] if exact.is_file() else sorted(self.assets_dir.glob(f"{asset_id}.*"))
        candidates = [path for path in candidates if path.is_file()]
        if not candidates:
            raise InputError(f"{where}: {DOWNLOAD_FAILED} (asset {asset_id!r} not found)")
        path = candidates[0]
        if path.stat().st_size > limit:
            raise InputError(f"{where}: {DOWNLOAD_FAILED} (asset larger than {limit} bytes)")
        return path

    def _download(self, url: str, where: str, sink: IO[bytes], limit: int) -> None:
        def fail(reason: str) -> InputError:
            return InputError(f"{where}: {DOWNLOAD_FAILED} ({reason})")

        deadline = time.monotonic() + self.timeout
        current = url
        # Redirects are followed here, not by httpx, so that each hop's host passes the guard; and
        # no proxy from the environment, so the connection goes to the host the guard checked.
        with httpx.Client(
            timeout=self.timeout, follow_redirects=False, transport=self._transport, trust_env=False
        ) as client:
            for _hop in range(self.max_redirects + 1):
                try:
                    # Sent to the very address checked: a name that answers otherwise on a second
                    # lookup (DNS rebinding) cannot turn the connection inward.
                    target = netguard.pinned(current, self.allow_loopback, self.allow_private,
                                             lookup_timeout=deadline - time.monotonic())
                except netguard.NetguardError as exc:
                    raise fail(str(exc)) from exc
                try:
                    with client.stream("GET", target.url, headers=target.headers,
                                       extensions=target.extensions) as response:
                        if response.is_redirect:
                            location = response.headers.get("location")
                            if not location:
                                raise fail(f"HTTP {response.status_code} without Location")
                            current = str(httpx.URL(current).join(location))
                            continue
                        if response.status_code != 200:
                            raise fail(f"HTTP {response.status_code}")
                        declared = response.headers.get("content-length", "")
                        if declared.isdigit() and int(declared) > limit:
                            raise fail(f"larger than {limit} bytes")
                        received = 0
                        for chunk in response.iter_bytes(_CHUNK):
                            received += len(chunk)
                            if received > limit:
                                raise fail(f"larger than {limit} bytes")
                            if time.monotonic() > deadline:
                                raise fail(f"timed out after {self.timeout:g} s")
                            sink.write(chunk)
                        return
                except httpx.TimeoutException as exc:
                    raise fail(f"timed out after {self.timeout:g} s") from exc
                except httpx.HTTPError as exc:
                    raise fail(type(exc).__name__) from exc
            raise fail(f"more than {self.max_redirects} redirects")


def _decode_data_url(url: str, where: str, limit: int) -> bytes:
    # Base64 grows data by 4/3: refuse a payload too large before decoding it.
    if (len(url) - url.find(",") - 1) * 3 // 4 > limit + 3:
        raise InputError(f"{where}: data URL larger than {limit} bytes")
    try:
        # The same decoder the request rules use, so what passed validation decodes here.
        _mime, data = decode_data_url(url)
    except DataUrlError as exc:
        raise InputError(f"{where}: {exc}") from exc
    if len(data) > limit:
        raise InputError(f"{where}: data URL larger than {limit} bytes")
    return data
