"""Compose's side of the hand-off contract (`components.common.handoff`): another page sends a whole
request (rerun, edit, a draft's final) or one input (a previous task's video or last frame) and
Compose opens with it in its widgets.

Everything here writes session state before the widgets are drawn, which is the only moment
Streamlit lets a program set a widget's value.
"""

from __future__ import annotations

from typing import Any

import streamlit as st

from components.compose import form as F
from components.compose import sources as compose_sources
from components.compose.body import detect_mode, input_roles
from components.compose.fields import EXPIRES_HOURS, HOUR, REQUEST_FIELDS
from components.compose.image_input import ASSET_SCHEME, keep_image
from components.compose.state_keys import LINEAGE_KEY, NOTE_DISMISS_KEY, NOTE_KEY, SLOT_PREFIXES
from dailies.client import Client, DailiesError
from dailies.journal import Journal
from dailies.spec import media
from dailies.spec.catalog import MODELS, find_model
from dailies.spec.scenarios import MEDIA_ITEM_TYPES, Scenario

_CAPABILITY_FOR_ROLE = {
    "reference_image": "reference_images",
    "reference_video": "reference_videos",
    "reference_audio": "audio_input",
}


def apply(prefill: dict[str, Any] | None, client: Client | None, journal: Journal) -> None:
    """Load what `handoff.take()` returned into the form (nothing when it is None)."""
    if not prefill:
        return
    notes = [prefill.get("note") or ""]
    # What the next submission is a new version of (compose_submit links it into that shot), with the
    # prompt it came with: the same prompt makes a rerun, another an edit.
    lineage = prefill.get("lineage")
    if lineage and isinstance(prefill.get("request"), dict):
        texts = [c.get("text") for c in prefill["request"].get("content") or [] if c.get("type") == "text"]
        lineage = {**lineage, "prompt": texts[0] if texts else ""}
    st.session_state[LINEAGE_KEY] = lineage
    if isinstance(prefill.get("request"), dict):
        notes += load_request(prefill["request"], journal)
    elif isinstance(prefill.get("input"), dict):
        notes += add_input(prefill["input"], client)
    st.session_state[NOTE_KEY] = " ".join(n for n in notes if n)


def _clear_slots() -> None:
    state = st.session_state
    for key in [k for k in state if isinstance(k, str) and k.startswith(SLOT_PREFIXES)]:
        del state[key]


def _put_url(slot: str, url: str, kind: str) -> str | None:
    """Place one URL in a slot with the source it came from; returns a note when it could not."""
    state = st.session_state
    if url.startswith("data:"):
        try:
            mime, data = media.decode_data_url(url)
        except media.DataUrlError as exc:
            return f"An inline input could not be read ({exc})."
        if kind == "image_url":
            extension = (mime or "image/png").split("/")[-1]
            keep_image(slot, f"image.{extension}", data, mime, "journal")
            state[f"{slot}.source"] = "Upload"
            return None
    if url.startswith(ASSET_SCHEME):
        state[f"{slot}.source"] = "Asset id"
        state[f"{slot}.asset"] = url.removeprefix(ASSET_SCHEME)
    else:
        state[f"{slot}.source"] = "URL"
        state[f"{slot}.url"] = url
    return None


def load_request(request: dict[str, Any], journal: Journal) -> list[str]:
    """Put a whole request into the widgets (mode from its content, every parameter, every input);
    what was not given takes the form's default. Returns notes for what could not be loaded."""
    state = st.session_state
    notes: list[str] = []
    try:
        # Uploads the journal stored as files come back as data URLs.
        request = journal.restore_request(request)
    except OSError:
        notes.append("An upload kept by the journal is missing; choose that image again.")
    _clear_slots()
    for key, value in F.DEFAULTS.items():
        state[key] = value

    name = str(request.get("model", ""))
    if find_model(name) is not None:
        state[F.MODEL] = name
    elif name:
        # Not a catalog id: an endpoint id, as the task was sent; the model it serves is kept.
        state[F.MODEL] = F.BY_ENDPOINT
        state[F.ENDPOINT_ID] = name
        notes.append(f"{name} is not a catalog model id: it is used as an endpoint id; check which model it serves.")
    state[F.MODE] = detect_mode(request)

    counts = {"reference_image": 0, "reference_video": 0, "reference_audio": 0}
    # Each input goes to the slot of the role it plays in the request's scenario, as the rules and
    # the renderer read it (an image without a role beside a video is a reference image).
    for item, role in zip(request.get("content") or [], input_roles(request), strict=True):
        if not isinstance(item, dict):
            continue
        kind = item.get("type")
        if kind == "text":
            state[F.PROMPT] = str(item.get("text") or "")
        elif kind == "draft_task":
            draft_id = str((item.get("draft_task") or {}).get("id", ""))
            state[F.DRAFT_PICK] = draft_id
            state[F.DRAFT_ID] = draft_id
        elif kind in MEDIA_ITEM_TYPES:
            url = str((item.get(kind) or {}).get("url", ""))
            slot = _slot_for(role, counts)
            if slot is None:
                notes.append(f"An input with role {item.get('role')!r} was left out.")
                continue
            if note := _put_url(slot, url, kind):
                notes.append(note)
    state[F.REF_IMAGES] = counts["reference_image"] or (1 if state[F.MODE] != Scenario.REFERENCES else 0)
    state[F.REF_VIDEOS] = counts["reference_video"]
    state[F.REF_AUDIOS] = counts["reference_audio"]
    notes += _load_parameters(request)
    return notes


def _slot_for(role: str | None, counts: dict[str, int]) -> str | None:
    if role == "first_frame":
        return F.FIRST_SLOT
    if role == "last_frame":
        return F.LAST_SLOT
    makers = {"reference_image": F.ref_image_slot, "reference_video": F.ref_video_slot,
              "reference_audio": F.ref_audio_slot}
    if role in makers:
        counts[role] += 1
        return makers[role](counts[role] - 1)
    return None


def _load_parameters(request: dict[str, Any]) -> list[str]:
    """Every request field the form has a control for (`compose_fields.REQUEST_FIELDS`) into its
    controls; a field not given keeps the control's first value."""
    state = st.session_state
    loaded: set[str] = set()
    for f in REQUEST_FIELDS:
        value = request.get(f.name)
        if value is None or f.yields_to in loaded:
            continue
        controls = f.load(value)
        if controls:
            state.update(controls)
            loaded.add(f.name)
    expires = request.get("execution_expires_after")
    if "execution_expires_after" in loaded and state[EXPIRES_HOURS] * HOUR != expires:
        return [f"execution_expires_after {expires} s is shown as {state[EXPIRES_HOURS]} h (whole hours only)."]
    return []


def add_input(given: dict[str, Any], client: Client | None) -> list[str]:
    """Add one input (a previous task's video or last frame) to the slot its role names, keeping
    the rest of the form; switch mode, and model when the current one cannot take it."""
    state = st.session_state
    F._seed_defaults()
    notes: list[str] = []
    url, kind, role = str(given.get("url") or ""), given.get("kind"), given.get("role")
    need = _CAPABILITY_FOR_ROLE.get(role)
    model = find_model(state[F.MODEL])
    if need and not (model and getattr(model.capabilities, need)):
        other = next((m for m in MODELS if getattr(m.capabilities, need)), None)
        if other is not None:
            state[F.MODEL] = other.id
            notes.append(f"Switched to {other.label}, which takes a {role.replace('_', ' ')}.")
    if role == "first_frame":
        slot = F.FIRST_SLOT
        if state[F.MODE] != Scenario.FIRST_AND_LAST_FRAME:
            state[F.MODE] = Scenario.FIRST_FRAME
    elif role == "last_frame":
        slot = F.LAST_SLOT
        state[F.MODE] = Scenario.FIRST_AND_LAST_FRAME
    elif role in _CAPABILITY_FOR_ROLE:
        slot = _free_reference_slot(role)
        state[F.MODE] = Scenario.REFERENCES
    else:
        return [f"An input with role {role!r} cannot be added."]
    if kind == "image_url" and client is not None and not url.startswith(("data:", ASSET_SCHEME)):
        # Result URLs expire in 24 hours (and a local one may be out of the service's reach):
        # the frame is copied into the request, as an upload would be.
        try:
            data = compose_sources.fetch_result_image(client, url)
        except DailiesError as exc:
            notes.append(compose_sources.fetch_error_text(exc).capitalize() + "; its URL is used instead.")
        else:
            for key in [k for k in state if isinstance(k, str) and k.startswith(slot + ".")]:
                del state[key]
            keep_image(slot, "last-frame.png", data, None, "an earlier task's result")
            state[f"{slot}.source"] = "Upload"
            return notes
    for key in [k for k in state if isinstance(k, str) and k.startswith(slot + ".")]:
        del state[key]
    if note := _put_url(slot, url, str(kind)):
        notes.append(note)
    return notes


def _free_reference_slot(role: str) -> str:
    """The first reference slot of this kind holding nothing, made visible by raising the count."""
    state = st.session_state
    count_key, make = {
        "reference_image": (F.REF_IMAGES, F.ref_image_slot),
        "reference_video": (F.REF_VIDEOS, F.ref_video_slot),
        "reference_audio": (F.REF_AUDIOS, F.ref_audio_slot),
    }[role]
    count = int(state.get(count_key) or 0)
    for i in range(count):
        slot = make(i)
        if not any(state.get(slot + suffix) for suffix in (".kept", ".url", ".asset", ".task")):
            return slot
    state[count_key] = count + 1
    return make(count)


def show_note() -> None:
    """The note of the last prefill ("Rerun of cgt-…"), until dismissed."""
    note = st.session_state.get(NOTE_KEY)
    if not note:
        return
    cols = st.columns([12, 1])
    cols[0].info(note, icon=":material/redo:")
    if cols[1].button("✕", key=NOTE_DISMISS_KEY, help="Dismiss"):
        st.session_state.pop(NOTE_KEY, None)
        st.rerun()
