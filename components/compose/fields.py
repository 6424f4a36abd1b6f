"""The request fields Compose has a control for, in one table: which control holds each field,
its first value (the spec's default, never retyped), the capability without which the control
is not drawn, and how a value goes into a body and comes back out of one.

Read by the form (`compose_form`: the controls' keys and first values, which controls to draw),
the body builder (`compose_body.build_body`: to-body) and the prefill (`compose_prefill`:
from-body). Pure Python, no Streamlit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from components.compose.state_keys import (
    CALLBACK_URL,
    CAMERA_FIXED,
    DRAFT,
    DURATION,
    DURATION_AUTO,
    EXPIRES_HOURS,
    FLEX,
    FRAMES,
    GENERATE_AUDIO,
    LENGTH_BY,
    PRIORITY,
    RATIO,
    RESOLUTION,
    RETURN_LAST_FRAME,
    SAFETY_ID,
    SEED,
    WATERMARK,
    WEB_SEARCH,
)
from dailies.spec import limits as L
from dailies.spec import pixels
from dailies.spec.catalog import Capabilities
from dailies.spec.drafts import FIELDS_A_FINAL_SETS
from dailies.spec.models import DEFAULTS
from dailies.spec.rules import FRAME_COUNTS
from dailies.spec.scenarios import Scenario

# The frame counts offered: exactly those the rules accept.
FRAMES_CHOICES: tuple[int, ...] = FRAME_COUNTS
FRAMES_DEFAULT = pixels.frame_count(L.DURATION_DEFAULT)  # 121, the same length as the default duration
HOUR = 3600
EXPIRES_HOURS_MIN, EXPIRES_HOURS_MAX = L.EXECUTION_EXPIRES_MIN // HOUR, L.EXECUTION_EXPIRES_MAX // HOUR


def spec_default(name: str) -> Any:
    """The value the service uses for a request field left unset (None: it has none)."""
    if name == "resolution":
        return pixels.RESOLUTION_DEFAULT
    if name == "ratio":
        return pixels.RATIO_DEFAULT
    return DEFAULTS.get(name)


def _same(value: Any) -> Any:
    return value


@dataclass(frozen=True)
class RequestField:
    """One request field and the control that holds it.

    `attr` is the `FormValues` attribute the control fills. `to_body` turns that value into the
    body's (None: left out); a value equal to the spec's default is left out too, unless the field
    is `always` sent (the fields that define the picture). `from_body` turns a body's value into
    control values by key ({}: nothing to load). `unset` gives the controls' first values where
    the spec has no default to load; otherwise they are `from_body(spec default)`. A field that
    `yields_to` another is neither sent nor loaded when that one is (frames win over duration).
    """

    name: str
    key: str
    attr: str = ""
    capability: str | None = None
    to_body: Callable[[Any], Any] = _same
    from_body: Callable[[Any], dict[str, Any]] | None = None
    always: bool = False
    unset: dict[str, Any] | None = None
    yields_to: str | None = None

    def __post_init__(self) -> None:
        if not self.attr:
            object.__setattr__(self, "attr", self.name)

    def load(self, value: Any) -> dict[str, Any]:
        """Control values for a body's value of this field."""
        return self.from_body(value) if self.from_body is not None else {self.key: value}

    def first_values(self) -> dict[str, Any]:
        """The controls' values on a fresh form."""
        return dict(self.unset) if self.unset is not None else self.load(spec_default(self.name))

    def sent(self, value: Any) -> Any:
        """What the body carries for the form's `value`; None when the field is left out."""
        if value is None:
            return None
        body_value = self.to_body(value)
        if not self.always and body_value == spec_default(self.name):
            return None
        return body_value


def _frames_controls(frames: Any) -> dict[str, Any]:
    if isinstance(frames, int) and frames in FRAMES_CHOICES:
        return {LENGTH_BY: "frames", FRAMES: frames}
    return {}


def _duration_controls(duration: Any) -> dict[str, Any]:
    if duration == L.DURATION_MODEL_PICKS:
        return {DURATION_AUTO: True}
    if isinstance(duration, int):
        return {DURATION: duration, DURATION_AUTO: False}
    return {}


def expires_hours(seconds: int) -> int:
    """The whole hours the control shows for `execution_expires_after`, within its range."""
    return min(max(round(seconds / HOUR), EXPIRES_HOURS_MIN), EXPIRES_HOURS_MAX)


def _expires_controls(seconds: Any) -> dict[str, Any]:
    return {EXPIRES_HOURS: expires_hours(seconds)} if isinstance(seconds, int) else {}


REQUEST_FIELDS: tuple[RequestField, ...] = (
    RequestField("resolution", RESOLUTION, always=True),
    RequestField("ratio", RATIO, always=True),
    RequestField("frames", FRAMES, capability="frames", always=True, from_body=_frames_controls,
                 unset={LENGTH_BY: "seconds", FRAMES: FRAMES_DEFAULT}),
    RequestField("duration", DURATION, always=True, from_body=_duration_controls, yields_to="frames"),
    RequestField("seed", SEED, capability="seed"),
    RequestField("camera_fixed", CAMERA_FIXED, capability="camera_fixed"),
    RequestField("generate_audio", GENERATE_AUDIO, capability="generate_audio"),
    RequestField("draft", DRAFT, capability="draft"),
    RequestField("service_tier", FLEX, attr="flex", capability="flex",
                 to_body=lambda flex: "flex" if flex else "default",
                 from_body=lambda tier: {FLEX: tier == "flex"}),
    RequestField("priority", PRIORITY, capability="priority"),
    RequestField("tools", WEB_SEARCH, attr="web_search", capability="tools",
                 to_body=lambda on: [{"type": "web_search"}] if on else None,
                 from_body=lambda tools: {WEB_SEARCH: any(isinstance(t, dict) and t.get("type") == "web_search"
                                                          for t in tools or [])}),
    RequestField("watermark", WATERMARK),
    RequestField("return_last_frame", RETURN_LAST_FRAME),
    RequestField("execution_expires_after", EXPIRES_HOURS, attr="expires_hours",
                 to_body=lambda hours: hours * HOUR, from_body=_expires_controls),
    RequestField("callback_url", CALLBACK_URL, to_body=lambda url: url.strip() or None, unset={CALLBACK_URL: ""}),
    RequestField("safety_identifier", SAFETY_ID, to_body=lambda text: text or None, unset={SAFETY_ID: ""}),
)
BY_NAME: dict[str, RequestField] = {f.name: f for f in REQUEST_FIELDS}


def first_values() -> dict[str, Any]:
    """Every request control's value on a fresh form, by key."""
    values: dict[str, Any] = {}
    for f in REQUEST_FIELDS:
        values.update(f.first_values())
    return values


def offered(name: str, caps: Capabilities, mode: str) -> bool:
    """Whether the form draws the control of request field `name`: the model takes it, and the
    mode does not leave it to the draft (a final sets only `drafts.FIELDS_A_FINAL_SETS`)."""
    capability = BY_NAME[name].capability
    if capability is not None and not getattr(caps, capability):
        return False
    return mode != Scenario.DRAFT_FINAL or name in FIELDS_A_FINAL_SETS
