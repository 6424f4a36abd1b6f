"""What a request asks the renderer for: which scenario, which inputs, and the output's numbers.

Kept apart from the rendering so that the service, the dashboard and tests can see what a
request will produce (pixel size, frame count, tokens) without rendering anything.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
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
from dailies.spec.rules import effective_role
from dailies.spec.text_commands import prompt_of

from .inputs import content_path, item_url

MediaKind = Literal["image", "video", "audio"]
_KIND_OF_TYPE: dict[str, MediaKind] = {"image_url": "image", "video_url": "video", "audio_url": "audio"}


class Mode(StrEnum):
    """The scenarios of spec 2.3; they are mutually exclusive."""

    TEXT = "text"
    FIRST_FRAME = "first_frame"
    FIRST_AND_LAST_FRAME = "first_and_last_frame"
    REFERENCE = "reference"


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

    mode: Mode
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
    """Sort the content items into a scenario.

    Roles are read as the request rules read them (`dailies.spec.rules.effective_role`): a lone
    image without a role is the first frame, videos and audio default to references. Cases the
    rules refuse are still given a meaning, so that the renderer never fails on them: an image
    without a role among several is a reference image, a `last_frame` without a `first_frame` is
    a reference image, and when first-frame and reference items are mixed the first frame wins
    and the references are ignored.
    """
    image_count = sum(1 for item in request.content if item.type == "image_url")
    prompt_parts: list[str] = []
    media: list[MediaInput] = []
    for index, item in enumerate(request.content):
        if item.type == "text":
            # Text commands (`--rs 720p ...`) are parameters the request's fields already
            # carry, not words to draw.
            words = prompt_of(item.text or "").strip()
            if words:
                prompt_parts.append(words)
        elif item.type == "draft_task":
            raise ValueError("draft_task content must be replaced by the draft's content before rendering")
        else:
            url = item_url(item)
            if url is not None:
                kind = _KIND_OF_TYPE[item.type]
                role = effective_role(item, image_count) or "reference_image"
                media.append(MediaInput(content_path(index, item), url, kind, role))

    first = next((m for m in media if m.role == "first_frame"), None)
    last = next((m for m in media if m.role == "last_frame"), None) if first is not None else None
    audios = tuple(m for m in media if m.kind == "audio")
    prompt = "\n".join(prompt_parts)
    if first is not None:
        mode = Mode.FIRST_AND_LAST_FRAME if last is not None else Mode.FIRST_FRAME
        return ContentPlan(mode, prompt, first_frame=first, last_frame=last, audios=audios)
    references = tuple(m for m in media if m.kind in ("image", "video"))
    if references:
        return ContentPlan(Mode.REFERENCE, prompt, references=references, audios=audios)
    return ContentPlan(Mode.TEXT, prompt, audios=audios)


@dataclass(frozen=True)
class OutputSpec:
    """The numbers of the video to render, as the task record will report them."""

    width: int
    height: int
    resolution: str
    ratio: str
    duration: int | None
    frames: int | None
    frame_count: int
    fps: int
    seed: int
    generate_audio: bool
    watermark: bool
    camera_fixed: bool
    return_last_frame: bool
    draft: bool
    completion_tokens: int

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
