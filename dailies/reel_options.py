"""A reel's options and their defaults (dailies/reel.py makes the reel): apart from it, so that the
CLI's parser (`dailies reel --help`) builds without PyAV, numpy and Pillow, which the core install
(`pip install dailies`) does not have."""

from __future__ import annotations

DEFAULT_SIZE = (1280, 720)
DEFAULT_FPS = 24
SLATE_SECONDS = 1.5


def parse_size(text: str) -> tuple[int, int]:
    """"1280x720" as (1280, 720): both even, at least 16 (yuv420p needs even sides)."""
    try:
        width, height = (int(part) for part in text.lower().split("x"))
    except ValueError:
        raise ValueError(f"not a frame size (WIDTHxHEIGHT): {text!r}") from None
    if width < 16 or height < 16 or width % 2 or height % 2:
        raise ValueError(f"a frame size needs even sides of at least 16 pixels, got {text!r}")
    return width, height
