"""Rules that look at more than one field, as pure functions returning every problem found.

Each function takes a parsed `CreateTaskRequest` (types and ranges already checked by the model)
and returns a list of `Problem`s, empty when the rule holds. `check_request` runs them all.
The service runs these authoritatively; the dashboard runs the same ones before sending.
"""

from __future__ import annotations

from collections.abc import Callable

from . import limits as L
from .catalog import Capabilities, Generation, Model, find_model
from .drafts import FIELDS_TAKEN_FROM_DRAFT
from .models import CreateTaskRequest
from .pixels import DRAFT_RESOLUTION
from .problems import INVALID, MISSING, Problem
from .scenarios import Scenario, content_roles, scenario_of
from .urls import check_url_shapes

# Which payload field each content type carries, and which roles it may take. Roles left out
# are read as `scenarios.content_roles` reads them (an image alone is a first frame).
PAYLOAD_FIELD = {
    "text": "text",
    "image_url": "image_url",
    "video_url": "video_url",
    "audio_url": "audio_url",
    "draft_task": "draft_task",
}
ROLES_BY_TYPE: dict[str, tuple[str, ...]] = {
    "text": (),
    "image_url": ("first_frame", "last_frame", "reference_image"),
    "video_url": ("reference_video",),
    "audio_url": ("reference_audio",),
    "draft_task": (),
}

_FRAMES_BASE, _FRAMES_STEP, _FRAMES_MIN, _FRAMES_MAX = 25, 4, 29, 289
# Every frame count 1.0 Pro takes, for whoever offers a choice of them.
FRAME_COUNTS: tuple[int, ...] = tuple(range(_FRAMES_MIN, _FRAMES_MAX + 1, _FRAMES_STEP))


# What an empty text item is told; the dashboard says it more gently while nothing has been typed.
EMPTY_PROMPT = "the prompt is empty"


def _label(model: Model) -> str:
    return f"{model.label} (generation {model.generation.value})"


def check_content_items(req: CreateTaskRequest) -> list[Problem]:
    """Each item carries the payload of its type and nothing else, and a role its type allows."""
    problems: list[Problem] = []
    roles = content_roles(req.content)
    for i, item in enumerate(req.content):
        here = f"content[{i}]"
        own = PAYLOAD_FIELD[item.type]
        if getattr(item, own) is None:
            problems.append(Problem(f"{here}.{own}", f"is required for a content item of type {item.type}",
                                    MISSING))
        elif item.type == "text" and item.text is not None and not item.text.strip():
            problems.append(Problem(f"{here}.text", EMPTY_PROMPT))
        for other in PAYLOAD_FIELD.values():
            if other != own and getattr(item, other) is not None:
                problems.append(Problem(f"{here}.{other}",
                                        f"is not allowed in a content item of type {item.type}"))
        allowed = ROLES_BY_TYPE[item.type]
        if item.role is not None and item.role not in allowed:
            if allowed:
                message = f"role {item.role} does not fit type {item.type}; use {' or '.join(allowed)}"
            else:
                message = f"a {item.type} item takes no role"
            problems.append(Problem(f"{here}.role", message))
        elif item.type == "image_url" and roles[i] is None:
            problems.append(Problem(
                f"{here}.role",
                "is required when there are several images: first_frame, last_frame or reference_image",
                MISSING,
            ))
    return problems


def check_combination(req: CreateTaskRequest) -> list[Problem]:
    """Spec 2.3: the five permitted combinations, and the three image scenarios kept apart."""
    problems: list[Problem] = []
    items = list(enumerate(req.content))
    by_role: dict[str, list[int]] = {}
    for i, role in enumerate(content_roles(req.content)):
        if role:
            by_role.setdefault(role, []).append(i)
    texts = [i for i, it in items if it.type == "text"]
    audios = [i for i, it in items if it.type == "audio_url"]
    visuals = [i for i, it in items if it.type in ("image_url", "video_url")]

    if scenario_of(req.content) is Scenario.DRAFT_FINAL:
        if len(req.content) > 1:
            draft = next(i for i, it in items if it.type == "draft_task")
            others = [i for i, _ in items if i != draft]
            problems.append(Problem(
                f"content[{others[0]}]",
                "a draft task must be the only content item: "
                "the final video reuses the draft's prompt and inputs",
            ))
        return problems

    if len(texts) > 1:
        problems.append(Problem(f"content[{texts[1]}]", "only one text prompt is allowed"))
    if audios and not visuals:
        if texts:
            problems.append(Problem(f"content[{audios[0]}]",
                                    "audio needs an image or a video beside it (combination 4 of spec 2.3)"))
        else:
            problems.append(Problem(f"content[{audios[0]}]", "audio cannot be the only input"))

    first, last = by_role.get("first_frame", []), by_role.get("last_frame", [])
    references = by_role.get("reference_image", []) + by_role.get("reference_video", []) + audios
    if len(first) > 1:
        problems.append(Problem(f"content[{first[1]}].role", "only one first_frame image is allowed"))
    if len(last) > 1:
        problems.append(Problem(f"content[{last[1]}].role", "only one last_frame image is allowed"))
    if last and not first:
        problems.append(Problem(f"content[{last[0]}].role", "a last_frame needs a first_frame image"))
    if (first or last) and references:
        # Named after the frames given, even a last frame without its first (`scenario_of` would
        # call that content references): the message is about what the frames ask for.
        frames = Scenario.FIRST_AND_LAST_FRAME if last else Scenario.FIRST_FRAME
        culprit = sorted(references)[0]
        where = f"content[{culprit}].role" if req.content[culprit].role is not None else f"content[{culprit}]"
        problems.append(Problem(
            where,
            f"the {frames.words} scenario cannot be mixed with references (reference images, videos or audio)",
        ))
    videos = by_role.get("reference_video", [])
    if len(videos) > L.REFERENCE_VIDEOS_MAX:
        problems.append(Problem(f"content[{videos[L.REFERENCE_VIDEOS_MAX]}]",
                                f"at most {L.REFERENCE_VIDEOS_MAX} reference videos are allowed"))
    ref_images = by_role.get("reference_image", [])
    if len(ref_images) > L.REFERENCE_IMAGES_MAX:
        problems.append(Problem(f"content[{ref_images[L.REFERENCE_IMAGES_MAX]}]",
                                f"at most {L.REFERENCE_IMAGES_MAX} reference images are allowed"))
    if len(audios) > L.REFERENCE_AUDIOS_MAX:
        problems.append(Problem(f"content[{audios[L.REFERENCE_AUDIOS_MAX]}]",
                                f"at most {L.REFERENCE_AUDIOS_MAX} reference audio clips are allowed"))
    return problems


def check_urls(req: CreateTaskRequest) -> list[Problem]:
    """Media URLs are http(s), a Base64 data URL of their kind or asset://; the callback URL is
    http(s) (`urls`). Where a host points is judged by the service, which knows its network."""
    return check_url_shapes(req.content, req.callback_url)


def check_model_inputs(req: CreateTaskRequest, model: Model) -> list[Problem]:
    """Input kinds the model's generation takes (audio and video 2.0 only, drafts 1.5 Pro only)."""
    caps = model.capabilities
    problems: list[Problem] = []
    name = _label(model)
    for (i, it), role in zip(enumerate(req.content), content_roles(req.content), strict=True):
        if it.type == "audio_url" and not caps.audio_input:
            problems.append(Problem(f"content[{i}]", f"audio input is for generation 2.0 only, not {name}"))
        elif it.type == "video_url" and not caps.reference_videos:
            problems.append(Problem(f"content[{i}]",
                                    f"reference videos are for generation 2.0 only, not {name}"))
        elif role == "last_frame" and not caps.last_frame:
            problems.append(Problem(f"content[{i}].role",
                                    f"{name} takes no last frame: text, or text and a first frame"))
        elif role == "reference_image" and not caps.reference_images:
            problems.append(Problem(f"content[{i}].role", f"{name} takes no reference images"))
        elif it.type == "draft_task" and model.generation is not Generation.V1_5_PRO:
            problems.append(Problem(f"content[{i}]",
                                    f"a final from a draft is for generation 1.5 Pro only, not {name}"))
    return problems


def valid_frame_count(frames: int) -> bool:
    """Whether `frames` is one of the counts 1.0 Pro takes: 25 + 4n, 29 to 289."""
    return _FRAMES_MIN <= frames <= _FRAMES_MAX and (frames - _FRAMES_BASE) % _FRAMES_STEP == 0


def check_generation_fields(req: CreateTaskRequest, model: Model) -> list[Problem]:
    """The per-generation table of DESIGN.md section 3."""
    caps: Capabilities = model.capabilities
    name = _label(model)
    problems: list[Problem] = []

    def refuse(field: str, why: str) -> None:
        problems.append(Problem(field, why))

    if req.service_tier == "flex" and not caps.flex:
        refuse("service_tier", f"flex (offline inference) is not available for {name}; use default")
    if req.tools and not caps.tools:
        refuse("tools", f"tools are for generation 2.0 only, not {name}")
    if req.priority is not None and not caps.priority:
        refuse("priority", f"priority is for generation 2.0 only, not {name}")
    if req.resolution is not None and req.resolution not in caps.resolutions:
        choices = ", ".join(caps.resolutions)
        refuse("resolution", f"{req.resolution} is not available for {name}; choose {choices}")
    # Sending a field's default (seed -1, camera_fixed false) asks for nothing, so it is accepted.
    if req.seed not in (None, L.SEED_DEFAULT) and not caps.seed:
        refuse("seed", f"seed is not supported for {name}")
    if req.camera_fixed and not caps.camera_fixed:
        refuse("camera_fixed", f"camera_fixed is not supported for {name}")
    elif req.camera_fixed and any(it.role == "reference_image" for it in req.content):
        refuse("camera_fixed", "camera_fixed cannot be used with reference images")
    if req.frames is not None:
        if not caps.frames:
            refuse("frames", f"frames is for generation 1.0 Pro only, not {name}; use duration")
        elif not valid_frame_count(req.frames):
            refuse("frames", f"{req.frames} is not 25 + 4n within {_FRAMES_MIN} to {_FRAMES_MAX} "
                             "(for example 29, 121, 289)")
    if req.generate_audio and not caps.generate_audio:
        refuse("generate_audio", f"{name} does not generate audio")
    # Checked even when frames wins: a duration out of range is still a mistake worth naming.
    if req.duration is not None:
        picks = req.duration == L.DURATION_MODEL_PICKS and caps.duration_model_picks
        if not picks and not caps.duration_min <= req.duration <= caps.duration_max:
            extra = ", or -1 to let the model choose" if caps.duration_model_picks else ""
            refuse("duration", f"{req.duration} s is outside {caps.duration_min} to {caps.duration_max} s "
                               f"for {name}{extra}")
    return problems


def check_draft(req: CreateTaskRequest, model: Model) -> list[Problem]:
    """Drafts (1.5 Pro): 480p only, no last frame, not flex; a final from a draft sets only
    what the draft does not fix."""
    problems: list[Problem] = []
    if req.draft:
        if not model.capabilities.draft:
            problems.append(Problem("draft", f"drafts are for generation 1.5 Pro only, not {_label(model)}"))
        else:
            if req.resolution not in (None, DRAFT_RESOLUTION):
                problems.append(Problem("resolution", f"a draft is rendered at {DRAFT_RESOLUTION}; "
                                                      f"leave resolution unset or {DRAFT_RESOLUTION}"))
            for i, it in enumerate(req.content):
                if it.role == "last_frame":
                    problems.append(Problem(f"content[{i}].role", "a draft cannot take a last_frame image"))
            if req.service_tier == "flex":
                problems.append(Problem("service_tier", "a draft cannot run on the flex tier"))
    if any(it.type == "draft_task" for it in req.content):
        if req.draft:
            problems.append(Problem("draft", "a final video made from a draft cannot itself be a draft"))
        for field in FIELDS_TAKEN_FROM_DRAFT:
            if getattr(req, field) is not None:
                problems.append(Problem(field, "is taken from the draft task; leave it unset"))
    return problems


Rule = Callable[[CreateTaskRequest, Model], list[Problem]]
MODEL_RULES: tuple[Rule, ...] = (check_model_inputs, check_generation_fields, check_draft)


def check_request(req: CreateTaskRequest, model: Model | None = None) -> list[Problem]:
    """Every cross-field problem of a request. `model` is the catalog entry the request's model
    resolves to (the service resolves endpoint ids first); by default the id is looked up in the
    catalog, and an id not in the catalog is a problem of `model`."""
    problems = check_content_items(req) + check_urls(req) + check_combination(req)
    model = model or find_model(req.model)
    if model is None:
        problems.append(Problem("model", f"unknown model {req.model!r}", INVALID))
        return problems
    for rule in MODEL_RULES:
        problems += rule(req, model)
    return problems
