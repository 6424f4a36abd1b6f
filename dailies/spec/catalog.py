"""The model catalog: which model belongs to which generation, and what each generation takes.

The capability table is DESIGN.md section 3 ("rule | 2.0 | 1.5 Pro | 1.0 Pro"); the rules module
reads it, the dashboard reads it to show only the controls a model supports.

Each model has one id per region: Volcengine Ark (`doubao-...`) and BytePlus ModelArk
(`dreamina-...` / `seedance-...`). Sources (docs/research/real-clients.md has the detail):
- the BytePlus ModelArk API reference's `model` enum, as mirrored in public research notes, lists
  exactly the five BytePlus ids below;
- ComfyUI `comfy_api_nodes/nodes_bytedance.py` sends `seedance-1-5-pro-251215`,
  `seedance-1-0-pro-250528`, `seedance-1-0-pro-fast-251015`, `dreamina-seedance-2-0-260128`,
  `dreamina-seedance-2-0-fast-260128`;
- the Vercel AI SDK `packages/bytedance` (a recorded real BytePlus response echoes
  `"model": "seedance-1-0-pro-250528"`, so a record names the model in the request's family);
- 1.0 Pro fast takes text, or text and a first frame, nothing else: the BytePlus model list
  ("Image to video - first frame", "Text to video"), and ComfyUI's first-and-last-frame node,
  which offers only 1.5 Pro and 1.0 Pro.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from enum import StrEnum
from typing import get_args
from urllib.parse import urlsplit

from .models import Resolution


class Region(StrEnum):
    """Which catalog of model ids a service speaks."""

    VOLCENGINE = "volcengine"
    BYTEPLUS = "byteplus"


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
    last_frame: bool = True


@dataclass(frozen=True)
class Model:
    id: str  # the Volcengine Ark id: the name the rest of the code knows the model by
    generation: Generation
    label: str
    capabilities: Capabilities
    byteplus_id: str

    def id_in(self, region: Region) -> str:
        return self.byteplus_id if region is Region.BYTEPLUS else self.id

    @property
    def ids(self) -> tuple[str, str]:
        return self.id, self.byteplus_id


_ALL_RESOLUTIONS: tuple[str, ...] = get_args(Resolution)

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

_V1_0_PRO_FAST = replace(_V1_0_PRO, last_frame=False)

MODELS: tuple[Model, ...] = (
    Model("doubao-seedance-2-0-260128", Generation.V2_0, "Seedance 2.0", _V2_0,
          byteplus_id="dreamina-seedance-2-0-260128"),
    Model("doubao-seedance-2-0-fast-260128", Generation.V2_0, "Seedance 2.0 fast", _V2_0_FAST,
          byteplus_id="dreamina-seedance-2-0-fast-260128"),
    Model("doubao-seedance-1-5-pro-251215", Generation.V1_5_PRO, "Seedance 1.5 Pro", _V1_5_PRO,
          byteplus_id="seedance-1-5-pro-251215"),
    Model("doubao-seedance-1-0-pro-250528", Generation.V1_0_PRO, "Seedance 1.0 Pro", _V1_0_PRO,
          byteplus_id="seedance-1-0-pro-250528"),
    Model("doubao-seedance-1-0-pro-fast-251015", Generation.V1_0_PRO, "Seedance 1.0 Pro fast", _V1_0_PRO_FAST,
          byteplus_id="seedance-1-0-pro-fast-251015"),
)
_BY_ID = {model_id: m for m in MODELS for model_id in m.ids}
_REGION_OF_ID = {model_id: region for m in MODELS for region in Region for model_id in (m.id_in(region),)}

# Hosts of the real services. Anything else (the local service, a proxy, a gateway) may speak
# either catalog; Settings lets the user say which.
_REGION_HOST_SUFFIXES = {Region.VOLCENGINE: ("volces.com", "volcengineapi.com"),
                         Region.BYTEPLUS: ("bytepluses.com", "byteplusapi.com")}


def find_model(model_id: str) -> Model | None:
    """The catalog entry for a model id of either region, or None when the id is not known."""
    return _BY_ID.get(model_id)


def region_of(model_id: str) -> Region | None:
    """The region whose catalog names a model `model_id`; None for ids outside the catalog."""
    return _REGION_OF_ID.get(model_id)


def model_ids(region: Region | None = None) -> list[str]:
    """The model ids of one region's catalog, or of both (Volcengine's first) when None."""
    regions = [region] if region is not None else list(Region)
    return [m.id_in(r) for r in regions for m in MODELS]


def region_of_host(base_url: str) -> Region | None:
    """The catalog a service at `base_url` speaks when it is one of the real services' hosts
    (`ark.cn-beijing.volces.com`, `ark.ap-southeast.bytepluses.com`, ...); None otherwise."""
    host = (urlsplit(base_url).hostname or "").lower()
    for region, suffixes in _REGION_HOST_SUFFIXES.items():
        if any(host == s or host.endswith("." + s) for s in suffixes):
            return region
    return None
