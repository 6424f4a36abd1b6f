"""Video and audio inputs of Compose (reference mode, generation 2.0): a URL, an `asset://` id, or
for videos an earlier task's result, to chain shots. Their limits are stated in words; the service
checks them when it fetches the file."""

from __future__ import annotations

import streamlit as st

from components.compose import sources as compose_sources
from components.compose.body import MediaChoice
from components.compose.image_input import SlotContext, as_asset_url
from components.compose.state_keys import SLOT_ASSET, SLOT_URL
from dailies.spec import limits as L
from dailies.spec.models import TaskRecord

VIDEO_SOURCES = ("URL", "Asset id", "Previous task")
AUDIO_SOURCES = ("URL", "Asset id")

VIDEO_LIMITS = (
    f"Videos: at most {L.VIDEO_MAX_BYTES // L.MB} MB and {L.VIDEO_DURATION_MIN:g} to {L.VIDEO_DURATION_MAX:g} "
    f"seconds each; at most {L.REFERENCE_VIDEOS_MAX} reference videos, lasting "
    f"{L.REFERENCE_VIDEOS_TOTAL_SECONDS_MAX:g} seconds together. Given as a public URL or an asset id."
)
AUDIO_LIMITS = (
    f"Audio: {L.AUDIO_DURATION_MIN:g} to {L.AUDIO_DURATION_MAX:g} seconds each, at most "
    f"{L.REFERENCE_AUDIOS_MAX} clips; generation 2.0 only, and never the only input: add an image or a video "
    "beside it."
)


def video_slot(slot: str, label: str, ctx: SlotContext) -> tuple[MediaChoice, object]:
    """Draw one reference-video input; return what it holds and a placeholder for its messages."""
    choice = MediaChoice(slot=slot, kind="video_url", role="reference_video")
    with st.container(border=True):
        st.markdown(f"**{label}**")
        source = _source(slot, label, VIDEO_SOURCES)
        if source == "Previous task":
            _previous_video(slot, choice, ctx)
        else:
            _typed(slot, choice, source, "Video URL", "https://example.com/clip.mp4")
        messages = st.empty()
    return choice, messages


def audio_slot(slot: str, label: str) -> tuple[MediaChoice, object]:
    """Draw one reference-audio input; return what it holds and a placeholder for its messages."""
    choice = MediaChoice(slot=slot, kind="audio_url", role="reference_audio")
    with st.container(border=True):
        st.markdown(f"**{label}**")
        source = _source(slot, label, AUDIO_SOURCES)
        _typed(slot, choice, source, "Audio URL", "https://example.com/voice.mp3")
        messages = st.empty()
    return choice, messages


def _source(slot: str, label: str, sources: tuple[str, ...]) -> str:
    key = f"{slot}.source"
    if st.session_state.get(key) not in sources:
        st.session_state[key] = sources[0]
    return st.radio(f"Source of the {label.lower()}", sources, key=key, horizontal=True,
                    label_visibility="collapsed", persist_state="session")


def _typed(slot: str, choice: MediaChoice, source: str, url_label: str, placeholder: str) -> None:
    if source == "URL":
        st.session_state.setdefault(SLOT_URL.format(slot), "")
        choice.url = st.text_input(url_label, key=SLOT_URL.format(slot), placeholder=placeholder,
                                   persist_state="session").strip()
    else:
        st.session_state.setdefault(SLOT_ASSET.format(slot), "")
        choice.url = as_asset_url(st.text_input("Asset id", key=SLOT_ASSET.format(slot),
                                                placeholder="asset-20250101-abcde", persist_state="session").strip())
    choice.source = choice.url


def _previous_video(slot: str, choice: MediaChoice, ctx: SlotContext) -> None:
    records = [r for r in compose_sources.recent_succeeded(ctx.client) if r.content and r.content.video_url]
    if not records:
        st.caption("No finished task yet.")
        return
    record = compose_sources.pick_task(f"{slot}.task", "Video of", records, ctx.journal)
    if record is None:
        return
    choice.url = record.content.video_url
    choice.source = f"video of {record.id}"
    choice.seconds = result_seconds(record)
    if record.duration and not L.VIDEO_DURATION_MIN <= record.duration <= L.VIDEO_DURATION_MAX:
        st.caption(f"That video lasts {record.duration} s; a reference video may last "
                   f"{L.VIDEO_DURATION_MIN:g} to {L.VIDEO_DURATION_MAX:g} s.")
    st.caption("Sent as its result URL, which lives 24 hours from the task's end; the service downloads it "
               "when this task runs.")


def result_seconds(record: TaskRecord) -> float | None:
    """How long a task's result video really lasts: its frames at its frame rate, or for a length of
    d seconds, d seconds and the closing frame (24 x d + 1 frames: a "15 s" result lasts 15.04 s).
    None when the record does not say."""
    fps = record.framespersecond or L.FRAMES_PER_SECOND
    if record.frames:
        return record.frames / fps
    if record.duration and record.duration > 0:
        return record.duration + 1 / fps
    return None
