"""Pre-rendered RGBA patches blended onto frames: the "AI-generated" watermark.

A patch is drawn once with Pillow and kept premultiplied, so blending it onto a frame is a few
integer numpy operations over the patch's own rectangle, not over the frame. It is kept both in RGB
and in YUV, for the two kinds of frames the scenes give (see `encode`): alpha blending commutes with
the affine RGB to YUV conversion, so blending the patch's YUV onto the planes gives what blending
its RGB and converting would, up to rounding and chroma subsampling.
"""

from __future__ import annotations

import av
import numpy as np
from PIL import Image, ImageDraw

from .encode import is_yuv420, yuv420_planes
from .typography import load_font

WATERMARK_TEXT = "AI-generated"


class _Patch:
    """Premultiplied colour and inverse alpha of one picture or plane, to blend as
    (frame * (255 - a) + colour * a) / 255 with the colour term computed once."""

    def __init__(self, premultiplied: np.ndarray, alpha: np.ndarray) -> None:
        self._premultiplied = np.rint(premultiplied).astype(np.uint16) + 127
        self._inverse_alpha = 255 - np.rint(alpha).astype(np.uint16)

    def apply(self, region: np.ndarray) -> None:
        blended = region * self._inverse_alpha
        blended += self._premultiplied
        blended //= 255
        region[...] = blended


class Overlay:
    """An RGBA patch at a fixed place in the frame. Its size and place are even, so that it covers
    whole 2 x 2 blocks of a yuv420p frame's chroma."""

    def __init__(self, rgba: np.ndarray, left: int, top: int) -> None:
        self.height, self.width = rgba.shape[:2]
        if left % 2 or top % 2 or self.width % 2 or self.height % 2:
            raise ValueError("an overlay needs an even size and place")
        self.left = left
        self.top = top
        alpha = rgba[..., 3].astype(np.float64)
        self._rgb = _Patch(rgba[..., :3] * alpha[..., None], alpha[..., None])
        # The patch's colours in YUV, converted as the encoder converts RGB frames, one pixel each.
        yuv = av.VideoFrame.from_ndarray(np.ascontiguousarray(rgba[..., :3]), format="rgb24")
        y, u, v = yuv.reformat(format="yuv444p").to_ndarray().astype(np.float64)
        # Each chroma sample covers 2 x 2 pixels: their mean coverage and mean premultiplied colour.
        chroma_alpha = _quarter(alpha)
        self._yuv = (
            _Patch(y * alpha, alpha),
            _Patch(_quarter(u * alpha), chroma_alpha),
            _Patch(_quarter(v * alpha), chroma_alpha),
        )

    def apply(self, frame: np.ndarray) -> None:
        """Blend the patch onto `frame` (RGB or yuv420p planes) in place."""
        if not is_yuv420(frame):
            self._rgb.apply(frame[self.top : self.top + self.height, self.left : self.left + self.width])
            return
        for plane, patch, scale in zip(yuv420_planes(frame), self._yuv, (1, 2, 2), strict=True):
            top, left = self.top // scale, self.left // scale
            patch.apply(plane[top : top + self.height // scale, left : left + self.width // scale])


def _quarter(values: np.ndarray) -> np.ndarray:
    """The mean of each 2 x 2 block."""
    height, width = values.shape
    return values.reshape(height // 2, 2, width // 2, 2).mean(axis=(1, 3))


def watermark(width: int, height: int) -> Overlay:
    """The "AI-generated" mark in the lower right corner, sized to the frame: white text with a
    soft dark outline so that it reads on bright and dark pictures alike."""
    short_side = min(width, height)
    size = max(12, short_side // 24)
    margin = max(6, short_side // 40)
    font = load_font(size, bold=True)
    # Whole pixels (typed float in Pillow's hints, for fonts other than ours).
    left, top, right, bottom = (int(edge) for edge in font.getbbox(WATERMARK_TEXT, stroke_width=2))
    # At least 2 pixels of clear border, rounded up to an even size.
    patch_width, patch_height = (right - left + 5) // 2 * 2, (bottom - top + 5) // 2 * 2
    patch = Image.new("RGBA", (patch_width, patch_height), (0, 0, 0, 0))
    draw = ImageDraw.Draw(patch)
    draw.text(
        (2 - left, 2 - top), WATERMARK_TEXT, font=font,
        fill=(255, 255, 255, 215), stroke_width=2, stroke_fill=(0, 0, 0, 140),
    )
    # Rounded down to even: at most a pixel further from the corner than the margin.
    return Overlay(
        np.asarray(patch), (width - margin - patch_width) // 2 * 2, (height - margin - patch_height) // 2 * 2
    )
