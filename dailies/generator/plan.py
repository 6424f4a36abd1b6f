"""What a request asks the renderer for: which scenario, which inputs, and the output's numbers.

Kept apart from the rendering so that the service, the dashboard and tests can see what a
request will produce (pixel size, frame count, tokens) without rendering anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from dailies.spec.catalog import find_model
from dailies.spec.limits import DURATION_DEFAULT, DURATION_MODEL_PICKS, FRAMES_PER_SECOND
from dailies.spec.models import CreateTaskRequest, effective
from dailies.spec.pixels import (
    DRAFT_RESOLUTION,
    RESOLUTION_DEFAULT,
    dimensions,
    estimate_tokens,
    frame_count,
    resolve_ratio,
)
from dailies.spec.scenarios import FRAME_SCENARIOS, Scenario, content_roles, scenario_of
from dailies.spec.text_commands import prompt_of

from .inputs import content_path, item_url
from .protocol import VideoNumbers

MediaKind = Literal["image", "video", "audio"]
_KIND_OF_TYPE: dict[str, MediaKind] = {"image_url": "image", "video_url": "video", "audio_url": "audio"}


@dataclass(frozen=True)
class MediaInput:
    """One media content item: where it is in the request, its URL, and the role it plays."""

    where: str
    url: str
    kind: MediaKind
    role: str


@dataclass(frozen=True)
class ContentPlan:
    """The request's content sorted by purpose. `references` holds reference images and videos in
    request order; `audios` the reference audio clips (generation 2.0)."""

    scenario: Scenario
    prompt: str
    first_frame: MediaInput | None = None
    last_frame: MediaInput | None = None
    references: tuple[MediaInput, ...] = ()
    audios: tuple[MediaInput, ...] = ()

    @property
    def ratio_image(self) -> MediaInput | None:
        """The image `adaptive` follows: the first frame, else the first reference image."""
        if self.first_frame is not None:
            return self.first_frame
        return next((ref for ref in self.references if ref.kind == "image"), None)


def plan_content(request: CreateTaskRequest) -> ContentPlan:
    """Sort the content items into the scenario `dailies.spec.scenarios` names, with the roles
    it gives them (the rules judge the same roles).

    Requests the rules refuse are still given a meaning, so that the renderer never fails on them:
    items without their URL are left out, roles as `scenario_of` reads them (the first frame wins
    over references mixed with it, a last frame without a first frame and an image without a role
    among several are reference images), and references with no image or video to show (audio
    alone) draw the text scene with their sound.
    """
    if any(item.type == "draft_task" for item in request.content):
        raise ValueError("draft_task content must be replaced by the draft's content before rendering")
    usable = [(index, item) for index, item in enumerate(request.content)
              if item.type == "text" or item_url(item) is not None]
    items = [item for _, item in usable]
    # Text commands (`--rs 720p ...`) are parameters the request's fields already carry, not
    # words to draw.
    prompt = "\n".join(words for item in items if item.type == "text" and (words := prompt_of(item.text or "").strip()))
    media = [
        MediaInput(content_path(index, item), url, _KIND_OF_TYPE[item.type], role or "reference_image")
        for (index, item), role in zip(usable, content_roles(items), strict=True)
        if item.type != "text" and (url := item_url(item)) is not None  # always, for the usable ones
    ]
    audios = tuple(m for m in media if m.kind == "audio")
    scenario = scenario_of(items)
    if scenario in FRAME_SCENARIOS:
        first = next(m for m in media if m.role == "first_frame")
        last = next((m for m in media if m.role == "last_frame"), None)
        return ContentPlan(scenario, prompt, first_frame=first, last_frame=last, audios=audios)
    references = tuple(m for m in media if m.kind in ("image", "video"))
    if scenario is Scenario.REFERENCES and references:
        return ContentPlan(scenario, prompt, references=references, audios=audios)
    return ContentPlan(Scenario.TEXT, prompt, audios=audios)


@dataclass(frozen=True, kw_only=True)
class OutputSpec(VideoNumbers):
    """The video to render: its numbers, as the task record will report them, and what else the
    renderer must do (a watermark, a still camera, the last frame as an image, a draft's size)."""

    watermark: bool
    camera_fixed: bool
    return_last_frame: bool
    draft: bool

    @property
    def seconds(self) -> float:
        return self.frame_count / self.fps


def output_spec(
    request: CreateTaskRequest,
    seed: int,
    draft: bool,
    image_size: tuple[int, int] | None = None,
) -> OutputSpec:
    """The output of `request`: pixel size from the table of its generation, resolution and ratio
    (`adaptive` follows `image_size`), frame count, audio, tokens.

    A draft renders at 480p. Duration -1 ("the model picks") becomes the default 5 s. `frames`,
    when given, wins over `duration` and is then the only one of the two reported. Audio is
    generated only when asked (default true) and the model's generation can make sound.
    """
    resolution = DRAFT_RESOLUTION if draft else (request.resolution or RESOLUTION_DEFAULT)
    ratio = resolve_ratio(request.ratio, image_size)
    width, height = dimensions(request.model, resolution, ratio, image_size)
    frames = request.frames
    duration: int | None = None
    if frames is None:
        duration = effective(request, "duration")
        if duration == DURATION_MODEL_PICKS:
            duration = DURATION_DEFAULT
    model = find_model(request.model)
    can_sound = model is None or model.capabilities.generate_audio
    return OutputSpec(
        width=width,
        height=height,
        resolution=resolution,
        ratio=ratio,
        duration=duration,
        frames=frames,
        frame_count=frame_count(duration, frames),
        fps=FRAMES_PER_SECOND,
        seed=seed,
        generate_audio=bool(effective(request, "generate_audio")) and can_sound,
        watermark=bool(effective(request, "watermark")),
        camera_fixed=bool(effective(request, "camera_fixed")),
        return_last_frame=bool(effective(request, "return_last_frame")),
        draft=draft,
        completion_tokens=estimate_tokens(width, height, duration, frames, draft),
    )
