"""The approved cut handed to the editor: a timeline of shots, each a clip whose media is its kept
copy, with the review's comments (and drawings) as markers on their frames, written as
OpenTimelineIO (`.otio`, what Resolve and the ASWF review tools read), a CMX 3600 EDL or FCPXML
through OTIO's own adapters.

`timeline` and `write` are given plain shots (`HandoffShot`), so they are tested without a journal;
`shots_from_journal` gathers them from a journal view (the Review page's, `dailies export`'s).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import opentimelineio as otio

from .handoff_formats import FORMATS
from .journal.statuses import APPROVED
from .timecodes import frame_at, frame_timecode, record_frame_rate

MARKER_NAME_CHARS = 80  # an EDL's LOC line and an editor's marker list show a line, not a paragraph


@dataclass(frozen=True)
class HandoffNote:
    """A comment as a marker: who, what, on which frames (`out_frame` the last of a range), drawn or not."""

    author: str
    text: str
    frame: int
    out_frame: int | None = None
    drawn: bool = False


@dataclass(frozen=True)
class HandoffShot:
    task_id: str
    name: str  # what the editor's bin shows: the version's label
    media: str  # the kept copy: a path on this machine or a URL
    frames: int
    fps: float
    notes: tuple[HandoffNote, ...] = ()


def _reel_name(task_id: str) -> str:
    """An EDL reel name (eight letters and digits at most): the task id's distinctive tail."""
    return re.sub(r"[^A-Za-z0-9]", "", task_id)[-8:].upper() or "DAILIES"


def _media_url(media: str) -> str:
    """A URL as it is; a path as its file:// URL (a relative one from the working folder)."""
    if re.match(r"^[a-z][a-z0-9+.-]*://", media):
        return media
    return Path(media).resolve().as_uri()


def clip_file_name(position: int, shot: HandoffShot) -> str:
    """The name a shot's copy takes in a hand-off's media folder: its place in the cut, then its task id
    (letters, digits, - and _ only), so the folder lists in the cut's order and no two collide."""
    return f"{position:03d}-{re.sub(r'[^A-Za-z0-9_-]', '', shot.task_id)[-40:] or 'shot'}.mp4"


def _marker(note: HandoffNote, fps: float) -> otio.schema.Marker:
    length = 1 if note.out_frame is None else note.out_frame - note.frame + 1
    text = " ".join(note.text.split()) or "(drawing)"
    name = f"{note.author}: {text}"
    if len(name) > MARKER_NAME_CHARS:
        name = name[: MARKER_NAME_CHARS - 1].rstrip() + "…"
    marker = otio.schema.Marker(
        name=name, comment=note.text,
        marked_range=otio.opentime.TimeRange(otio.opentime.RationalTime(note.frame, fps),
                                             otio.opentime.RationalTime(length, fps)),
        color=otio.schema.MarkerColor.RED if note.drawn else otio.schema.MarkerColor.YELLOW)
    marker.metadata["dailies"] = {"author": note.author, "frame": note.frame, "out_frame": note.out_frame,
                                  "timecode": frame_timecode(note.frame, fps), "drawn": note.drawn}
    return marker


def timeline(shots: Sequence[HandoffShot], name: str = "Dailies approved",
             media_beside: bool = False) -> otio.schema.Timeline:
    """One video track of the shots, in the order given, each whole, its notes as markers.
    `media_beside`: the shots' media are paths relative to the timeline's own folder (a package made
    with its copies), written as they are."""
    cut = otio.schema.Timeline(name=name)
    track = otio.schema.Track(name="V1", kind=otio.schema.TrackKind.Video)
    cut.tracks.append(track)
    for shot in shots:
        whole = otio.opentime.TimeRange(otio.opentime.RationalTime(0, shot.fps),
                                        otio.opentime.RationalTime(shot.frames, shot.fps))
        url = shot.media if media_beside else _media_url(shot.media)
        reference = otio.schema.ExternalReference(target_url=url, available_range=whole)
        clip = otio.schema.Clip(name=shot.name, media_reference=reference, source_range=whole)
        clip.metadata["dailies"] = {"task_id": shot.task_id}
        clip.metadata["cmx_3600"] = {"reel": _reel_name(shot.task_id)}
        for note in shot.notes:
            if note.frame < shot.frames:  # a note beyond the clip's end (a longer take's) is no frame of it
                clip.markers.append(_marker(note, shot.fps))
        track.append(clip)
    return cut


def write(cut: otio.schema.Timeline, fmt: str) -> str:
    """The timeline in `fmt` ("otio", "edl" or "fcpxml"); ValueError for another, or for no clip."""
    if fmt not in FORMATS:
        raise ValueError(f"format: one of {', '.join(FORMATS)}, not {fmt!r}")
    if not any(True for _ in cut.find_clips()):
        raise ValueError("no shot to hand off")
    return otio.adapters.write_to_string(cut, FORMATS[fmt][0])


def notes_of(comments: Iterable[Any], fps: float) -> tuple[HandoffNote, ...]:
    """The comments pinned to a frame or a time, as markers, in frame order (replies and unpinned
    comments are the review's conversation, not marks on the cut)."""
    notes = []
    for c in comments:
        frame = c.frame if c.frame is not None else None if c.timecode is None else frame_at(c.timecode, fps)
        if frame is None or c.parent_id is not None:
            continue
        notes.append(HandoffNote(c.author, c.body, frame, c.out_frame if c.frame is not None else None,
                                 bool(c.drawing)))
    return tuple(sorted(notes, key=lambda n: (n.frame, n.author)))


def shots_from_journal(view: Any, task_ids: Sequence[str], *, media_of: Callable[[str], str | None],
                       name_of: Callable[[str], str] | None = None,
                       record_of: Callable[[str], dict[str, Any] | None] | None = None, approved_only: bool = True,
                       ) -> tuple[list[HandoffShot], list[str]]:
    """The shots of `task_ids` (in that order) a journal view can hand off: approved ones unless
    `approved_only` is false, each with its media (`media_of`: the kept copy, None when there is none),
    its length and rate from its record (`record_of`, default the journal's saved one), its comments as
    notes. Also the ids left out, each with why."""
    statuses = view.statuses(task_ids)
    comments = view.comments(task_ids)
    shots, left = [], []
    for task_id in task_ids:
        status = statuses.get(task_id)
        if approved_only and (status is None or status.status != APPROVED):
            left.append(f"{task_id}: not approved")
            continue
        media = media_of(task_id)
        if media is None:
            left.append(f"{task_id}: no kept copy (keep it from Review or Tasks first)")
            continue
        record = (record_of or view.record)(task_id) or {}
        fps = record_frame_rate(record.get("framespersecond"))
        duration = record.get("duration")
        if not isinstance(duration, int | float) or duration <= 0:
            left.append(f"{task_id}: its record gives no duration")
            continue
        shots.append(HandoffShot(task_id, name_of(task_id) if name_of else task_id, media,
                                 round(duration * fps), fps, notes_of(comments.get(task_id, []), fps)))
    return shots, left
