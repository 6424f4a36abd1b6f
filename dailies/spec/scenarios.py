"""Which scenario of spec 2.3 a request's content is, and the role each of its items plays.

One classification, read by the rules (which judge the roles it gives), the renderer (which draws
the scenario it names) and Compose (which opens a request in the mode it names), so the three
cannot disagree about what a request asks for.

Roles left out take a default: a video or an audio clip is a reference; a lone image is the first
frame, unless a video or an audio clip beside it makes the request a references one, where it is
a reference image; an image without a role beside one `last_frame` image (and nothing else) is the
first frame, the shape the Vercel AI SDK's ByteDance provider sends for first-and-last-frame
requests (`packages/bytedance/src/bytedance-video-model.ts`); otherwise, among several images, an
image needs its role (the rules ask for it).
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Protocol


class Scenario(StrEnum):
    """The scenarios of spec 2.3, which exclude each other, and the final made from a draft.
    The values are what the dashboard stores as a submission's mode."""

    TEXT = "text"
    FIRST_FRAME = "first_frame"
    FIRST_AND_LAST_FRAME = "first_last_frame"
    REFERENCES = "references"
    DRAFT_FINAL = "draft_final"

    @property
    def words(self) -> str:
        """The scenario in a sentence: 'the first-and-last-frame scenario'."""
        return _WORDS[self]


_WORDS = {
    Scenario.TEXT: "text-only",
    Scenario.FIRST_FRAME: "first-frame",
    Scenario.FIRST_AND_LAST_FRAME: "first-and-last-frame",
    Scenario.REFERENCES: "references",
    Scenario.DRAFT_FINAL: "final-from-a-draft",
}
FRAME_SCENARIOS = frozenset({Scenario.FIRST_FRAME, Scenario.FIRST_AND_LAST_FRAME})
MEDIA_ITEM_TYPES = ("image_url", "video_url", "audio_url")  # content items that carry a media URL
_DEFAULT_ROLE = {"video_url": "reference_video", "audio_url": "reference_audio"}


class ItemLike(Protocol):
    """What the classification reads of a content item (a `models.ContentItem` has both)."""

    @property
    def type(self) -> str: ...
    @property
    def role(self) -> str | None: ...


def content_roles(content: Sequence[ItemLike]) -> tuple[str | None, ...]:
    """The role each item plays: its own, or its type's default in this content (module
    docstring). None for text and draft items, and for an image without a role among several."""
    image_roles = [item.role for item in content if item.type == "image_url"]
    with_video_or_audio = any(item.type in ("video_url", "audio_url") for item in content)
    # One image without a role and one last frame: nothing but a first frame can be meant.
    opens_a_last_frame = sorted(image_roles, key=str) == [None, "last_frame"] and not with_video_or_audio
    return tuple(_role_of(item, len(image_roles), with_video_or_audio, opens_a_last_frame) for item in content)


def _role_of(item: ItemLike, images: int, with_video_or_audio: bool, opens_a_last_frame: bool) -> str | None:
    if item.role is not None:
        return item.role
    if item.type == "image_url":
        if opens_a_last_frame:
            return "first_frame"
        if images != 1:
            return None
        return "reference_image" if with_video_or_audio else "first_frame"
    return _DEFAULT_ROLE.get(item.type)


def scenario_of(content: Sequence[ItemLike]) -> Scenario:
    """The scenario of a request's content.

    A draft task makes a final; a first frame makes the first-frame scenario (first-and-last with
    a last frame); any other image, video or audio makes a references request; text alone is text.
    Content the rules refuse still gets a meaning, so that the renderer never fails and Compose
    opens any request: a first frame wins over references mixed with it, and a last frame without
    a first frame, like an image without a role among several, counts as a reference.
    """
    if any(item.type == "draft_task" for item in content):
        return Scenario.DRAFT_FINAL
    roles = content_roles(content)
    if "first_frame" in roles:
        return Scenario.FIRST_AND_LAST_FRAME if "last_frame" in roles else Scenario.FIRST_FRAME
    if any(item.type in MEDIA_ITEM_TYPES for item in content):
        return Scenario.REFERENCES
    return Scenario.TEXT
