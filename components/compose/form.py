"""The Compose form: model, mode, prompt, output, inputs, options, delivery and variations.

Only the controls the chosen model takes are drawn (`catalog.Capabilities`), with the spec's
ranges and defaults, so most invalid requests cannot even be expressed; whatever can still be
wrong is found by the shared rules (`components.compose.body.check`) and written beside the
widget it concerns through `FieldMessages`.

Every widget key starts with "compose." and persists for the session, so a trip to Tasks and back
keeps the form. Values are seeded into session state before a widget is drawn (never passed as
`value=` as well), which is also how a prefill from another page reaches the widgets.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

import streamlit as st

from components.common import catalogs
from components.common.markdown_text import markdown_text
from components.compose import sources as compose_sources
from components.compose.body import (
    MAX_VARIATIONS,
    MODES,
    VARY_BY,
    FormValues,
    MediaChoice,
    capability_summary,
    model_label,
    modes_for,
    prompt_length,
    prompt_lines,
)
from components.compose.fields import (
    EXPIRES_HOURS_MAX,
    EXPIRES_HOURS_MIN,
    FRAMES_CHOICES,
    FRAMES_DEFAULT,
    first_values,
    offered,
)
from components.compose.image_input import IMAGE_LIMITS, SlotContext, image_slot
from components.compose.media_input import AUDIO_LIMITS, VIDEO_LIMITS, audio_slot, video_slot
from components.compose.state_keys import (
    CALLBACK_URL,
    CAMERA_FIXED,
    DRAFT,
    DRAFT_FACTS,
    DRAFT_ID,
    DRAFT_PICK,
    DURATION,
    DURATION_AUTO,
    ENDPOINT_ID,
    ENDPOINT_RULES,
    EXPIRES_HOURS,
    FIRST_SLOT,
    FLEX,
    FRAMES,
    GENERATE_AUDIO,
    LAST_SLOT,
    LENGTH_BY,
    MODE,
    MODEL,
    OWN_RESOLUTION,
    PRIORITY,
    PROMPT,
    RATIO,
    REF_AUDIO_SLOT,
    REF_AUDIOS,
    REF_IMAGE_SLOT,
    REF_IMAGES,
    REF_VIDEO_SLOT,
    REF_VIDEOS,
    RESOLUTION,
    RETURN_LAST_FRAME,
    SAFETY_ID,
    SEED,
    VARIATIONS,
    VARY,
    WATERMARK,
    WEB_SEARCH,
)
from dailies.client import Client, DailiesError
from dailies.journal import Journal
from dailies.spec import limits as L
from dailies.spec import pixels
from dailies.spec.catalog import Capabilities, Model, find_model, model_ids
from dailies.spec.problems import Problem
from dailies.spec.rules import PAYLOAD_FIELD
from dailies.spec.scenarios import FRAME_SCENARIOS, Scenario

# The model choice that means "an endpoint id, typed below".
BY_ENDPOINT = "__endpoint__"

OTHER_DRAFT = "__other__"


def ref_image_slot(i: int) -> str:
    return REF_IMAGE_SLOT.format(i)


def ref_video_slot(i: int) -> str:
    return REF_VIDEO_SLOT.format(i)


def ref_audio_slot(i: int) -> str:
    return REF_AUDIO_SLOT.format(i)


DEFAULTS: dict[str, Any] = {
    MODEL: model_ids()[0],
    MODE: Scenario.TEXT,
    PROMPT: "",
    **first_values(),
    VARIATIONS: 1,
    VARY: "seed",
    REF_IMAGES: 1,
    REF_VIDEOS: 0,
    REF_AUDIOS: 0,
    DRAFT_ID: "",
    ENDPOINT_ID: "",
}

MODE_HELP = {
    Scenario.TEXT: "The prompt alone describes the video.",
    Scenario.FIRST_FRAME: "The video starts on your image; the prompt says what happens next.",
    Scenario.FIRST_AND_LAST_FRAME: "The video starts on the first image and ends on the last one.",
    Scenario.REFERENCES: "The video borrows subjects, style or motion from reference material. "
                  "References cannot be mixed with a first or last frame.",
    Scenario.DRAFT_FINAL: "Render the final video of a 480p draft you liked: it reuses the draft's prompt, "
                   "inputs, sound, seed, ratio and length; you choose the resolution and delivery.",
}


class FieldMessages:
    """Placeholders beside the widgets, filled once every problem of the request is known.

    A placeholder is registered under a request path (`duration`, `content[2]`) or a slot key that
    the built body maps to its path; each problem goes to the most specific placeholder whose path
    is its own or a parent of it.
    """

    def __init__(self) -> None:
        self._at: dict[str, Any] = {}

    def add(self, key: str) -> None:
        self._at[key] = st.empty()

    def put(self, key: str, placeholder: Any) -> None:
        self._at[key] = placeholder

    def fill(self, problems: list[Problem], paths: dict[str, str]) -> None:
        targets = {paths.get(key, key): placeholder for key, placeholder in self._at.items()}
        found: dict[str, list[str]] = {}
        for problem in problems:
            best = max((t for t in targets if _within(problem.path, t)), key=len, default=None)
            if best is not None:
                found.setdefault(best, []).append(_beside(problem, best))
        for target, messages in found.items():
            targets[target].error("\n".join(f"- {m}" for m in messages))


def _within(path: str, target: str) -> bool:
    return path == target or path.startswith(target + ".") or path.startswith(target + "[")


def _beside(problem: Problem, target: str) -> str:
    # Beside its widget the field is obvious; only a part below the item's payload is named.
    rest = problem.path[len(target):].lstrip(".")
    if rest.endswith("url") and problem.message == "must not be empty":
        if rest.startswith("image_url"):
            return "nothing chosen yet: upload a file, or give a URL or an asset id"
        return "nothing chosen yet: give a URL or an asset id"
    if rest == "draft_task.id" and problem.message == "must not be empty":
        return "choose a draft task, or type its id"
    for payload in PAYLOAD_FIELD.values():
        if rest == payload or rest.startswith(payload + "."):
            rest = rest[len(payload):].lstrip(".")
    return f"{rest}: {problem.message}" if rest else problem.message


@dataclass
class Form:
    values: FormValues
    messages: FieldMessages


def _seed_defaults() -> None:
    for key, value in DEFAULTS.items():
        st.session_state.setdefault(key, value)


def _keep_within(key: str, options: tuple | list, fallback: Any) -> None:
    # A value left from another model (4k, then a 1.5 Pro) would not be among the options.
    if st.session_state.get(key) not in options:
        st.session_state[key] = fallback if fallback in options else options[0]


def render(client: Client | None, journal: Journal) -> Form:
    """Draw the form; return its values and the placeholders for field messages."""
    _seed_defaults()
    messages = FieldMessages()

    st.subheader("Model and mode")
    ids = catalogs.offered_model_ids(client.base_url if client else "", catalogs.current_choice(),
                                     catalogs.upstream_region(client))
    model_id, model = _model_choice(ids, messages)
    caps = model.capabilities
    st.caption(capability_summary(model))
    modes = modes_for(model)
    _keep_within(MODE, modes, Scenario.TEXT)
    mode = st.radio("Mode", modes, key=MODE, format_func=MODES.get, horizontal=True, persist_state="session")
    st.caption(MODE_HELP[mode])
    # Settled before the prompt is drawn, whose label depends on it.
    _keep_within(VARY, vary_options(caps), "seed" if caps.seed else "repeat")
    values = FormValues(model=model_id, mode=mode, rules_model=None if model_id in ids else model.id)

    # In the order a person works: what to make (prompt, and how variations change it, beside it), what
    # it starts from, then its shape and options; the API's delivery fields behind "Advanced".
    if mode == Scenario.DRAFT_FINAL:
        _draft_picker(values, client, journal, messages)
    else:
        _prompt(values, messages)
        _variations(values, caps, messages)
    # The inputs show above Output, but are drawn after it: an image's crop follows the chosen ratio.
    inputs_box = st.container() if mode not in (Scenario.TEXT, Scenario.DRAFT_FINAL) else None
    st.subheader("Output")
    _output(values, caps, messages)
    if inputs_box is not None:
        with inputs_box:
            st.subheader("Inputs")
            messages.add("content")
            _inputs(values, caps, client, journal, messages)
    st.subheader("Options")
    _options(values, caps, messages)
    with st.expander("Advanced: when to give up, safety identifier, callback URL"):
        _delivery(values, messages)
    return Form(values, messages)


def _model_choice(ids: list[str], messages: FieldMessages) -> tuple[str, Model]:
    """The model id to send and the catalog model whose rules apply: a catalog id, or an endpoint
    id (`ep-...`, how many accounts call models) with the model it serves chosen beside it."""
    options = [*ids, BY_ENDPOINT]
    _same_model_in_offered_family(MODEL, ids)
    _keep_within(MODEL, options, options[0])
    chosen = st.selectbox("Model", options, key=MODEL, persist_state="session",
                          format_func=lambda m: "An endpoint id (ep-…)" if m == BY_ENDPOINT
                          else f"{model_label(find_model(m))} — {m}")
    if chosen != BY_ENDPOINT:
        messages.add("model")
        return chosen, find_model(chosen)
    left, right = st.columns([3, 2])
    with left:
        endpoint = st.text_input("Endpoint id", key=ENDPOINT_ID, persist_state="session",
                                 placeholder="ep-20250101123456-abcde",
                                 help="The inference endpoint of your account that serves the model.").strip()
        messages.add("model")
    with right:
        _keep_within(ENDPOINT_RULES, ids, ids[0])
        rules_id = st.selectbox("It serves", ids, key=ENDPOINT_RULES, persist_state="session",
                                format_func=lambda m: model_label(find_model(m)),
                                help="The model behind the endpoint: its generation's rules and controls apply.")
    return endpoint, find_model(rules_id)


def _same_model_in_offered_family(key: str, ids: list[str]) -> None:
    """A model id of the other region's family (a prefill from a task made elsewhere) becomes the
    same model's id among those offered."""
    model = find_model(str(st.session_state.get(key, "")))
    if model is not None and st.session_state[key] not in ids:
        st.session_state[key] = next((i for i in model.ids if i in ids), st.session_state[key])


def _prompt(values: FormValues, messages: FieldMessages) -> None:
    by_line = st.session_state.get(VARY) == "lines"
    label = "Prompts, one per line (each line becomes a task)" if by_line else "Prompt"
    text = st.text_area(label, key=PROMPT, height=140, persist_state="session",
                        placeholder="Describe the shot: subject, action, camera, light, sound…")
    pieces = prompt_lines(text) if by_line else [text]
    counts = [prompt_length(p) for p in pieces] or [prompt_length("")]
    longest = max(counts, key=lambda c: (c.english_words, c.cjk_chars))
    each = "the longest line: " if by_line and len(pieces) > 1 else ""
    st.caption(f"{each}{longest.english_words} English words · {longest.cjk_chars} Chinese characters. "
               f"Recommended: at most {L.PROMPT_RECOMMENDED_ENGLISH_WORDS} English words or "
               f"{L.PROMPT_RECOMMENDED_CJK_CHARS} Chinese characters.")
    if any(c.over for c in counts):
        st.warning("This prompt is longer than recommended. It can still be sent, but the model may not follow "
                   "every detail: shorten it to the essentials.")
    messages.add("prompt")
    values.prompt = text


def _draft_picker(values: FormValues, client: Client | None, journal: Journal, messages: FieldMessages) -> None:
    state = st.session_state
    records = [r for r in compose_sources.recent_succeeded(client) if r.draft]
    prompts = compose_sources.prompts_for(journal, records)
    by_id = {r.id: r for r in records}
    options = [*by_id, OTHER_DRAFT]
    if state.get(DRAFT_PICK) not in options:
        state[DRAFT_PICK] = OTHER_DRAFT if state.get(DRAFT_ID) or not by_id else options[0]
    pick = st.selectbox("Draft task", options, key=DRAFT_PICK, persist_state="session",
                        format_func=lambda i: "Another draft, by id…" if i == OTHER_DRAFT
                        else compose_sources.task_label(by_id[i], prompts))
    if pick == OTHER_DRAFT:
        draft_id = st.text_input("Draft task id", key=DRAFT_ID, placeholder="cgt-20250101120000-abcde",
                                 persist_state="session").strip()
    else:
        draft_id = pick
    if not by_id:
        st.caption("No finished draft among recent tasks: make one with **Draft** on a Seedance 1.5 Pro task.")
    values.draft_task_id = draft_id
    record = by_id.get(draft_id) or _draft_facts(client, draft_id)
    if record is not None:
        values.draft_record = record.model_dump()
        kept = None if draft_id in prompts else journal.submission(draft_id)
        prompt = prompts.get(draft_id) or (kept.prompt if kept else "")
        if prompt:
            st.caption(f"Draft prompt: “{markdown_text(prompt)}”")
    messages.add("draft_task")


def _draft_facts(client: Client | None, task_id: str):
    """The record of a draft typed by id (for its ratio and length), looked up once per session."""
    if not task_id or client is None:
        return None
    facts: dict[str, Any] = st.session_state.setdefault(DRAFT_FACTS, {})
    if task_id not in facts:
        try:
            facts[task_id] = client.tasks.get(task_id)
        except DailiesError:
            facts[task_id] = None  # the service says what is wrong with the id when it is sent
    return facts[task_id]


def _output(values: FormValues, caps: Capabilities, messages: FieldMessages) -> None:
    state = st.session_state
    if offered("draft", caps, values.mode):
        values.draft = st.toggle(f"Draft: a {pixels.DRAFT_RESOLUTION} preview at "
                                 f"{pixels.DRAFT_TOKEN_FACTOR:g} of the price", key=DRAFT, persist_state="session",
                                 help="Check the idea cheaply, then make the final from it with the mode "
                                      "“Final from a draft”. A draft takes no last frame and runs on the default "
                                      "tier.")
        messages.add("draft")
    # The draft's forced 480p is not the user's choice: theirs is kept aside while the draft is on and
    # put back when it is off, or the mode is a final (a final left at 480p came out as small as its draft).
    if values.draft:
        state.setdefault(OWN_RESOLUTION, state.get(RESOLUTION))
        resolutions = (pixels.DRAFT_RESOLUTION,)
    else:
        if OWN_RESOLUTION in state:
            state[RESOLUTION] = state.pop(OWN_RESOLUTION)
        resolutions = caps.resolutions
    _keep_within(RESOLUTION, resolutions, pixels.RESOLUTION_DEFAULT)
    cols = st.columns(3)
    with cols[0]:
        values.resolution = st.selectbox("Resolution", resolutions, key=RESOLUTION, persist_state="session",
                                         disabled=len(resolutions) == 1,
                                         help="A draft is always 480p." if values.draft else None)
        messages.add("resolution")
    if not offered("ratio", caps, values.mode):  # a final: the draft fixes them
        values.ratio = values.duration = None
        st.caption("Ratio, length, seed, sound and camera come from the draft.")
        return
    with cols[1]:
        values.ratio = st.selectbox("Ratio", pixels.RATIOS, key=RATIO, persist_state="session",
                                    help="adaptive follows the first image (its nearest ratio); with no image it "
                                         f"is {pixels.ADAPTIVE_FALLBACK_RATIO}. The Request panel shows the result.")
        messages.add("ratio")
    with cols[2]:
        length_by = "seconds"
        if offered("frames", caps, values.mode):
            length_by = st.radio("Length in", ("seconds", "frames"), key=LENGTH_BY, horizontal=True,
                                 persist_state="session")
    if length_by == "frames":
        _keep_within(FRAMES, FRAMES_CHOICES, FRAMES_DEFAULT)
        values.frames = st.selectbox(
            "Frames", FRAMES_CHOICES, key=FRAMES, persist_state="session",
            format_func=lambda n: f"{n} frames ({(n - 1) / L.FRAMES_PER_SECOND:.1f} s)",
            help=f"25 + 4n frames, {FRAMES_CHOICES[0]} to {FRAMES_CHOICES[-1]}, at {L.FRAMES_PER_SECOND} per second.")
        values.duration = None
        messages.add("frames")
        return
    auto = False
    if caps.duration_model_picks:
        auto = st.checkbox("Let the model choose the length (-1)", key=DURATION_AUTO, persist_state="session")
    current = state.get(DURATION, L.DURATION_DEFAULT)
    if not isinstance(current, int) or not caps.duration_min <= current <= caps.duration_max:
        state[DURATION] = min(max(L.DURATION_DEFAULT, caps.duration_min), caps.duration_max)
    seconds = st.slider("Duration (seconds)", caps.duration_min, caps.duration_max, key=DURATION, disabled=auto,
                        persist_state="session",
                        help=f"{caps.duration_min} to {caps.duration_max} seconds for this model.")
    values.duration = L.DURATION_MODEL_PICKS if auto else seconds
    values.frames = None
    messages.add("duration")


def _inputs(values: FormValues, caps: Capabilities, client: Client | None, journal: Journal,
            messages: FieldMessages) -> None:
    state = st.session_state
    resolution = pixels.DRAFT_RESOLUTION if values.draft else values.resolution
    sized_as = values.catalog_model.id if values.catalog_model else values.model
    ctx = SlotContext(sized_as, resolution, values.ratio, client, journal)

    def add(choice: MediaChoice, placeholder: Any) -> MediaChoice:
        values.media.append(choice)
        messages.put(choice.slot, placeholder)
        return choice

    if values.mode in FRAME_SCENARIOS:
        st.caption(IMAGE_LIMITS)
        first = add(*image_slot(FIRST_SLOT, "first_frame", "First frame", ctx, leads=True))
        if values.mode == Scenario.FIRST_AND_LAST_FRAME:
            info = first.info
            follows = (info.width, info.height) if info else None
            add(*image_slot(LAST_SLOT, "last_frame", "Last frame", replace(ctx, follows=follows), leads=False))
        return

    # References: how many of each kind the model takes, then one slot per reference.
    cols = st.columns(3)
    counts = {}
    for col, key, label, allowed, most in (
        (cols[0], REF_IMAGES, "Reference images", caps.reference_images, L.REFERENCE_IMAGES_MAX),
        (cols[1], REF_VIDEOS, "Reference videos", caps.reference_videos, L.REFERENCE_VIDEOS_MAX),
        (cols[2], REF_AUDIOS, "Reference audio clips", caps.audio_input, L.REFERENCE_AUDIOS_MAX),
    ):
        if not allowed:
            counts[key] = 0
            continue
        if not isinstance(state.get(key), int) or not 0 <= state[key] <= most:
            state[key] = DEFAULTS[key]
        counts[key] = col.number_input(label, min_value=0, max_value=most, step=1, key=key, persist_state="session")
    if caps.reference_videos:
        st.caption("Generation 2.0 does not accept uploaded images or videos showing real people's faces: use "
                   "platform outputs, preset virtual portraits, or authorised material from your asset library "
                   "(asset://…).")
    if counts[REF_IMAGES]:
        st.caption(IMAGE_LIMITS)
    first_ref = None
    for i in range(counts[REF_IMAGES]):
        info = first_ref.info if first_ref is not None else None
        follows = (info.width, info.height) if info else None
        choice = add(*image_slot(ref_image_slot(i), "reference_image", f"Reference image {i + 1}",
                                 replace(ctx, follows=follows), leads=i == 0))
        first_ref = first_ref or choice
    if counts[REF_VIDEOS]:
        st.caption(VIDEO_LIMITS)
    for i in range(counts[REF_VIDEOS]):
        add(*video_slot(ref_video_slot(i), f"Reference video {i + 1}", ctx))
    if counts[REF_AUDIOS]:
        st.caption(AUDIO_LIMITS)
    for i in range(counts[REF_AUDIOS]):
        add(*audio_slot(ref_audio_slot(i), f"Reference audio {i + 1}"))


def _options(values: FormValues, caps: Capabilities, messages: FieldMessages) -> None:
    state = st.session_state
    left, right = st.columns(2)
    with left:
        if offered("seed", caps, values.mode):
            values.seed = int(st.number_input(
                "Seed", min_value=L.SEED_MIN, max_value=L.SEED_MAX, step=1, key=SEED, persist_state="session",
                help=f"-1: the service picks a random seed (the task's record shows it). {L.SEED_MIN} to "
                     f"{L.SEED_MAX}. The same seed and request give a similar video."))
            messages.add("seed")
        if offered("priority", caps, values.mode):
            values.priority = st.number_input(
                f"Priority ({L.PRIORITY_MIN}–{L.PRIORITY_MAX})", min_value=L.PRIORITY_MIN, max_value=L.PRIORITY_MAX,
                step=1, key=PRIORITY, placeholder="not set", persist_state="session",
                help="A larger value is queued earlier among your tasks. Leave empty for the service's default.")
            messages.add("priority")
        if offered("service_tier", caps, values.mode):
            if values.draft:
                state[FLEX] = False  # a draft runs on the default tier
            values.flex = st.checkbox("Flex tier (offline, cheaper)", key=FLEX, disabled=values.draft,
                                      persist_state="session",
                                      help="Offline inference: cheaper, and it may take longer to start. "
                                           + ("Not for drafts, which run on the default tier." if values.draft
                                              else "Generation 2.0 runs online only."))
            messages.add("service_tier")
    with right:
        if offered("camera_fixed", caps, values.mode):
            if values.mode == Scenario.REFERENCES:
                st.caption("A fixed camera is not available with reference images.")
            else:
                values.camera_fixed = st.checkbox("Fixed camera", key=CAMERA_FIXED, persist_state="session")
                messages.add("camera_fixed")
        if offered("generate_audio", caps, values.mode):
            values.generate_audio = st.toggle("Generate sound", key=GENERATE_AUDIO, persist_state="session",
                                              help="Synchronised mono sound with the picture.")
            messages.add("generate_audio")
        if offered("tools", caps, values.mode):
            values.web_search = st.checkbox("Web search tool", key=WEB_SEARCH, persist_state="session",
                                            help="Lets the model look up what the prompt mentions.")
            messages.add("tools")
        values.watermark = st.checkbox("Watermark (“AI-generated”, lower right)", key=WATERMARK,
                                       persist_state="session")
        messages.add("watermark")
        values.return_last_frame = st.checkbox(
            "Return the last frame", key=RETURN_LAST_FRAME, persist_state="session",
            help="An image of the final frame, without watermark: the next shot can start from it.")
        messages.add("return_last_frame")


def _delivery(values: FormValues, messages: FieldMessages) -> None:
    left, right = st.columns(2)
    lo, hi = EXPIRES_HOURS_MIN, EXPIRES_HOURS_MAX
    with left:
        values.expires_hours = int(st.number_input(
            "Give up after (hours)", min_value=lo, max_value=hi, step=1, key=EXPIRES_HOURS, persist_state="session",
            help=f"A task still queued or running after this long expires. {lo} to {hi} hours; default "
                 f"{DEFAULTS[EXPIRES_HOURS]}."))
        messages.add("execution_expires_after")
        values.safety_identifier = st.text_input(
            "Safety identifier (optional)", key=SAFETY_ID, persist_state="session",
            help=f"A stable id of the end user, at most {L.SAFETY_IDENTIFIER_MAX_CHARS} ASCII characters; "
                 "a hash is recommended.")
        messages.add("safety_identifier")
    with right:
        values.callback_url = st.text_input(
            "Callback URL (optional)", key=CALLBACK_URL, placeholder="https://example.com/hooks/dailies",
            persist_state="session", help="Receives a POST with the task record on every status change.")
        messages.add("callback_url")


def vary_options(caps: Capabilities) -> list[str]:
    """Other seeds where the model takes a seed; otherwise the same request again (which differs by
    itself, as a model without a seed draws one each time). Lines everywhere."""
    return ["seed", "lines"] if caps.seed else ["lines", "repeat"]


def _variations(values: FormValues, caps: Capabilities, messages: FieldMessages) -> None:
    vary = st.radio("Vary by", vary_options(caps), key=VARY, format_func=VARY_BY.get, horizontal=True,
                    persist_state="session")
    values.vary_by = vary
    if vary == "lines":
        count = len(prompt_lines(values.prompt))
        st.caption(f"{count} non-empty line{'s' if count != 1 else ''} → {count} task{'s' if count != 1 else ''} "
                   f"(at most {MAX_VARIATIONS}).")
        values.variations = max(1, count)
        return
    values.variations = int(st.number_input("How many tasks", min_value=1, max_value=MAX_VARIATIONS, step=1,
                                            key=VARIATIONS, persist_state="session"))
    if vary == "seed":
        st.caption("Seeds run on from the seed under Options: base, base+1, … With seed -1 each task gets a "
                   "random seed of its own.")
    elif not caps.seed:
        st.caption("This model takes no seed: each run of the same request differs by itself.")
    messages.add("variations")
