"""The Compose page's values turned into request bodies, problems and an estimate.

Pure Python (no Streamlit), so the whole translation from what a person chose to what is sent is
testable on its own. Every rule comes from `dailies.spec`: the body is checked with
`check_create_body`, uploaded images with `media.check_image`; this module only adds what the
form itself needs to know (an empty slot, a missing reference), never a rule of the API.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field, replace
from typing import Any

from components.common import costs
from components.compose.fields import BY_NAME, REQUEST_FIELDS
from dailies.spec import limits as L
from dailies.spec import media, pixels
from dailies.spec.catalog import Model, find_model
from dailies.spec.drafts import FIELDS_A_FINAL_SETS
from dailies.spec.models import ContentItem
from dailies.spec.prices import Cost, NoPrice
from dailies.spec.problems import Problem
from dailies.spec.rules import EMPTY_PROMPT
from dailies.spec.scenarios import MEDIA_ITEM_TYPES, Scenario, content_roles, scenario_of
from dailies.spec.validation import check_create_body

# The scenarios (`dailies.spec.scenarios`) as the mode picker names them.
MODES: dict[str, str] = {
    Scenario.TEXT: "Text only",
    Scenario.FIRST_FRAME: "First frame",
    Scenario.FIRST_AND_LAST_FRAME: "First and last frame",
    Scenario.REFERENCES: "References",
    Scenario.DRAFT_FINAL: "Final from a draft",
}
MAX_VARIATIONS = 8
IMAGE_TYPES = ("png", "jpg", "jpeg", "webp", "bmp")
VARY_BY = {
    "seed": "Seed",
    "lines": "One prompt per line",
    "repeat": "Same request again",
}
_CJK = re.compile(r"[\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\U00020000-\U0002a6df]")
_WORD = re.compile(r"[A-Za-z0-9]+(?:['’-][A-Za-z0-9]+)*")
# Base64 data URLs can be tens of megabytes; the on-screen JSON shows this much of each.
_DATA_URL_SHOWN = 48


def modes_for(model: Model) -> list[Scenario]:
    """The modes a model takes: references need reference images or videos, a final from a
    draft needs the generation that makes drafts (1.5 Pro)."""
    caps = model.capabilities
    modes = [Scenario.TEXT, Scenario.FIRST_FRAME, Scenario.FIRST_AND_LAST_FRAME]
    if caps.reference_images or caps.reference_videos:
        modes.append(Scenario.REFERENCES)
    if caps.draft:
        modes.append(Scenario.DRAFT_FINAL)
    return modes


def model_label(model: Model) -> str:
    return f"{model.label} · generation {model.generation.value}"


def capability_summary(model: Model) -> str:
    """One line a person can read: what this model can do."""
    caps = model.capabilities
    seconds = f"{caps.duration_min}–{caps.duration_max} s" + (" or the model's choice"
                                                               if caps.duration_model_picks else "")
    parts = [f"{caps.resolutions[0]}–{caps.resolutions[-1]}", seconds]
    refs = [name for name, ok in (("images", caps.reference_images), ("videos", caps.reference_videos),
                                  ("audio", caps.audio_input)) if ok]
    parts.append("references: " + ", ".join(refs) if refs else "no references")
    extras = [name for name, ok in (("seed", caps.seed), ("fixed camera", caps.camera_fixed),
                                    ("frames", caps.frames), ("sound", caps.generate_audio),
                                    ("drafts", caps.draft), ("flex tier", caps.flex),
                                    ("priority", caps.priority), ("web search", caps.tools)) if ok]
    return " · ".join(parts + extras)


# ---------- prompt guidance ----------


@dataclass(frozen=True)
class PromptLength:
    cjk_chars: int
    english_words: int

    @property
    def over(self) -> bool:
        return (self.cjk_chars > L.PROMPT_RECOMMENDED_CJK_CHARS
                or self.english_words > L.PROMPT_RECOMMENDED_ENGLISH_WORDS)


def prompt_length(text: str) -> PromptLength:
    """Chinese characters and English words of a prompt, as the length guidance counts them."""
    return PromptLength(len(_CJK.findall(text)), len(_WORD.findall(_CJK.sub(" ", text))))


def prompt_lines(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if line.strip()]


# ---------- what the form holds ----------


@dataclass
class MediaChoice:
    """One input slot of the form.

    `data` holds an uploaded image (or one restored from the journal, or a previous task's last
    frame fetched for chaining): it is sent as a Base64 data URL and checked with Pillow first.
    Otherwise `url` is sent as typed (a URL or `asset://<id>`), and "" marks a slot not filled yet,
    which the request model refuses with a message at the slot.
    """

    slot: str
    kind: str  # image_url, video_url, audio_url
    role: str
    url: str = ""
    data: bytes | None = None
    mime: str | None = None
    source: str = ""  # for the journal: "upload: a.png", the URL, the asset id, "last frame of cgt-…"
    error: str | None = None  # why the slot's material could not be had (an expired earlier result)
    seconds: float | None = None  # a video's real length, when known here (an earlier task's result)
    _encoded: str | None = field(default=None, repr=False, compare=False)

    @property
    def info(self) -> media.ImageInfo | None:
        if self.data is None or self.kind != "image_url":
            return None
        info, _ = media.check_image(self.data)
        return info

    def sent_url(self) -> str:
        """The URL this slot puts in the body: a data URL for bytes (encoded once: every task of
        a batch shares the same string), else the URL or asset id as typed."""
        if self.data is None:
            return self.url.strip()
        if self._encoded is None:
            self._encoded = media.encode_data_url(self.data, self.mime or "application/octet-stream")
        return self._encoded


def _first(name: str) -> Any:
    """The first value of a request field's control (`compose_fields`), for a `FormValues` default."""
    f = BY_NAME[name]
    return f.first_values()[f.key]


@dataclass
class FormValues:
    """Everything the form shows, one attribute per control (`compose_fields.REQUEST_FIELDS` says
    which request field each one fills). None means the control is not shown (the model does not
    take it, or the mode leaves it to the draft), and the field is then left out of the body."""

    model: str
    mode: str = Scenario.TEXT
    prompt: str = ""
    media: list[MediaChoice] = field(default_factory=list)
    draft_task_id: str = ""
    resolution: str | None = _first("resolution")
    ratio: str | None = _first("ratio")
    duration: int | None = _first("duration")
    frames: int | None = None
    seed: int | None = None
    camera_fixed: bool | None = None
    generate_audio: bool | None = None
    draft: bool = _first("draft")
    flex: bool = _first("service_tier")
    priority: int | None = None
    web_search: bool = _first("tools")
    watermark: bool = _first("watermark")
    return_last_frame: bool = _first("return_last_frame")
    expires_hours: int = _first("execution_expires_after")
    callback_url: str = _first("callback_url")
    safety_identifier: str = _first("safety_identifier")
    variations: int = 1
    vary_by: str = "seed"
    # Facts of the chosen draft task (ratio, duration), for the estimate of a final.
    draft_record: dict[str, Any] | None = None
    # When `model` is an endpoint id: the catalog model whose rules apply to it.
    rules_model: str | None = None

    @property
    def catalog_model(self) -> Model | None:
        return find_model(self.model) or (find_model(self.rules_model) if self.rules_model else None)


@dataclass(frozen=True)
class TaskPlan:
    """One task of the batch: its prompt and seed."""

    prompt: str
    seed: int | None


def plan_tasks(values: FormValues) -> list[TaskPlan]:
    """The tasks one press of Submit creates.

    By seed: consecutive seeds from the base (base, base+1, ...), or, with the base at -1, each
    task asks the service for a random seed of its own. By line: each non-empty line of the prompt
    is one task. Repeat: the same request N times (for models without a seed, each run differs).
    """
    if values.mode == Scenario.DRAFT_FINAL:
        return [TaskPlan("", None)]
    if values.vary_by == "lines":
        lines = prompt_lines(values.prompt)
        return [TaskPlan(line, values.seed) for line in lines] or [TaskPlan("", values.seed)]
    count = max(1, values.variations)
    if values.vary_by == "seed" and values.seed is not None:
        base = values.seed
        seeds = [base if base == L.SEED_DEFAULT else base + i for i in range(count)]
        return [TaskPlan(values.prompt, s) for s in seeds]
    return [TaskPlan(values.prompt, values.seed) for _ in range(count)]


# ---------- the body ----------


@dataclass
class Built:
    body: dict[str, Any]
    # slot key -> the content path of its item ("content[1]"), so problems find their widget.
    paths: dict[str, str]


def build_body(values: FormValues, task: TaskPlan | None = None) -> Built:
    """The JSON body of one task, exactly as it is sent.

    The fields come from `compose_fields.REQUEST_FIELDS`, in its order: the picture-defining ones
    (resolution, ratio, duration or frames) are always written out; the others only when they
    differ from the spec's default, so the body reads as "what is special about this request".
    A final from a draft sets only what a final may set (`drafts.FIELDS_A_FINAL_SETS`).
    """
    task = task or plan_tasks(values)[0]
    content: list[dict[str, Any]] = []
    paths: dict[str, str] = {}
    body: dict[str, Any] = {"model": values.model, "content": content}
    final = values.mode == Scenario.DRAFT_FINAL

    if final:
        content.append({"type": "draft_task", "draft_task": {"id": values.draft_task_id.strip()}})
        paths["draft_task"] = "content[0]"
    else:
        # A text-only request always carries its prompt, so an empty one is reported where it is typed.
        if task.prompt.strip() or values.mode == Scenario.TEXT:
            paths["prompt"] = f"content[{len(content)}]"
            content.append({"type": "text", "text": task.prompt})
        for choice in values.media:
            paths[choice.slot] = f"content[{len(content)}]"
            content.append({"type": choice.kind, choice.kind: {"url": choice.sent_url()}, "role": choice.role})

    for f in REQUEST_FIELDS:
        if final and f.name not in FIELDS_A_FINAL_SETS:
            continue
        if f.yields_to is not None and f.yields_to in body:
            continue
        # The seed is the task's own: a batch varied by seed gives each task its seed.
        sent = f.sent(task.seed if f.name == "seed" else getattr(values, f.attr))
        if sent is not None:
            body[f.name] = sent
    return Built(body, paths)


# ---------- the estimate ----------


@dataclass(frozen=True)
class Estimate:
    width: int | None
    height: int | None
    ratio: str | None
    tokens_each: int | None
    count: int
    notes: tuple[str, ...] = ()

    @property
    def tokens_total(self) -> int | None:
        return None if self.tokens_each is None else self.tokens_each * self.count


def first_image_size(values: FormValues) -> tuple[int, int] | None:
    """The size `adaptive` follows: the first frame, else the first reference image."""
    for role in ("first_frame", "reference_image"):
        for choice in values.media:
            if choice.role == role:
                info = choice.info
                return (info.width, info.height) if info else None
    return None


def estimate(values: FormValues, count: int = 1) -> Estimate:
    """Pixel size and tokens of the video (dailies.spec.pixels), times the number of tasks."""
    notes: list[str] = []
    resolution, ratio, duration, frames = values.resolution, values.ratio, values.duration, values.frames
    draft = values.draft
    if values.mode == Scenario.DRAFT_FINAL:
        record = values.draft_record or {}
        ratio, duration, frames = record.get("ratio"), record.get("duration"), record.get("frames")
        if not ratio:
            return Estimate(None, None, None, None, count,
                            ("choose a draft task to see its size; the final reuses its ratio and length",))
        notes.append(f"ratio and length come from the draft ({ratio}, "
                     f"{f'{frames} frames' if frames else f'{duration} s'})")
    if draft:
        resolution = pixels.DRAFT_RESOLUTION
    image_size = first_image_size(values)
    if (ratio or pixels.RATIO_DEFAULT) == "adaptive" and values.mode != Scenario.DRAFT_FINAL:
        if image_size:
            notes.append(f"adaptive follows the image: {pixels.resolve_ratio('adaptive', image_size)}")
        elif any(c.role in ("first_frame", "reference_image") for c in values.media):
            notes.append("adaptive follows the image, whose size is not known here (a URL or an asset): "
                         f"estimated at {pixels.ADAPTIVE_FALLBACK_RATIO}")
        else:
            notes.append(f"adaptive with no image renders {pixels.ADAPTIVE_FALLBACK_RATIO}")
    try:
        sized_as = values.catalog_model.id if values.catalog_model else values.model
        width, height = pixels.dimensions(sized_as, resolution, ratio, image_size)
    except ValueError as exc:
        return Estimate(None, None, None, None, count, (str(exc),))
    model = values.catalog_model
    if frames is None and duration == L.DURATION_MODEL_PICKS and model is not None:
        duration = model.capabilities.duration_max
        notes.append(f"the model picks the length: at most {duration} s is estimated")
    tokens = pixels.estimate_tokens(width, height, duration=duration, frames=frames, draft=draft)
    if draft:
        notes.append(f"a draft costs {pixels.DRAFT_TOKEN_FACTOR:g} of a final")
    return Estimate(width, height, pixels.resolve_ratio(ratio, image_size), tokens, count, tuple(notes))


# ---------- every problem at once ----------


@dataclass
class Plan:
    """What Submit would send: one body per task, every problem found, and the estimate."""

    tasks: list[TaskPlan]
    bodies: list[dict[str, Any]]
    paths: dict[str, str]
    problems: list[Problem]
    estimate: Estimate
    # The estimated cost of one task (components/common/costs.py); the batch's is this times the count.
    cost_each: Cost | NoPrice | None = None
    # Those of `problems` that only say the prompt has not been written yet (the box is empty, nothing
    # typed): unfinished work, not a mistake, so the form says it without an error. Blanks typed stay one.
    unwritten: tuple[Problem, ...] = ()

    @property
    def ok(self) -> bool:
        return not self.problems and bool(self.bodies)

    @property
    def mistakes(self) -> list[Problem]:
        return [p for p in self.problems if p not in self.unwritten]


def form_problems(values: FormValues, tasks: list[TaskPlan]) -> list[Problem]:
    """What the form needs before a request can be built at all (not rules of the API)."""
    problems: list[Problem] = []
    if values.mode == Scenario.REFERENCES and not values.media:
        problems.append(Problem("content", "add at least one reference (image, video or audio)"))
    if values.mode != Scenario.DRAFT_FINAL and values.vary_by == "lines":
        lines = prompt_lines(values.prompt)
        if len(lines) > MAX_VARIATIONS:
            problems.append(Problem("content[0].text", f"{len(lines)} prompt lines: at most {MAX_VARIATIONS} "
                                                       "tasks are sent at once"))
    return problems


def material_problems(values: FormValues, paths: dict[str, str]) -> list[Problem]:
    """Spec 8 limits on the images the form holds as bytes, found with Pillow before sending, and
    on the reference videos whose lengths are known here (the service's own rule, `media`)."""
    problems: list[Problem] = []
    for choice in values.media:
        if choice.error:
            problems.append(Problem(f"{paths[choice.slot]}.{choice.kind}", choice.error))
        elif choice.data is not None and choice.kind == "image_url":
            _, found = media.check_image(choice.data, f"{paths[choice.slot]}.image_url")
            problems += found
    known = [(f"{paths[c.slot]}.video_url", c.seconds) for c in values.media
             if c.kind == "video_url" and c.seconds is not None]
    return problems + media.reference_videos_problems(known)


def input_video_seconds(values: FormValues) -> float | None:
    """The input videos' length together, which 2.0 bills; None while any of them is not known here."""
    videos = [c.seconds for c in values.media if c.kind == "video_url"]
    return None if not videos or None in videos else sum(videos)


def check(values: FormValues) -> Plan:
    """Build every body of the batch and check each with the shared rules and media checks."""
    tasks = plan_tasks(values)
    built = [build_body(values, t) for t in tasks]
    paths = built[0].paths
    problems = form_problems(values, tasks) + material_problems(values, paths)
    seen = {(p.path, p.message) for p in problems}
    as_sent = values  # the first task's values as the service will read them (text commands applied)
    for i, b in enumerate(built):
        # The tasks of a batch share their inputs and differ only in prompt or seed, so the first
        # body is checked whole and the others with their (possibly huge) data URLs stubbed out.
        checked = b.body if i == 0 else _stub_media(b.body)[0]
        result = check_create_body(checked, values.catalog_model)
        if i == 0 and result.request is not None:
            as_sent = _as_the_service_reads(values, result.request)
        for problem in result.problems:
            if (problem.path, problem.message) in seen:
                continue
            seen.add((problem.path, problem.message))
            if i > 0:
                problem = Problem(problem.path, f"(task {i + 1} of {len(built)}) {problem.message}", problem.code)
            problems.append(problem)
    size = body_size(built[0].body) if built else 0
    if size > L.REQUEST_BODY_MAX_BYTES:
        problems.append(Problem("", f"the request is {size / L.MB:.1f} MB; a request may be at most "
                                    f"{L.REQUEST_BODY_MAX_BYTES // L.MB} MB (use URLs or asset ids for large images)"))
    cost_each = None
    if built:
        # The tasks of a batch differ in prompt or seed only: one estimate, without the data URLs.
        cost_each = costs.request_cost(_stub_media(built[0].body)[0], image_size=first_image_size(values),
                                       model=values.catalog_model.id if values.catalog_model else None,
                                       draft=values.draft_record,
                                       input_video_seconds=input_video_seconds(values))
    unwritten = tuple(p for p in problems if not values.prompt and p.message == EMPTY_PROMPT)
    return Plan(tasks, [b.body for b in built], paths, problems, estimate(as_sent, len(built)), cost_each,
                unwritten)


def _as_the_service_reads(values: FormValues, request) -> FormValues:
    """The form's values with what the prompt's text commands (`--rs 1080p`, `--frames 289`) set:
    the service renders and charges those, so the estimate shows them too."""
    return replace(values, resolution=request.resolution or values.resolution,
                               ratio=request.ratio or values.ratio,
                               duration=request.duration if request.duration is not None else values.duration,
                               frames=request.frames if request.frames is not None else values.frames)


def _stub_media(body: dict[str, Any], shown: bool = False) -> tuple[dict[str, Any], int]:
    """A copy of the body with each data URL replaced by a short stand-in (its beginning and
    length when `shown`), and how many characters were taken out. The big strings are never
    copied: data URLs are plain ASCII, so their length is their size in bytes."""
    removed = 0
    content = []
    for item in body.get("content", []):
        item = dict(item)
        for kind in MEDIA_ITEM_TYPES:
            payload = item.get(kind)
            url = payload.get("url") if isinstance(payload, dict) else None
            if isinstance(url, str) and url.startswith("data:"):
                stub = f"{url[:_DATA_URL_SHOWN]}… ({len(url):,} characters)" if shown else url[:_DATA_URL_SHOWN]
                removed += len(url) - len(stub)
                item[kind] = {**payload, "url": stub}
        content.append(item)
    return {**body, "content": content}, removed


def body_size(body: dict[str, Any]) -> int:
    """Bytes of the body as JSON, without building the JSON of its data URLs."""
    stubbed, removed = _stub_media(body)
    return len(json.dumps(stubbed, ensure_ascii=False).encode()) + removed


# ---------- showing and sending ----------


def shown_body(body: dict[str, Any]) -> dict[str, Any]:
    """The body with each Base64 data URL shortened, for the screen (the download is exact)."""
    return _stub_media(body, shown=True)[0]


def idempotency_key(token: str, body: dict[str, Any]) -> str:
    """One key per logical create: the same form sent again after a failure reuses the key, so a
    task already created comes back instead of being created (and billed) twice; any change to
    the body gives a new key, so the service never sees one key with two bodies."""
    digest = hashlib.sha256(json.dumps(body, sort_keys=True).encode())
    digest.update(token.encode())
    return f"compose-{digest.hexdigest()[:40]}"


def content_items(request: dict[str, Any]) -> list[ContentItem | None]:
    """Each content item of a request body as far as the scenario needs it (its type and role),
    None where an item is not an object or has no valid type or role."""
    items: list[ContentItem | None] = []
    for raw in request.get("content") or []:
        try:
            items.append(ContentItem(type=raw.get("type"), role=raw.get("role")) if isinstance(raw, dict) else None)
        except ValueError:
            items.append(None)
    return items


def detect_mode(request: dict[str, Any]) -> Scenario:
    """The mode of a request: its scenario (`dailies.spec.scenarios`), as the rules and the
    renderer read it. Items that say nothing about it (malformed ones) are left out."""
    return scenario_of([item for item in content_items(request) if item is not None])


def input_roles(request: dict[str, Any]) -> list[str | None]:
    """The role each content item of a request plays in its scenario (None for text, drafts and
    malformed items), as the rules and the renderer read it: the slot it goes to."""
    items = content_items(request)
    roles = iter(content_roles([item for item in items if item is not None]))
    return [None if item is None else next(roles) for item in items]
