"""The model catalog: which model belongs to which generation, and what each generation takes.

The capability table is DESIGN.md section 3 ("rule | 2.0 | 1.5 Pro | 1.0 Pro"); the rules module
reads it, the dashboard reads it to show only the controls a model supports.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum


class Generation(StrEnum):
    V2_0 = "2.0"
    V1_5_PRO = "1.5 Pro"
    V1_0_PRO = "1.0 Pro"


@dataclass(frozen=True)
class Capabilities:
    """What one generation accepts. Ranges are inclusive."""

    flex: bool
    draft: bool
    tools: bool
    priority: bool
    resolutions: tuple[str, ...]
    seed: bool
    camera_fixed: bool
    frames: bool
    audio_input: bool
    generate_audio: bool
    duration_min: int
    duration_max: int
    duration_model_picks: bool
    reference_images: bool
    reference_videos: bool


@dataclass(frozen=True)
class Model:
    id: str
    generation: Generation
    label: str
    capabilities: Capabilities


_ALL_RESOLUTIONS = ("480p", "720p", "1080p", "4k")

_V2_0 = Capabilities(
    flex=False, draft=False, tools=True, priority=True, resolutions=_ALL_RESOLUTIONS,
    seed=False, camera_fixed=False, frames=False, audio_input=True, generate_audio=True,
    duration_min=4, duration_max=15, duration_model_picks=True,
    reference_images=True, reference_videos=True,
)
_V2_0_FAST = Capabilities(**{**_V2_0.__dict__, "resolutions": ("480p", "720p")})
_V1_5_PRO = Capabilities(
    flex=True, draft=True, tools=False, priority=False, resolutions=("480p", "720p", "1080p"),
    seed=True, camera_fixed=True, frames=False, audio_input=False, generate_audio=True,
    duration_min=4, duration_max=12, duration_model_picks=True,
    reference_images=True, reference_videos=False,
)
_V1_0_PRO = Capabilities(
    flex=True, draft=False, tools=False, priority=False, resolutions=("480p", "720p", "1080p"),
    seed=True, camera_fixed=True, frames=True, audio_input=False, generate_audio=False,
    duration_min=2, duration_max=12, duration_model_picks=False,
    reference_images=False, reference_videos=False,
)

MODELS: tuple[Model, ...] = (
    Model("doubao-seedance-2-0-260128", Generation.V2_0, "Seedance 2.0", _V2_0),
    Model("doubao-seedance-2-0-fast-260128", Generation.V2_0, "Seedance 2.0 fast", _V2_0_FAST),
    Model("doubao-seedance-1-5-pro-251215", Generation.V1_5_PRO, "Seedance 1.5 Pro", _V1_5_PRO),
    Model("doubao-seedance-1-0-pro-250528", Generation.V1_0_PRO, "Seedance 1.0 Pro", _V1_0_PRO),
)
_BY_ID = {m.id: m for m in MODELS}


def find_model(model_id: str) -> Model | None:
    """The catalog entry for a model id, or None when the id is not in the catalog."""
    return _BY_ID.get(model_id)


def model_ids() -> list[str]:
    return [m.id for m in MODELS]
