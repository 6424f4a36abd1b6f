"""Pixel sizes, defaults, frame counts and the token formula (DESIGN.md section 3).

One module that the service, the generator and the dashboard's estimate all use.
"""

from __future__ import annotations

from typing import get_args

from .catalog import Generation, find_model
from .limits import DURATION_DEFAULT, FRAMES_PER_SECOND
from .models import Ratio

RESOLUTION_DEFAULT = "720p"
RATIO_DEFAULT = "adaptive"
# With no image to follow, "adaptive" becomes 16:9.
ADAPTIVE_FALLBACK_RATIO = "16:9"
DRAFT_RESOLUTION = "480p"
# A draft is billed at 0.6 of the final price.
DRAFT_TOKEN_FACTOR = 0.6

RATIOS: tuple[str, ...] = get_args(Ratio)
FIXED_RATIOS = tuple(r for r in RATIOS if r != "adaptive")

# Generations 2.0 and 1.5 Pro; "4k" is twice 1080p on each side.
_PIXELS_CURRENT: dict[str, dict[str, tuple[int, int]]] = {
    "480p": {"16:9": (864, 496), "4:3": (752, 560), "1:1": (640, 640),
             "3:4": (560, 752), "9:16": (496, 864), "21:9": (992, 432)},
    "720p": {"16:9": (1280, 720), "4:3": (1112, 834), "1:1": (960, 960),
             "3:4": (834, 1112), "9:16": (720, 1280), "21:9": (1470, 630)},
    "1080p": {"16:9": (1920, 1080), "4:3": (1664, 1248), "1:1": (1440, 1440),
              "3:4": (1248, 1664), "9:16": (1080, 1920), "21:9": (2206, 946)},
}
_PIXELS_CURRENT["4k"] = {r: (w * 2, h * 2) for r, (w, h) in _PIXELS_CURRENT["1080p"].items()}

# Generation 1.0 Pro renders on a 16-pixel grid (the real service's published table).
_PIXELS_1_0: dict[str, dict[str, tuple[int, int]]] = {
    "480p": {"16:9": (864, 480), "4:3": (736, 544), "1:1": (640, 640),
             "3:4": (544, 736), "9:16": (480, 864), "21:9": (960, 416)},
    "720p": {"16:9": (1248, 704), "4:3": (1120, 832), "1:1": (960, 960),
             "3:4": (832, 1120), "9:16": (704, 1248), "21:9": (1504, 640)},
    "1080p": {"16:9": (1920, 1088), "4:3": (1664, 1248), "1:1": (1440, 1440),
              "3:4": (1248, 1664), "9:16": (1088, 1920), "21:9": (2176, 928)},
}


def _ratio_value(ratio: str) -> float:
    w, h = ratio.split(":")
    return int(w) / int(h)


def nearest_ratio(width: int, height: int) -> str:
    """The fixed ratio closest to an image's aspect (compared on a log scale, so 2:1 and 1:2 are
    equally far from 1:1)."""
    import math

    aspect = math.log(width / height)
    return min(FIXED_RATIOS, key=lambda r: abs(math.log(_ratio_value(r)) - aspect))


def resolve_ratio(ratio: str | None, image_size: tuple[int, int] | None = None) -> str:
    """The fixed ratio a request renders at: `adaptive` follows the image, else 16:9."""
    ratio = ratio or RATIO_DEFAULT
    if ratio != "adaptive":
        return ratio
    if image_size is None:
        return ADAPTIVE_FALLBACK_RATIO
    return nearest_ratio(*image_size)


def dimensions(
    model: str,
    resolution: str | None,
    ratio: str | None,
    image_size: tuple[int, int] | None = None,
) -> tuple[int, int]:
    """(width, height) in pixels of a video of this model, resolution and ratio.

    `image_size` is the (width, height) of the first frame or first reference image, which
    `adaptive` follows. Unknown model ids render like the current generations.
    """
    resolution = resolution or RESOLUTION_DEFAULT
    fixed = resolve_ratio(ratio, image_size)
    entry = find_model(model)
    table = _PIXELS_1_0 if entry and entry.generation is Generation.V1_0_PRO else _PIXELS_CURRENT
    if resolution not in table:
        raise ValueError(f"resolution {resolution!r} has no pixel size for model {model!r}")
    return table[resolution][fixed]


def dearest_ratio(model: str, resolution: str | None) -> str:
    """The fixed ratio with the most pixels at this model and resolution: what an estimate takes for
    `adaptive` when the image it follows has no known size (16:9 is among the cheapest: 1.0 Pro's
    21:9 at 720p has 9.6% more pixels)."""
    def pixels(ratio: str) -> int:
        width, height = dimensions(model, resolution, ratio)
        return width * height
    return max(FIXED_RATIOS, key=pixels)


def frame_count(duration: int | None = None, frames: int | None = None) -> int:
    """Frames in a video: `frames` when given, else 24 per second plus the closing frame
    (5 s -> 121 frames, the count the token formula and the 25 + 4n frame rule both assume)."""
    if frames is not None:
        return frames
    seconds = DURATION_DEFAULT if duration is None else duration
    if seconds <= 0:  # -1 (the model picks) has no frame count until the model has picked
        raise ValueError(f"duration {seconds} has no frame count; resolve -1 to a length first")
    return FRAMES_PER_SECOND * seconds + 1


def estimate_tokens(
    width: int,
    height: int,
    duration: int | None = None,
    frames: int | None = None,
    draft: bool = False,
) -> int:
    """completion_tokens = W * H * frames / 1024, rounded down; a draft costs 0.6 of that.

    1920x1080 for 5 s gives 245,025, the figure on bills of the real service.
    """
    tokens = width * height * frame_count(duration, frames) // 1024
    if draft:
        tokens = int(tokens * DRAFT_TOKEN_FACTOR)
    return tokens


def centre_crop_box(size: tuple[int, int], target: tuple[int, int]) -> tuple[int, int, int, int]:
    """The centred (left, top, right, bottom) box of `size` that has the aspect of `target`: the part
    of an image a video frame of size `target` keeps (the generator crops it, Compose shows it)."""
    width, height = size
    target_width, target_height = target
    if width * target_height > height * target_width:  # too wide: trim the sides
        crop_width = max(1, round(height * target_width / target_height))
        left = (width - crop_width) // 2
        return left, 0, left + crop_width, height
    crop_height = max(1, round(width * target_height / target_width))
    top = (height - crop_height) // 2
    return 0, top, width, top + crop_height
