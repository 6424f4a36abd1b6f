"""Pre-rendered RGBA patches blended onto frames: the "AI-generated" watermark.

A patch is drawn once with Pillow and kept premultiplied, so blending it onto a frame is a few
integer numpy operations over the patch's own rectangle, not over the frame.
"""

from __future__ import annotations

import numpy as np
from PIL import Image, ImageDraw

from .typography import load_font

WATERMARK_TEXT = "AI-generated"


class Overlay:
    """An RGBA patch at a fixed place in the frame."""

    def __init__(self, rgba: np.ndarray, left: int, top: int) -> None:
        alpha = rgba[..., 3:4].astype(np.uint16)
        # Blend as (frame * (255 - a) + colour * a) / 255, with the colour term computed once.
        self._premultiplied = rgba[..., :3].astype(np.uint16) * alpha + 127
        self._inverse_alpha = 255 - alpha
        self.left = left
        self.top = top
        self.height, self.width = rgba.shape[:2]

    def apply(self, frame: np.ndarray) -> None:
        """Blend the patch onto `frame` (H x W x 3, uint8) in place."""
        region = frame[self.top : self.top + self.height, self.left : self.left + self.width]
        blended = region * self._inverse_alpha
        blended += self._premultiplied
        blended //= 255
        region[...] = blended


def watermark(width: int, height: int) -> Overlay:
    """The "AI-generated" mark in the lower right corner, sized to the frame: white text with a
    soft dark outline so that it reads on bright and dark pictures alike."""
    short_side = min(width, height)
    size = max(12, short_side // 24)
    margin = max(6, short_side // 40)
    font = load_font(size, bold=True)
    left, top, right, bottom = font.getbbox(WATERMARK_TEXT, stroke_width=2)
    patch = Image.new("RGBA", (right - left + 4, bottom - top + 4), (0, 0, 0, 0))
    draw = ImageDraw.Draw(patch)
    draw.text(
        (2 - left, 2 - top), WATERMARK_TEXT, font=font,
        fill=(255, 255, 255, 215), stroke_width=2, stroke_fill=(0, 0, 0, 140),
    )
    rgba = np.asarray(patch)
    patch_height, patch_width = rgba.shape[:2]
    return Overlay(rgba, width - margin - patch_width, height - margin - patch_height)
