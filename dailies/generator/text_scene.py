"""The text-to-video scene: the prompt's words on a card over a moving, seeded background.

It follows the scene contract of `scenes` (exactly `count` frames, streamed, deterministic).
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np
from PIL import Image, ImageDraw

from .scenes import progress_of
from .seeding import stable_rng
from .typography import fit, load_font

PREVIEW_LABEL = "PREVIEW"


def _hsv(hue: float, saturation: float, value: float) -> np.ndarray:
    """An RGB colour (floats in [0, 255]) from hue, saturation and value in [0, 1]."""
    hue = (hue % 1.0) * 6.0
    sector = int(hue) % 6
    fraction = hue - int(hue)
    p = value * (1 - saturation)
    q = value * (1 - saturation * fraction)
    t = value * (1 - saturation * (1 - fraction))
    rgb = [(value, t, p), (q, value, p), (p, value, t), (p, q, value), (t, p, value), (value, p, q)][sector]
    return np.array(rgb, dtype=np.float32) * 255.0


class _Glow:
    """A soft light that wanders over the background along a Lissajous path. Drawn with a
    "lighten" blend (per-pixel maximum): one cheap numpy pass over the sprite."""

    def __init__(self, rng: np.random.Generator, colour: np.ndarray, width: int, height: int) -> None:
        radius = int(min(width, height) * rng.uniform(0.08, 0.15))
        axis = np.arange(-radius, radius, dtype=np.float32) + 0.5
        falloff = np.exp(-3.0 * (axis[None, :] ** 2 + axis[:, None] ** 2) / radius**2)
        self.sprite = (falloff[..., None] * colour).astype(np.uint8)
        self.radius = radius
        self.width, self.height = width, height
        self.amplitude = rng.uniform(0.25, 0.45, size=2) * (width, height)
        self.frequency = rng.uniform(0.04, 0.12, size=2)
        self.phase = rng.uniform(0.0, 2 * math.pi, size=2)

    def draw(self, frame: np.ndarray, seconds: float) -> None:
        centre_x, centre_y = (self.width / 2, self.height / 2) + self.amplitude * np.sin(
            2 * math.pi * self.frequency * seconds + self.phase
        )
        left, top = int(centre_x) - self.radius, int(centre_y) - self.radius
        size = 2 * self.radius
        # Clip the sprite to the frame.
        x0, y0 = max(0, left), max(0, top)
        x1, y1 = min(self.width, left + size), min(self.height, top + size)
        if x0 >= x1 or y0 >= y1:
            return
        region = frame[y0:y1, x0:x1]
        np.maximum(region, self.sprite[y0 - top : y1 - top, x0 - left : x1 - left], out=region)


class TextScene:
    """Text-to-video: a card with the prompt's words over a slowly panning gradient that wandering
    lights play across, and a bar that fills with time. Colours, light paths and pan follow from the
    prompt and the seed. The card carries a "PREVIEW" label with the seed, so the picture says
    itself that it is not the model's output.

    Cheap per frame by design: the background is rendered once, wider than the frame, and each frame
    is a slice of it; the card is pre-drawn and copied; the lights are small sprites.
    """

    PAN_PERIOD_SECONDS = 10.0

    def __init__(self, prompt: str, width: int, height: int, count: int, fps: int, seed: int) -> None:
        self.width, self.height, self.count, self.fps = width, height, count, fps
        rng = stable_rng("text", seed, prompt)
        base_hue = rng.random()
        self.pan_range = (width // 8) & ~1
        self.background = _background(rng, base_hue, width + self.pan_range, height)
        self.glows = [
            _Glow(rng, _hsv(base_hue + rng.uniform(0.1, 0.9), 0.55, rng.uniform(0.75, 1.0)), width, height)
            for _ in range(3)
        ]
        self.card, self.card_origin, self.card_corner, self.bar = _card(
            prompt, seed, width, height, _hsv(base_hue, 0.5, 0.16), _hsv(base_hue + 0.5, 0.6, 0.95)
        )
        self._frame = np.empty((height, width, 3), dtype=np.uint8)

    def frames(self) -> Iterator[np.ndarray]:
        frame = self._frame
        card_height, card_width = self.card.shape[:2]
        card_left, card_top = self.card_origin
        corner = self.card_corner.shape[0]
        card_region = frame[card_top : card_top + card_height, card_left : card_left + card_width]
        bar_top, bar_bottom, bar_left, bar_right, bar_colour = self.bar
        for index in range(self.count):
            seconds = index / self.fps
            # Ping-pong pan, at rest at both ends.
            offset = round(self.pan_range * 0.5 * (1 - math.cos(2 * math.pi * seconds / self.PAN_PERIOD_SECONDS)))
            frame[...] = self.background[:, offset : offset + self.width]
            for glow in self.glows:
                glow.draw(frame, seconds)
            # The card is opaque except its rounded corners: plain copies for its middle rows,
            # masked copies for the corner rows only.
            card_region[corner : card_height - corner] = self.card[corner : card_height - corner]
            np.copyto(card_region[:corner], self.card[:corner], where=self.card_corner)
            np.copyto(card_region[card_height - corner :], self.card[card_height - corner :],
                      where=self.card_corner[::-1])
            filled = bar_left + round((bar_right - bar_left) * progress_of(index, self.count))
            card_region[bar_top:bar_bottom, bar_left:filled] = bar_colour
            yield frame


def _background(rng: np.random.Generator, hue: float, width: int, height: int) -> np.ndarray:
    """A diagonal two-colour gradient with a few soft colour clouds, rendered at a quarter of the
    size and scaled up (it is smooth, so nothing is lost, and 4k stays cheap)."""
    small_width, small_height = max(8, width // 4), max(8, height // 4)
    y, x = np.mgrid[0:small_height, 0:small_width].astype(np.float32)
    angle = rng.uniform(0, 2 * math.pi)
    along = x * math.cos(angle) / small_width + y * math.sin(angle) / small_height
    along = (along - along.min()) / max(1e-6, float(along.max() - along.min()))
    start = _hsv(hue, rng.uniform(0.5, 0.8), rng.uniform(0.25, 0.4))
    end = _hsv(hue + rng.uniform(0.15, 0.35), rng.uniform(0.5, 0.8), rng.uniform(0.45, 0.65))
    picture = start + along[..., None] * (end - start)
    for _ in range(4):
        centre_x, centre_y = rng.uniform(0, small_width), rng.uniform(0, small_height)
        spread = rng.uniform(0.15, 0.35) * small_height
        cloud = np.exp(-((x - centre_x) ** 2 + (y - centre_y) ** 2) / (2 * spread**2))
        colour = _hsv(hue + rng.uniform(-0.2, 0.2), 0.6, rng.uniform(0.5, 0.8))
        picture += cloud[..., None] * (colour - picture) * 0.6
    small = Image.fromarray(np.clip(picture, 0, 255).astype(np.uint8))
    return np.asarray(small.resize((width, height), Image.Resampling.BICUBIC))


def _card(
    prompt: str, seed: int, width: int, height: int, fill: np.ndarray, accent: np.ndarray
) -> tuple[np.ndarray, tuple[int, int], np.ndarray, tuple[int, int, int, int, np.ndarray]]:
    """The prompt card: (pixels, (left, top), corner mask of its top rows, progress bar geometry)."""
    short_side = min(width, height)
    padding = max(8, short_side // 24)
    card_width = round(width * 0.8)
    label_font = load_font(max(10, short_side // 30), bold=True)
    label = f"{PREVIEW_LABEL} \u00b7 seed {seed}"
    label_height = int(label_font.getbbox(label)[3])  # whole pixels (typed float in Pillow's hints)
    bar_height = max(3, short_side // 120)
    text = prompt.strip() or "(no prompt)"
    text_box = (card_width - 2 * padding, round(height * 0.7) - 4 * padding - label_height - bar_height)
    font, lines, line_height = fit(text, text_box, max_size=max(12, short_side // 11),
                                   min_size=max(10, short_side // 40))
    card_height = 4 * padding + label_height + len(lines) * line_height + bar_height
    fill_colour = tuple(int(c) for c in fill)
    accent_colour = tuple(int(c) for c in accent)

    card = Image.new("RGB", (card_width, card_height), fill_colour)
    draw = ImageDraw.Draw(card)
    draw.text((padding, padding), label, font=label_font, fill=accent_colour)
    top = 2 * padding + label_height
    for line in lines:
        line_width = font.getlength(line)
        draw.text(((card_width - line_width) / 2, top), line, font=font, fill=(245, 245, 245))
        top += line_height
    bar_top = card_height - padding - bar_height
    track = tuple(int(c * 0.35 + f * 0.65) for c, f in zip(accent_colour, fill_colour, strict=True))
    draw.rectangle((padding, bar_top, card_width - padding - 1, bar_top + bar_height - 1), fill=track)

    radius = max(2, padding // 2)
    mask = Image.new("L", (card_width, card_height), 0)
    ImageDraw.Draw(mask).rounded_rectangle((0, 0, card_width - 1, card_height - 1), radius=radius, fill=255)
    corner_mask = np.asarray(mask)[:radius, :, None] > 127
    origin = ((width - card_width) // 2, (height - card_height) // 2)
    bar = (bar_top, bar_top + bar_height, padding, card_width - padding, np.array(accent_colour, np.uint8))
    return np.asarray(card), origin, corner_mask, bar
