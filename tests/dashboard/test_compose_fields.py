"""The field table of Compose: the controls' first values come from the spec, and a request's
fields loaded into the controls (prefill) give the same fields back (body builder)."""

from __future__ import annotations

from typing import Any

import pytest

from components.compose import form as compose_form
from components.compose.body import FormValues, build_body
from components.compose.fields import (
    BY_NAME,
    DURATION,
    DURATION_AUTO,
    FRAMES,
    LENGTH_BY,
    REQUEST_FIELDS,
    first_values,
    offered,
)
from dailies.spec import limits as L
from dailies.spec import pixels
from dailies.spec.catalog import find_model
from dailies.spec.drafts import FIELDS_A_FINAL_SETS
from dailies.spec.models import DEFAULTS, CreateTaskRequest
from dailies.spec.scenarios import Scenario

V20 = "doubao-seedance-2-0-260128"
V15 = "doubao-seedance-1-5-pro-251215"
V10 = "doubao-seedance-1-0-pro-250528"


def test_every_control_starts_at_the_spec_default() -> None:
    first = first_values()
    assert {k: v for k, v in compose_form.DEFAULTS.items() if k in first} == first
    assert first[BY_NAME["resolution"].key] == pixels.RESOLUTION_DEFAULT
    assert first[BY_NAME["ratio"].key] == pixels.RATIO_DEFAULT
    assert (first[DURATION], first[DURATION_AUTO]) == (DEFAULTS["duration"], False)
    assert first[BY_NAME["seed"].key] == DEFAULTS["seed"]
    assert first[BY_NAME["generate_audio"].key] is DEFAULTS["generate_audio"]
    assert first[BY_NAME["execution_expires_after"].key] * 3600 == DEFAULTS["execution_expires_after"]
    # A fresh form sends none of them but the picture-defining ones.
    body = build_body(FormValues(model=V20, prompt="t")).body
    assert set(body) == {"model", "content", "resolution", "ratio", "duration"}


def test_every_field_the_form_fills_is_a_request_field() -> None:
    assert {f.name for f in REQUEST_FIELDS} <= set(CreateTaskRequest.model_fields)
    assert {f.attr for f in REQUEST_FIELDS} <= set(FormValues.__dataclass_fields__)


def controls_to_values(state: dict[str, Any], model: str) -> FormValues:
    """What the form reads from its controls (compose_form), for the request fields."""
    values = FormValues(model=model, prompt="t")
    for f in REQUEST_FIELDS:
        setattr(values, f.attr, state[f.key])
    if state[LENGTH_BY] == "frames":
        values.duration = None
    else:
        values.frames = None
        values.duration = L.DURATION_MODEL_PICKS if state[DURATION_AUTO] else state[DURATION]
    return values


@pytest.mark.parametrize(("model", "fields"), [
    (V15, {"resolution": "480p", "ratio": "4:3", "duration": 6, "seed": 7, "camera_fixed": True,
           "generate_audio": False, "watermark": True, "return_last_frame": True, "service_tier": "flex",
           "execution_expires_after": 7200, "callback_url": "https://example.com/hook",
           "safety_identifier": "user-1", "draft": True}),
    (V10, {"resolution": "1080p", "ratio": "21:9", "frames": 29}),
    (V20, {"resolution": "4k", "ratio": "adaptive", "duration": -1, "priority": 3, "tools": [{"type": "web_search"}]}),
])
def test_a_request_loaded_into_the_controls_is_built_back_unchanged(model, fields) -> None:
    state = first_values()
    loaded: set[str] = set()
    for f in REQUEST_FIELDS:  # as compose_prefill loads them
        if fields.get(f.name) is not None and f.yields_to not in loaded and (controls := f.load(fields[f.name])):
            state.update(controls)
            loaded.add(f.name)
    body = build_body(controls_to_values(state, model)).body
    assert {k: v for k, v in body.items() if k not in ("model", "content")} == fields


def test_frames_win_over_duration_both_ways() -> None:
    state = first_values()
    state.update(BY_NAME["frames"].load(121))
    assert (state[LENGTH_BY], state[FRAMES]) == ("frames", 121)
    body = build_body(FormValues(model=V10, prompt="t", frames=121, duration=5)).body
    assert body["frames"] == 121 and "duration" not in body


def test_a_final_offers_only_what_a_final_sets() -> None:
    caps = find_model(V15).capabilities
    shown = {f.name for f in REQUEST_FIELDS if offered(f.name, caps, Scenario.DRAFT_FINAL)}
    assert shown == {f.name for f in REQUEST_FIELDS if f.name in FIELDS_A_FINAL_SETS}
    assert offered("seed", caps, Scenario.TEXT) and not offered("seed", find_model(V20).capabilities, Scenario.TEXT)
