"""Fonts and text layout for the preview's captions (the prompt card, labels, the watermark).

Works offline: a system DejaVu or CJK font when one is installed, else Pillow's built-in scalable
font (`ImageFont.load_default(size=...)`, Pillow >= 10.1). The same machine always picks the same
font, which keeps renders deterministic.
"""

from __future__ import annotations

import re
from functools import lru_cache
from pathlib import Path

from PIL import ImageFont

Font = ImageFont.FreeTypeFont | ImageFont.ImageFont

_LATIN_FONTS = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/TTF/DejaVuSans.ttf",
    "/Library/Fonts/Arial Unicode.ttf",
)
_BOLD_FONTS = (
    "/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf",
    "/usr/share/fonts/TTF/DejaVuSans-Bold.ttf",
)
# Prompts are often Chinese; DejaVu and Pillow's font have no CJK glyphs.
_CJK_FONTS = (
    "/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/noto-cjk/NotoSansCJK-Regular.ttc",
    "/usr/share/fonts/truetype/wqy/wqy-microhei.ttc",
    "/usr/share/fonts/truetype/droid/DroidSansFallbackFull.ttf",
)
_CJK_RANGES = "\u2e80-\u9fff\uac00-\ud7af\uf900-\ufaff\uff00-\uffef"
_CJK = re.compile(f"[{_CJK_RANGES}]")
# A token is a run of non-space, non-CJK characters, or a single CJK character (CJK text breaks
# between any two characters).
_TOKEN = re.compile(f"[{_CJK_RANGES}]|[^\\s{_CJK_RANGES}]+")
ELLIPSIS = "..."


@lru_cache(maxsize=64)
def load_font(size: int, bold: bool = False, cjk: bool = False) -> Font:
    """A scalable font of `size` pixels; `cjk` prefers a font with Chinese, Japanese and Korean."""
    candidates = (_CJK_FONTS if cjk else ()) + (_BOLD_FONTS if bold else ()) + _LATIN_FONTS
    for candidate in candidates:
        if Path(candidate).is_file():
            return ImageFont.truetype(candidate, size)
    return ImageFont.load_default(size=size)


def needs_cjk(text: str) -> bool:
    return _CJK.search(text) is not None


def wrap(text: str, font: Font, max_width: float) -> list[str]:
    """Greedy line breaking of `text` at `max_width` pixels. Explicit newlines are kept; a word
    wider than a line is broken between characters."""
    lines: list[str] = []
    for paragraph in text.splitlines() or [""]:
        line = ""
        previous_end = 0
        for match in _TOKEN.finditer(paragraph):
            token = match.group()
            # Keep a space only where the prompt had one (CJK characters join without).
            spaced = match.start() > previous_end
            previous_end = match.end()
            candidate = f"{line} {token}" if line and spaced else f"{line}{token}"
            if font.getlength(candidate) <= max_width:
                line = candidate
                continue
            if line:
                lines.append(line)
            line = ""
            while font.getlength(token) > max_width and len(token) > 1:
                cut = _longest_prefix(token, font, max_width)
                lines.append(token[:cut])
                token = token[cut:]
            line = token
        lines.append(line)
    return lines


def _longest_prefix(token: str, font: Font, max_width: float) -> int:
    low, high = 1, len(token)
    while low < high:
        middle = (low + high + 1) // 2
        if font.getlength(token[:middle]) <= max_width:
            low = middle
        else:
            high = middle - 1
    return low


def _at_most_what_fits(text: str, box: tuple[int, int], min_size: int) -> str:
    """`text` cut to more characters than the box could show at the smallest size (no glyph is
    narrower than a third of the size): wrapping measures the text again for every line it cuts,
    so a prompt of a million characters would hold a render for hours to draw a few hundred."""
    width, height = box
    per_line = width // max(1, min_size // 3) + 1
    lines = height // max(1, round(min_size * 1.3)) + 1
    limit = per_line * lines
    return text if len(text) <= limit else text[:limit] + ELLIPSIS


def fit(text: str, box: tuple[int, int], max_size: int, min_size: int) -> tuple[Font, list[str], int]:
    """The largest font size in [min_size, max_size] at which `text` wraps into `box`
    (width, height), with its lines and line height. At the smallest size, lines that do not fit
    are cut and the last kept line ends with an ellipsis."""
    width, height = box
    text = _at_most_what_fits(text, box, min_size)
    cjk = needs_cjk(text)
    size = max_size
    while True:
        font = load_font(size, cjk=cjk)
        line_height = round(size * 1.3)
        lines = wrap(text, font, width)
        if len(lines) * line_height <= height or size <= min_size:
            break
        size = max(min_size, int(size * 0.85))
    capacity = max(1, height // line_height)
    if len(lines) > capacity:
        lines = lines[:capacity]
        last = lines[-1]
        while last and font.getlength(last + ELLIPSIS) > width:
            last = last[:-1]
        lines[-1] = last.rstrip() + ELLIPSIS
    return font, lines, line_height
