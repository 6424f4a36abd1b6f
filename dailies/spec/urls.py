"""What a URL in a request may be (spec 2.2 and section 6), as pure functions: no DNS, no network.

A media URL (`image_url.url`, `video_url.url`, `audio_url.url`) is one of:

- a public `http(s)` URL;
- a Base64 data URL of the item's kind: `data:image/<format>;base64,...` for images, as spec 2.2
  says; `data:video/...` and `data:audio/...` for videos and audio (beyond the spec: the CLI sends
  local files that way; `media.check_inline_material` checks what they hold at create);
- `asset://<ASSET_ID>`.

Anything else (`javascript:`, `file:`, `ftp:`, a data URL of text or HTML, ...) would only fail
later, in the render; it is refused at create, naming the field. A `callback_url` is an `http(s)`
URL with a host.

`host_problem` judges a URL's host from its text alone: an IP literal in a range the service must
never reach (loopback, private, link-local where cloud metadata services answer, multicast,
unspecified, reserved), in any spelling the resolver accepts (`2130706433`, `0x7f.1`), or a name
that always means such a place (`localhost`, `*.internal`, ...). Names that need DNS are not
judged here: the fetch resolves them and refuses private addresses then (`dailies.netguard`).
"""

from __future__ import annotations

import ipaddress
import re
import unicodedata
from collections.abc import Callable, Iterator
from typing import Any
from urllib.parse import urlsplit

from . import limits as L
from .problems import Problem

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address

ASSET_SCHEME = "asset://"
# Asset ids name files in one folder: no separators and no "..", so an id cannot leave it.
ASSET_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,199}$")
MEDIA_KINDS = ("image_url", "video_url", "audio_url")
# The MIME family a data URL of each kind carries.
_DATA_FAMILY = {"image_url": "image", "video_url": "video", "audio_url": "audio"}
_DATA_HEADER = re.compile(r"data:(?P<mime>[\w.+-]+/[\w.+-]+)?(?:;[\w.+-]+=[^;,]*)*(?P<b64>;base64)?",
                          re.ASCII)
# Only the part before the comma is looked at: the payload may be 64 MB.
_DATA_HEADER_MAX = 256
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*):")

# Names that always mean this machine (RFC 6761) or a network the service must not reach.
_LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})
_INTERNAL_NAMES = frozenset({"metadata", "metadata.goog", "instance-data"})
# `.internal` is reserved for private use (GCP's metadata.google.internal); `.local` is mDNS.
_INTERNAL_SUFFIXES = (".internal", ".local")


# ---------- addresses ----------


def blocked_reason(address: IPAddress, allow_loopback: bool, allow_private: bool = False) -> str | None:
    """Why `address` may not be reached, or None when it may.

    Link-local stays blocked even with `allow_private`: it holds cloud metadata endpoints
    (169.254.169.254), the classic target of request forgery.
    """
    # An IPv6 address that embeds an IPv4 one (::ffff:10.0.0.1) is judged by the IPv4 address.
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    # Order matters: 127.0.0.1 and 169.254.x.x also count as "private" for the ipaddress module.
    if address.is_unspecified:
        return "unspecified"
    if address.is_loopback:
        return None if allow_loopback else "loopback"
    if address.is_link_local:
        return "link-local"
    if address.is_multicast:
        return "multicast"
    if address.is_reserved:
        return "reserved"
    if address.is_private:
        return None if allow_private else "private"
    if not address.is_global:
        # Shared address space (100.64.0.0/10) and other ranges that are neither private nor public.
        return None if allow_private else "not globally routable"
    return None


_IPV4_PART = re.compile(r"^(?:0[xX][0-9a-fA-F]{0,8}|[0-9]{1,12})$")


def _ipv4_part(text: str) -> int | None:
    if text[:2] in ("0x", "0X"):
        return int(text[2:] or "0", 16)
    if len(text) > 1 and text.startswith("0"):
        return int(text, 8) if all(c in "01234567" for c in text) else None
    return int(text)


def ipv4_any_form(host: str) -> ipaddress.IPv4Address | None:
    """The IPv4 address `host` spells in any form `inet_aton` (and so `getaddrinfo`) reads it:
    `127.0.0.1`, `2130706433`, `0x7f.1`, `0177.0.0.01`; None for anything else."""
    parts = host.split(".")
    if not 1 <= len(parts) <= 4 or not all(_IPV4_PART.match(p) for p in parts):
        return None
    read = [_ipv4_part(p) for p in parts]
    values = [v for v in read if v is not None]
    if len(values) != len(read):
        return None
    *leading, last = values
    # Each leading part is one byte; the last fills the bytes that remain.
    if any(v > 255 for v in leading) or last >= 256 ** (4 - len(leading)):
        return None
    number = 0
    for v in leading:
        number = number * 256 + v
    return ipaddress.IPv4Address(number * 256 ** (4 - len(leading)) + last)


def literal_address(host: str) -> IPAddress | None:
    """The address a host names without DNS (an IP literal in any spelling), or None for a name."""
    try:
        return ipaddress.ip_address(host.split("%", 1)[0])  # an IPv6 zone ("fe80::1%eth0") is not an address
    except ValueError:
        return ipv4_any_form(host)


def canonical_host(url: str) -> str | None:
    """The URL's host as a resolver sees it: lower case, compatibility forms folded (`①②⑦.0.0.1`
    is 127.0.0.1 to IDNA), no trailing dot. None when there is no host or the URL does not parse."""
    try:
        host = urlsplit(url).hostname
    except ValueError:
        return None
    if not host:
        return None
    return unicodedata.normalize("NFKC", host).lower().rstrip(".") or None


def host_reason(host: str, allow_loopback: bool, allow_private: bool = False) -> str | None:
    """Why a host (as `canonical_host` gives it) is refused without resolving it, or None."""
    address = literal_address(host)
    if address is not None:
        return blocked_reason(address, allow_loopback, allow_private)
    if host in _LOOPBACK_NAMES or host.endswith(".localhost"):
        return None if allow_loopback else "loopback"
    if host in _INTERNAL_NAMES or host.endswith(_INTERNAL_SUFFIXES):
        return None if allow_private else "internal"
    return None


def host_problem(url: str, where: str, *, allow_loopback: bool, allow_private: bool = False) -> Problem | None:
    """A problem when an http(s) URL's host is, by its text alone, a place the service must not
    reach; None for other URLs and for names that need DNS (the fetch judges those)."""
    scheme = _scheme(url)
    if scheme not in ("http", "https"):
        return None
    host = canonical_host(url)
    if host is None:
        return None
    reason = host_reason(host, allow_loopback, allow_private)
    if reason is None:
        return None
    kind = "name" if literal_address(host) is None else "address"
    return Problem(where, f"the host {_shown(host)} is {_a(reason)} {reason} {kind}, which the service does not "
                          "reach; give a public URL, a data URL or an asset id")


# ---------- shapes ----------


def _a(word: str) -> str:
    return "an" if word[:1] in ("a", "e", "i", "o", "u") else "a"


def _scheme(url: str) -> str:
    match = _SCHEME.match(url)
    return match.group(1).lower() if match else ""


def _shown(text: str, limit: int = 40) -> str:
    return repr(text if len(text) <= limit else text[:limit] + "…")


def _http_problem(url: str) -> str | None:
    """What is wrong with an http(s) URL's shape, or None."""
    if len(url) > L.URL_MAX_CHARS:
        return f"is {len(url):,} characters long; at most {L.URL_MAX_CHARS:,}"
    if _CONTROL.search(url):
        return "holds control characters (a line break, a tab, NUL)"
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises ValueError for a port that is not a number in range
    except ValueError as exc:
        return f"is not a valid URL ({exc})"
    if not parts.hostname:
        return "has no host"
    return None


def _data_problem(url: str, kind: str) -> str | None:
    family = _DATA_FAMILY[kind]
    comma = url.find(",", 0, _DATA_HEADER_MAX)
    header = _DATA_HEADER.fullmatch(url[:comma]) if comma >= 0 else None
    if header is None:
        return f"is not a data URL of the form data:{family}/<format>;base64,<data>"
    mime = (header.group("mime") or "").lower()
    if not mime.startswith(family + "/"):
        return (f"is a data URL of {_shown(mime or 'no type')}; it must hold {_a(family)} "
                f"{family} (data:{family}/<format>;base64,...)")
    if not header.group("b64"):
        return "is a data URL without ';base64'; only Base64 data URLs are accepted"
    return None


def _asset_problem(url: str) -> str | None:
    asset_id = url[len(ASSET_SCHEME):]
    if not ASSET_ID.match(asset_id) or ".." in asset_id:
        return (f"holds the asset id {_shown(asset_id)}; an asset id is letters, digits, '_', '-' and '.', "
                "at most 200, with no '..'")
    return None


def _accepted(kind: str) -> str:
    family = _DATA_FAMILY[kind]
    return (f"a public http(s) URL, a Base64 data URL of {_a(family)} {family} "
            f"(data:{family}/<format>;base64,...) or asset://<ASSET_ID>")


def media_url_problem(url: str, kind: str, where: str) -> Problem | None:
    """The problem with a media URL's scheme or shape, or None. `kind` is `image_url`,
    `video_url` or `audio_url`; `where` names the field (`content[1].image_url.url`)."""
    scheme = _scheme(url)
    if scheme in ("http", "https"):
        why = _http_problem(url)
    elif scheme == "data":
        why = _data_problem(url, kind) if url.startswith("data:") else "write the scheme in lower case: data:"
    elif scheme == "asset":
        why = _asset_problem(url) if url.startswith(ASSET_SCHEME) else "write the scheme as asset://<ASSET_ID>"
    else:
        got = f"a URL with the scheme {scheme}:" if scheme else f"{_shown(url)}, which has no scheme"
        why = f"must be {_accepted(kind)}; got {got}"
    return Problem(where, why) if why else None


def callback_url_problem(url: str, where: str = "callback_url") -> Problem | None:
    """The problem with a callback URL's scheme or shape, or None. Where its host resolves to is
    the service's to judge (`dailies.netguard`): that needs DNS and the operator's settings."""
    scheme = _scheme(url)
    if scheme not in ("http", "https"):
        got = f"a URL with the scheme {scheme}:" if scheme else f"{_shown(url)}, which has no scheme"
        return Problem(where, f"must be an http or https URL; got {got}")
    why = _http_problem(url)
    return Problem(where, why) if why else None


# ---------- a request's URLs ----------


def media_urls(content: list[Any]) -> Iterator[tuple[str, str, str]]:
    """(kind, field path, url) of every media URL of a request's content items."""
    for i, item in enumerate(content):
        if item.type in MEDIA_KINDS:
            payload = getattr(item, item.type, None)
            if payload is not None:
                yield item.type, f"content[{i}].{item.type}.url", payload.url


def check_url_shapes(content: list[Any], callback_url: str | None) -> list[Problem]:
    """Every media URL and the callback URL have a scheme and shape the service takes."""
    problems = [p for kind, where, url in media_urls(content) if (p := media_url_problem(url, kind, where))]
    if callback_url is not None and (p := callback_url_problem(callback_url)):
        problems.append(p)
    return problems


def _never(url: str) -> bool:
    return False


def check_media_hosts(content: list[Any], *, allow_loopback: bool,
                      trusted: Callable[[str], bool] = _never) -> list[Problem]:
    """Media URLs whose host is a place the service must not reach, judged without DNS. `trusted`
    exempts URLs the caller vouches for (the service's own signed result URLs, read from disk)."""
    problems = []
    for _kind, where, url in media_urls(content):
        problem = host_problem(url, where, allow_loopback=allow_loopback)
        if problem is not None and not trusted(url):
            problems.append(problem)
    return problems
