"""Property tests: requests drawn from the valid domain of each model are accepted, whatever the
rules accept round-trips through JSON unchanged, and no input makes the checks raise."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from dailies.spec import limits as L
from dailies.spec.catalog import MODELS, Model
from dailies.spec.drafts import FIELDS_TAKEN_FROM_DRAFT
from dailies.spec.models import CreateTaskRequest
from dailies.spec.pixels import RATIOS
from dailies.spec.problems import INVALID, MISSING
from dailies.spec.text_commands import parse_text
from dailies.spec.validation import check_create_body

from .builders import audio, draft_task, image, text, video

SETTINGS = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])

# Prompts without text commands at their end: those are parameters (tested in test_text_commands.py).
prompts = st.text(min_size=1, max_size=40).filter(lambda s: s.strip() and not parse_text(s).commands)
urls = st.one_of(
    st.builds("https://cdn.example.com/{}/{}".format, st.integers(0, 10**9), st.sampled_from(["a.png", "b.mp4"])),
    st.builds("asset://asset-{}".format, st.integers(0, 10**9)),
)
callback_urls = st.builds("https://hooks.example.com/{}".format, st.integers(0, 10**9))
task_ids = st.builds("cgt-2025010112{:04d}-{}".format, st.integers(0, 9999), st.sampled_from(["abcde", "0z9y8"]))


def maybe(values: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    """A field left out, sent as null, or given a value."""
    return st.one_of(st.just(...), st.none(), values)


@st.composite
def contents(draw: st.DrawFn, model: Model, draft: bool) -> tuple[str, list[dict[str, Any]]]:
    """One of the permitted combinations of spec 2.3 that the model's generation takes (a draft
    takes no last frame, and is not made from another draft)."""
    caps = model.capabilities
    scenarios = ["text", "first"] + ([] if draft or not caps.last_frame else ["first+last"])
    if caps.reference_images:
        scenarios.append("references")
    if caps.reference_videos:
        scenarios.append("videos")
    if caps.audio_input:
        scenarios.append("with-audio")
    if caps.draft and not draft:
        scenarios.append("draft-task")
    scenario = draw(st.sampled_from(scenarios))
    if scenario == "draft-task":
        return scenario, [draft_task(draw(task_ids))]
    prompt = [text(draw(prompts))]
    if scenario == "text":
        return scenario, prompt
    if scenario == "first":
        items = [image(draw(st.sampled_from([None, "first_frame"])), draw(urls))]
    elif scenario == "first+last":
        items = [image("first_frame", draw(urls)), image("last_frame", draw(urls))]
    else:
        n_images = draw(st.integers(0 if scenario != "references" else 1, L.REFERENCE_IMAGES_MAX))
        n_videos = draw(st.integers(0, L.REFERENCE_VIDEOS_MAX)) if caps.reference_videos else 0
        if scenario == "videos":
            n_videos = max(n_videos, 1)
        if scenario == "with-audio" and n_images + n_videos == 0:
            n_images = 1
        n_audios = draw(st.integers(1, L.REFERENCE_AUDIOS_MAX)) if scenario == "with-audio" else 0
        items = (
            [image("reference_image", draw(urls)) for _ in range(n_images)]
            + [video(draw(st.sampled_from([None, "reference_video"])), draw(urls)) for _ in range(n_videos)]
            + [audio(draw(st.sampled_from([None, "reference_audio"])), draw(urls)) for _ in range(n_audios)]
        )
    items = draw(st.permutations(items))
    text_first = draw(st.booleans())
    with_text = draw(st.booleans()) or not items
    return scenario, (prompt + items if text_first else items + prompt) if with_text else items


@st.composite
def valid_bodies(draw: st.DrawFn) -> dict[str, Any]:
    """A request body valid for its model: every field drawn from what the catalog allows."""
    model: Model = draw(st.sampled_from(MODELS))
    caps = model.capabilities
    draft = caps.draft and draw(st.booleans())
    scenario, content = draw(contents(model, draft))
    from_draft = scenario == "draft-task"
    has_references = any(item.get("role") == "reference_image" for item in content)

    tiers = ["default"] + (["flex"] if caps.flex and not draft else [])
    resolutions = ["480p"] if draft else list(caps.resolutions)
    durations = st.integers(caps.duration_min, caps.duration_max)
    if caps.duration_model_picks:
        durations = st.one_of(durations, st.just(L.DURATION_MODEL_PICKS))
    fields: dict[str, Any] = {
        "callback_url": maybe(callback_urls),
        "return_last_frame": maybe(st.booleans()),
        "service_tier": maybe(st.sampled_from(tiers)),
        "execution_expires_after": maybe(st.integers(L.EXECUTION_EXPIRES_MIN, L.EXECUTION_EXPIRES_MAX)),
        "generate_audio": maybe(st.booleans() if caps.generate_audio else st.just(False)),
        "draft": st.just(True) if draft else maybe(st.just(False)),
        "safety_identifier": maybe(st.text(st.characters(max_codepoint=127), max_size=L.SAFETY_IDENTIFIER_MAX_CHARS)),
        "resolution": maybe(st.sampled_from(resolutions)),
        "ratio": maybe(st.sampled_from(RATIOS)),
        "watermark": maybe(st.booleans()),
    }
    if caps.tools:
        fields["tools"] = maybe(st.just([{"type": "web_search"}]))
    if caps.priority:
        fields["priority"] = maybe(st.integers(L.PRIORITY_MIN, L.PRIORITY_MAX))
    if caps.seed:
        fields["seed"] = maybe(st.integers(L.SEED_MIN, L.SEED_MAX))
    if caps.camera_fixed:
        fields["camera_fixed"] = maybe(st.just(False) if has_references else st.booleans())
    if caps.frames and draw(st.booleans()):
        fields["frames"] = st.integers(1, 66).map(lambda n: 25 + 4 * n)
        fields["duration"] = maybe(durations)  # frames win over duration; a given duration is still checked
    else:
        fields["duration"] = maybe(durations)
    if from_draft:
        for name in FIELDS_TAKEN_FROM_DRAFT:
            fields.pop(name, None)
    drawn = {name: draw(values) for name, values in fields.items()}
    return {"model": model.id, "content": content, **{k: v for k, v in drawn.items() if v is not ...}}


def assert_round_trips(request: CreateTaskRequest) -> None:
    wire = request.to_json_dict()
    again = CreateTaskRequest.model_validate(json.loads(json.dumps(wire)))
    assert again == request
    assert again.to_json_dict() == wire


@SETTINGS
@given(valid_bodies())
def test_valid_domain_is_accepted_and_round_trips(body: dict[str, Any]) -> None:
    checked = check_create_body(body)
    assert checked.ok, [str(p) for p in checked.problems]
    assert_round_trips(checked.request)
    # What a client sends, nulls left out, is what the request says.
    assert checked.request.to_json_dict() == {k: v for k, v in body.items() if v is not None}


# ---------- arbitrary input ----------

json_scalars = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False), st.text(max_size=20)
)
json_values = st.recursive(
    json_scalars,
    lambda children: st.one_of(
        st.lists(children, max_size=4), st.dictionaries(st.text(max_size=10), children, max_size=4)
    ),
    max_leaves=20,
)

REQUEST_KEYS = list(CreateTaskRequest.model_fields)
ITEM_KEYS = ["type", "text", "image_url", "video_url", "audio_url", "role", "draft_task"]


def plausible(values: list[Any]) -> st.SearchStrategy[Any]:
    """Real values mixed with arbitrary JSON, so that many bodies get past the type checks."""
    return st.one_of(st.sampled_from(values), json_values)


content_items = st.one_of(
    json_values,
    st.fixed_dictionaries(
        {"type": plausible(["text", "image_url", "video_url", "audio_url", "draft_task"])},
        optional={
            "text": plausible(["a cat", ""]),
            "image_url": plausible([{"url": "https://example.com/a.png"}, {"url": ""}, {}]),
            "video_url": plausible([{"url": "https://example.com/a.mp4"}]),
            "audio_url": plausible([{"url": "https://example.com/a.mp3"}]),
            "role": plausible(["first_frame", "last_frame", "reference_image", "reference_video",
                               "reference_audio"]),
            "draft_task": plausible([{"id": "cgt-20250101000000-abcde"}, {"id": ""}]),
        },
    ),
)
near_valid_bodies = st.fixed_dictionaries(
    {},
    optional={
        "model": plausible([m.id for m in MODELS] + ["ep-123"]),
        "content": st.one_of(st.lists(content_items, max_size=5), json_values),
        "callback_url": plausible(["https://example.com/cb"]),
        "return_last_frame": plausible([True, False]),
        "service_tier": plausible(["default", "flex"]),
        "execution_expires_after": plausible([3600, 259200, 3599]),
        "generate_audio": plausible([True, False]),
        "draft": plausible([True, False]),
        "tools": plausible([[{"type": "web_search"}], []]),
        "safety_identifier": plausible(["u", "u" * 65]),
        "priority": plausible([0, 9, 10]),
        "resolution": plausible(["480p", "720p", "1080p", "4k"]),
        "ratio": plausible(list(RATIOS)),
        "duration": plausible([-1, 2, 5, 12, 15]),
        "frames": plausible([29, 121, 30]),
        "seed": plausible([-1, 0, L.SEED_MAX]),
        "camera_fixed": plausible([True, False]),
        "watermark": plausible([True, False]),
        "zz": json_values,
    },
)


def assert_well_formed(body: Any) -> None:
    checked = check_create_body(body)
    assert checked.ok == (checked.request is not None and not checked.problems)
    if not checked.ok:
        assert checked.problems
    for problem in checked.problems:
        assert isinstance(problem.path, str) and problem.message
        assert problem.code in (INVALID, MISSING)
    if checked.ok:
        assert_round_trips(checked.request)


@SETTINGS
@given(json_values)
def test_arbitrary_json_never_raises(body: Any) -> None:
    assert_well_formed(body)


@SETTINGS
@given(near_valid_bodies)
def test_real_keys_with_random_values_never_raise(body: dict[str, Any]) -> None:
    assert_well_formed(body)


@SETTINGS
@given(valid_bodies(), st.sampled_from(REQUEST_KEYS), json_values)
def test_one_field_replaced_by_anything(body: dict[str, Any], key: str, value: Any) -> None:
    assert_well_formed({**body, key: value})


@SETTINGS
@given(valid_bodies(), st.data())
def test_one_content_item_field_replaced_by_anything(body: dict[str, Any], data: st.DataObject) -> None:
    content = [dict(item) for item in body["content"]]
    index = data.draw(st.integers(0, len(content) - 1))
    content[index][data.draw(st.sampled_from(ITEM_KEYS))] = data.draw(json_values)
    assert_well_formed({**body, "content": content})


OUT_OF_RANGE = {
    "execution_expires_after": [L.EXECUTION_EXPIRES_MIN - 1, L.EXECUTION_EXPIRES_MAX + 1],
    "priority": [L.PRIORITY_MIN - 1, L.PRIORITY_MAX + 1],
    "seed": [L.SEED_MIN - 1, L.SEED_MAX + 1],
    "safety_identifier": ["u" * (L.SAFETY_IDENTIFIER_MAX_CHARS + 1), "ü"],
    "resolution": ["8k"],
    "ratio": ["2:1"],
    "service_tier": ["batch"],
    "watermark": ["true"],
    "return_last_frame": [1],
}


@SETTINGS
@given(valid_bodies(), st.sampled_from(sorted(OUT_OF_RANGE)), st.data())
def test_a_value_out_of_range_is_refused_by_name(body: dict[str, Any], key: str, data: st.DataObject) -> None:
    checked = check_create_body({**body, key: data.draw(st.sampled_from(OUT_OF_RANGE[key]))})
    assert checked.request is None
    assert [p.path for p in checked.problems] == [key]
