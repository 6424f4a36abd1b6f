"""The model catalog: which model belongs to which generation, and what each generation takes.

The capability table is section 3 of the shared design notes, ../shared/DESIGN.md (outside this
repository; its "rule | 2.0 | 1.5 Pro | 1.0 Pro" table), checked against the public sources in
docs/research/real-clients.md; the rules module reads it, the dashboard reads it to show only the
controls a model supports. Each capability set and each model below names its sources by the tags
of real-clients.md section 6 ([SR], [COMFY], [PT] ...; "spec" is the service specification's
section 2.1 field table).

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

# Generation 2.0. Sources: real-clients.md 1.1 and 1.3.
# - resolutions 480p..4k, duration 4..15 or -1: [SR 2.1] (secondary), [COMFY] (480p,720p,1080p,4k; 4-15 s);
#   4k is 2.0 only: spec (resolution).
# - no flex: spec (service_tier), [SR], [NEWAPI-test]; priority: spec, [SR]; tools: spec ("2.0 only").
# - no seed, no camera_fixed, no frames: spec (seed, camera_fixed, frames); frames: [SR 2.1], [ACE].
# - audio input and generate_audio: spec (audio_url "generation 2.0 only"; generate_audio).
# - reference images and videos (0-9 images, 0-3 videos, 0-3 audio): [PT], [SR 1.1, 2.3], [CR], [COMFY].
# - no draft: spec (draft "generation 1.5 Pro only"), [SR 2.1].
_V2_0 = Capabilities(
    flex=False, draft=False, tools=True, priority=True, resolutions=_ALL_RESOLUTIONS,
    seed=False, camera_fixed=False, frames=False, audio_input=True, generate_audio=True,
    duration_min=4, duration_max=15, duration_model_picks=True,
    reference_images=True, reference_videos=True,
)
# 2.0 fast: as 2.0, but 480p and 720p only: [SR], [COMFY] (["480p","720p"]); real-clients.md 1.3.
_V2_0_FAST = Capabilities(**{**_V2_0.__dict__, "resolutions": ("480p", "720p")})
# Generation 1.5 Pro. Sources: real-clients.md 1.1 and 1.3.
# - resolutions 480p..1080p, duration 4..12 or -1: [SR], [GPTP]; ComfyUI refuses < 4 s [COMFY].
#   Conflict: [NOVITA] says no 1080p yet (real-clients.md 7); we follow [SR] and ComfyUI.
# - flex yes: spec (service_tier); draft (480p) yes, 1.5 Pro only: spec (draft), [SR 2.1].
# - seed, camera_fixed yes; frames no: spec (frames "not supported for 2.0 and 1.5 Pro"), [SR 2.1].
# - generate_audio yes, audio input no: spec (generate_audio; audio_url "2.0 only"), [PT], [APX].
# - reference images: ../shared/DESIGN.md 3 only (camera_fixed "not with reference images"); real-clients.md
#   1.1 lists text, first frame, first+last frame and draft, no reference images: unconfirmed.
_V1_5_PRO = Capabilities(
    flex=True, draft=True, tools=False, priority=False, resolutions=("480p", "720p", "1080p"),
    seed=True, camera_fixed=True, frames=False, audio_input=False, generate_audio=True,
    duration_min=4, duration_max=12, duration_model_picks=True,
    reference_images=True, reference_videos=False,
)
# Generation 1.0 Pro. Sources: real-clients.md 1.1 and 1.3.
# - resolutions 480p..1080p, duration 2..12, no -1: [SR 2.1] (secondary), [GPTP].
# - frames (25 + 4n in [29, 289], wins over duration), 1.0 only: [SR 2.1], [ACE]; spec (frames).
# - inputs text, first frame, first+last frame; no reference images or videos, no audio:
#   [PT], [SR 1.2], [APX], [COMFY], [AISDK-set]. No sound (generate_audio is 2.0 and 1.5 Pro): spec.
# - flex yes; no draft, tools or priority: spec (service_tier, draft, tools, priority), [SR].
_V1_0_PRO = Capabilities(
    flex=True, draft=False, tools=False, priority=False, resolutions=("480p", "720p", "1080p"),
    seed=True, camera_fixed=True, frames=True, audio_input=False, generate_audio=False,
    duration_min=2, duration_max=12, duration_model_picks=False,
    reference_images=False, reference_videos=False,
)

# 1.0 Pro fast: as 1.0 Pro, but text or text + first frame only (no last frame): [PT] ("Image to
# video - first frame", "Text to video"), [SR 1.2], [APX]; ComfyUI's first+last-frame node offers
# only 1.5 Pro and 1.0 Pro [COMFY]. Real-clients.md 1.1.
_V1_0_PRO_FAST = replace(_V1_0_PRO, last_frame=False)

# Ids of both regions: real-clients.md 1.1. The five BytePlus ids are the BytePlus API reference's
# `model` enum as [PT] mirrors it, and what [COMFY] sends; [AISDK-set] types 1.5 Pro and 1.0 Pro.
MODELS: tuple[Model, ...] = (
    # [PT] [SR 1.1, 2.3] [CR] [COMFY]
    Model("doubao-seedance-2-0-260128", Generation.V2_0, "Seedance 2.0", _V2_0,
          byteplus_id="dreamina-seedance-2-0-260128"),
    # [PT] [SR] [CR] [COMFY]
    Model("doubao-seedance-2-0-fast-260128", Generation.V2_0, "Seedance 2.0 fast", _V2_0_FAST,
          byteplus_id="dreamina-seedance-2-0-fast-260128"),
    # [PT] [SR 1.2] [APX] [COMFY] [AISDK-set]
    Model("doubao-seedance-1-5-pro-251215", Generation.V1_5_PRO, "Seedance 1.5 Pro", _V1_5_PRO,
          byteplus_id="seedance-1-5-pro-251215"),
    # [PT] [SR 1.2] [APX] [COMFY] [AISDK-set]; a real BytePlus record echoes this id [AISDK-fix]
    Model("doubao-seedance-1-0-pro-250528", Generation.V1_0_PRO, "Seedance 1.0 Pro", _V1_0_PRO,
          byteplus_id="seedance-1-0-pro-250528"),
    # [PT] [SR 1.2] [APX] [COMFY]
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
