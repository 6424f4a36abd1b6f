"""The pixel table, defaults, frame counts and the token formula of DESIGN.md section 3."""

from __future__ import annotations

import pytest

from dailies.spec.catalog import MODELS
from dailies.spec.pixels import (
    FIXED_RATIOS,
    RATIOS,
    RESOLUTION_DEFAULT,
    centre_crop_box,
    dimensions,
    estimate_tokens,
    frame_count,
    nearest_ratio,
    resolve_ratio,
)
from dailies.spec.rules import valid_frame_count

from .builders import V10, V15, V20, V20_FAST

# DESIGN.md section 3, "Pixels (generations 2.0 and 1.5 Pro)", row by row.
DESIGN_PIXELS = {
    "16:9": {"480p": (864, 496), "720p": (1280, 720), "1080p": (1920, 1080)},
    "4:3": {"480p": (752, 560), "720p": (1112, 834), "1080p": (1664, 1248)},
    "1:1": {"480p": (640, 640), "720p": (960, 960), "1080p": (1440, 1440)},
    "3:4": {"480p": (560, 752), "720p": (834, 1112), "1080p": (1248, 1664)},
    "9:16": {"480p": (496, 864), "720p": (720, 1280), "1080p": (1080, 1920)},
    "21:9": {"480p": (992, 432), "720p": (1470, 630), "1080p": (2206, 946)},
}
PIXEL_CASES = [
    pytest.param(model, resolution, ratio, size, id=f"{label}-{resolution}-{ratio}")
    for model, label in ((V20, "2.0"), (V15, "1.5"))
    for ratio, row in DESIGN_PIXELS.items()
    for resolution, size in row.items()
]


@pytest.mark.parametrize(("model", "resolution", "ratio", "size"), PIXEL_CASES)
def test_pixel_table(model: str, resolution: str, ratio: str, size: tuple[int, int]) -> None:
    assert dimensions(model, resolution, ratio) == size


@pytest.mark.parametrize("ratio", list(DESIGN_PIXELS))
def test_4k_is_twice_1080p_on_each_side(ratio: str) -> None:
    w, h = DESIGN_PIXELS[ratio]["1080p"]
    assert dimensions(V20, "4k", ratio) == (2 * w, 2 * h)


def test_the_table_covers_every_fixed_ratio() -> None:
    assert set(DESIGN_PIXELS) == set(FIXED_RATIOS)
    assert set(RATIOS) == set(FIXED_RATIOS) | {"adaptive"}


@pytest.mark.parametrize("model", MODELS, ids=lambda m: m.id)
def test_every_resolution_a_model_takes_has_a_size_for_every_ratio(model) -> None:
    for resolution in model.capabilities.resolutions:
        for ratio in RATIOS:
            w, h = dimensions(model.id, resolution, ratio)
            assert w > 0 and h > 0


@pytest.mark.parametrize("resolution", ["480p", "720p", "1080p"])
def test_portrait_ratios_are_the_landscape_ones_turned(resolution: str) -> None:
    for landscape, portrait in (("16:9", "9:16"), ("4:3", "3:4")):
        w, h = dimensions(V20, resolution, landscape)
        assert dimensions(V20, resolution, portrait) == (h, w)


@pytest.mark.parametrize(("resolution", "ratio"), [(r, q) for r in ("480p", "720p", "1080p") for q in FIXED_RATIOS])
def test_1_0_pro_renders_on_a_16_pixel_grid_near_the_ratio(resolution: str, ratio: str) -> None:
    w, h = dimensions(V10, resolution, ratio)
    assert w % 16 == 0 and h % 16 == 0
    a, b = (int(x) for x in ratio.split(":"))
    assert abs(w / h - a / b) / (a / b) < 0.05


def test_no_4k_for_1_0_pro() -> None:
    with pytest.raises(ValueError):
        dimensions(V10, "4k", "16:9")


@pytest.mark.parametrize(
    ("image_size", "ratio"),
    [
        ((1000, 1000), "1:1"),
        ((1080, 1920), "9:16"),
        ((1920, 1080), "16:9"),
        ((1600, 1200), "4:3"),
        ((1200, 1600), "3:4"),
        ((2560, 1080), "21:9"),
        ((6000, 2400), "21:9"),
        ((300, 750), "9:16"),
        ((1100, 1000), "1:1"),
    ],
)
def test_adaptive_follows_the_image(image_size: tuple[int, int], ratio: str) -> None:
    assert nearest_ratio(*image_size) == ratio
    assert resolve_ratio("adaptive", image_size) == ratio
    assert dimensions(V20, "1080p", "adaptive", image_size) == DESIGN_PIXELS[ratio]["1080p"]


def test_adaptive_without_an_image_is_16_9() -> None:
    assert resolve_ratio("adaptive") == "16:9"
    assert resolve_ratio(None) == "16:9"
    assert dimensions(V15, "720p", "adaptive") == (1280, 720)


def test_a_fixed_ratio_ignores_the_image() -> None:
    assert resolve_ratio("4:3", (1080, 1920)) == "4:3"
    assert dimensions(V20, "480p", "21:9", (1000, 1000)) == (992, 432)


def test_nearest_ratio_is_symmetric_on_a_log_scale() -> None:
    # 2:1 and 1:2 are as far from 1:1; each lands on its own side.
    assert nearest_ratio(2000, 1000) == "16:9"
    assert nearest_ratio(1000, 2000) == "9:16"


def test_defaults_resolution_720p_ratio_adaptive() -> None:
    assert RESOLUTION_DEFAULT == "720p"
    assert dimensions(V20, None, None) == (1280, 720)
    assert dimensions(V20_FAST, None, "1:1") == (960, 960)
    assert dimensions(V20, None, None, (1080, 1920)) == (720, 1280)


@pytest.mark.parametrize(
    ("duration", "frames", "count"),
    [
        (5, None, 121),
        (None, None, 121),
        (4, None, 97),
        (12, None, 289),
        (15, None, 361),
        (2, None, 49),
        (5, 29, 29),
        (None, 289, 289),
        (12, 29, 29),
    ],
)
def test_frame_count(duration: int | None, frames: int | None, count: int) -> None:
    assert frame_count(duration, frames) == count


def test_frame_counts_of_whole_seconds_fit_the_frames_rule() -> None:
    # 24 * s + 1 is 25 + 4n, so a duration of 2 to 12 s is expressible as frames too.
    for seconds in range(2, 13):
        assert valid_frame_count(frame_count(seconds))


@pytest.mark.parametrize("frames, valid", [(25, False), (29, True), (30, False), (121, True), (289, True),
                                           (293, False)])
def test_valid_frame_count(frames: int, valid: bool) -> None:
    assert valid_frame_count(frames) is valid


@pytest.mark.parametrize("duration", [-1, 0])
def test_a_length_the_model_picks_has_no_frame_count_or_tokens_yet(duration: int) -> None:
    with pytest.raises(ValueError, match="resolve -1"):
        frame_count(duration)
    with pytest.raises(ValueError):
        estimate_tokens(1280, 720, duration=duration)


@pytest.mark.parametrize("size, target, box", [
    ((1920, 1080), (1280, 720), (0, 0, 1920, 1080)),      # same aspect: all of it
    ((1920, 200), (864, 496), (786, 0, 1134, 200)),       # too wide: the sides are cut
    ((1000, 2000), (1280, 720), (0, 719, 1000, 1281)),    # too tall: top and bottom are cut
])
def test_centre_crop_box(size, target, box) -> None:
    assert centre_crop_box(size, target) == box


@pytest.mark.parametrize(
    ("width", "height", "duration", "frames", "draft", "tokens"),
    [
        pytest.param(1920, 1080, 5, None, False, 245025, id="bill-1080p-5s"),
        pytest.param(1920, 1080, 5, None, True, 147015, id="bill-1080p-5s-draft"),
        pytest.param(1280, 720, None, None, False, 108900, id="720p-default-duration"),
        pytest.param(864, 496, 5, None, False, 50638, id="480p-floor"),  # 50638.5
        pytest.param(864, 496, 5, None, True, 30382, id="480p-draft-floor"),  # 50638 * 0.6 = 30382.8
        pytest.param(1024, 1, None, 29, True, 17, id="frames-draft-floor"),  # 29 * 0.6 = 17.4
        pytest.param(1024, 1, 10, 29, False, 29, id="frames-win"),
        pytest.param(3840, 2160, 15, None, False, 3840 * 2160 * 361 // 1024, id="4k-15s"),
    ],
)
def test_estimate_tokens(width: int, height: int, duration: int | None, frames: int | None, draft: bool,
                         tokens: int) -> None:
    assert estimate_tokens(width, height, duration, frames, draft) == tokens


def test_a_draft_costs_six_tenths_rounded_down() -> None:
    for frames in range(1, 400):
        full = estimate_tokens(1024, 1, frames=frames)
        assert estimate_tokens(1024, 1, frames=frames, draft=True) == full * 3 // 5
