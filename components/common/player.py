"""Playback of a result: the live link while it works, else the kept copy, else a sentence saying why
there is nothing to play. An expired link is never handed to the player (it would answer 403).

A kept copy is a file of this machine (Streamlit serves it), or, on a team's dashboards with a bucket,
an object played from its presigned GET URL (the same URL for an hour, so a page that runs again does
not reload the player), whichever dashboard kept it."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import streamlit as st

from components.common import countdown as cd
from components.common import outbound
from dailies.journal import KeptFile
from dailies.spec import pixels
from dailies.spec.models import TaskRecord
from dailies.spec.results import LAST_FRAME_NAME, VIDEO_NAME
from dailies.spec.statuses import TaskStatus
from dailies.timecodes import record_frame_rate

Source = Literal["url", "kept", "none"]

# Why a task that has not succeeded has nothing to play.
NO_VIDEO_BECAUSE: dict[str, str] = {
    TaskStatus.QUEUED: "Queued: the video appears here once it has been generated.",
    TaskStatus.RUNNING: "Generating: the video appears here when the task succeeds.",
    TaskStatus.FAILED: "The task failed: there is no video.",
    TaskStatus.CANCELLED: "The task was cancelled before it ran: there is no video.",
    TaskStatus.EXPIRED: "The task expired before it ran: there is no video.",
}


@dataclass(frozen=True)
class MediaChoice:
    """What to show for one file of a task, and why."""

    source: Source
    url: str | None = None  # the live link, or a kept copy's presigned URL when it is in a bucket
    path: Path | None = None  # a kept copy on this machine
    reason: str = ""

    @property
    def media(self) -> Path | str | None:
        """What the player takes: the kept file, else the URL."""
        return self.path if self.path is not None else self.url


def choose(record: TaskRecord | None, kept: dict[str, KeptFile], now: float, name: str = VIDEO_NAME,
           on_service: bool = True) -> MediaChoice:
    """The live link, else the kept file, else none with the reason (no Streamlit calls; a copy in the
    team's bucket is signed here, and an unreachable bucket is a reason, not an error).

    `on_service` False means the record is the journal's copy of a task the service no longer has:
    its links point at deleted files however young they are, so only a kept copy can play.
    """
    live = None
    if record is not None and on_service:
        live = cd.playable_url(record, now) if name == VIDEO_NAME else cd.playable_last_frame_url(record, now)
        live = outbound.browser_url(live)  # a path instead of a URL would be a file of this machine, served
    if live:
        return MediaChoice("url", url=live)
    if name in kept:
        copy = kept[name]
        if copy.in_bucket:
            try:
                url = str(copy.media(now))
            except OSError as exc:  # the bucket refused or cannot be reached: say so, draw the rest
                return MediaChoice("none", reason=f"The kept copy could not be fetched from the team's archive: {exc}")
            return MediaChoice("kept", url=url, reason="Playing the kept copy from the team's archive.")
        return MediaChoice("kept", path=copy.path, reason="Playing the kept copy from the local archive.")
    if record is None or not on_service:
        return MediaChoice("none", reason="The service no longer has this task and no copy was kept.")
    if record.status == TaskStatus.SUCCEEDED:
        has_file = record.content is not None and (
            record.content.video_url if name == VIDEO_NAME else record.content.last_frame_url)
        if name == LAST_FRAME_NAME and not has_file:
            return MediaChoice("none", reason="No last frame: the task was created without `return_last_frame`.")
        return MediaChoice("none", reason="The result link expired (links last 24 hours after success) "
                                          "and no copy was kept.")
    return MediaChoice("none", reason=NO_VIDEO_BECAUSE.get(record.status, "No video."))


def aspect(record: TaskRecord | None) -> float | None:
    """Width over height of the record's video as rendered (the pixel table for its model, resolution
    and ratio): the shape a player takes before the video loads and says its own. None when unknown."""
    if record is None:
        return None
    try:
        width, height = pixels.dimensions(record.model or "", record.resolution, record.ratio)
    except ValueError:
        return None
    return width / height


def fps(record: TaskRecord | None) -> float:
    """The video's frame rate as its record says it; Seedance's 24 where it does not."""
    return record_frame_rate(record.framespersecond if record is not None else None)


def fit_width(record: TaskRecord | None, height: int | None) -> int | str:
    """The player width that keeps a portrait or square video at most `height` pixels tall, so a grid of
    mixed ratios stays level; landscape (and unknown) ratios fill the column."""
    if height is None or record is None or not record.ratio or ":" not in record.ratio:
        return "stretch"
    w, _, h = record.ratio.partition(":")
    try:
        aspect = int(w) / int(h)
    except (ValueError, ZeroDivisionError):
        return "stretch"
    return "stretch" if aspect > 1 else max(80, int(height * aspect))


def video(record: TaskRecord | None, kept: dict[str, KeptFile], now: float, on_service: bool = True,
          max_height: int | None = None) -> MediaChoice:
    """Draw the video player (or the reason there is none); return what was chosen."""
    choice = choose(record, kept, now, VIDEO_NAME, on_service)
    width = fit_width(record, max_height)
    if choice.source == "url":
        st.video(choice.url, width=width)
    elif choice.source == "kept":
        st.video(choice.media, width=width)
        st.caption("💾 " + choice.reason)
    else:
        st.info(choice.reason, icon="🎞️")
    return choice


def last_frame(record: TaskRecord | None, kept: dict[str, KeptFile], now: float, on_service: bool = True,
               caption: bool = True, width: int | str = "content") -> MediaChoice:
    """Draw the last-frame image when there is one."""
    choice = choose(record, kept, now, LAST_FRAME_NAME, on_service)
    if choice.source == "url":
        st.image(choice.url, caption="Last frame" if caption else None, width=width)
    elif choice.source == "kept":
        st.image(str(choice.media), caption="Last frame (kept copy)" if caption else None, width=width)
    elif record is not None and record.status == TaskStatus.SUCCEEDED and on_service and caption:
        st.caption(choice.reason)
    return choice
