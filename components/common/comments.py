"""One comment as Review's cards and the guest page show it: author, time, resolution and text as
typed, and its timecode as a button that plays the version from there."""

from __future__ import annotations

from collections.abc import Callable, Iterable
from datetime import tzinfo
from typing import Any

import streamlit as st

from components.common import actions
from components.common.markdown_text import markdown_text
from components.common.records import format_time
from components.common.timecode_player import format_timecode
from dailies.journal import Comment
from dailies.timecodes import frame_at, is_timecode

# A version's marks on the player's timeline, at the most (a thread longer than this shows its first).
MAX_MARKS = 300
MARK_LABEL_CHARS = 80


def said(comment: Comment, depth: int, tz: tzinfo) -> None:
    """One comment of a thread: its author, time, resolution and text, indented by its depth."""
    indent = "&nbsp;" * 6 * min(depth, 4)
    when = format_time(comment.created_at, tz)
    resolved = (" · ✅ resolved" + (f" by {markdown_text(comment.resolved_by)}" if comment.resolved_by else "")
                if comment.resolved else "")
    # Names and bodies are whoever wrote them (a share link's guest too): shown as typed, so a body's
    # lines cannot load an image, hide a link or start a bold line that passes for another comment.
    text = markdown_text(comment.body, indent=indent)
    text = f"~~{text}~~" if comment.resolved else text
    drawn = " · ✏️ drawing" if comment.drawing else ""
    if comment.frame is not None and comment.out_frame is not None:
        drawn += f" · frames {comment.frame}–{comment.out_frame}"
    st.markdown(f"{indent}**{markdown_text(comment.author)}** · {when}{resolved}{drawn}  \n{indent}{text}")


def timecode_button(comment: Comment, key: str, on_click: Callable[..., None], args: tuple) -> None:
    """The comment's timecode as a button that shows the version there, on its frame when it has one
    (none without a timecode)."""
    if is_timecode(comment.timecode):  # none, or a stored one no video has (read as none by the journal)
        where = "its frame" if comment.frame is not None else "here"
        actions.button(format_timecode(comment.timecode), key=key, type="secondary", icon=":material/play_arrow:",
                       on_click=on_click, args=args, help=f"Show {where}", width="content")


def seek_request(comment: Comment) -> dict[str, Any]:
    """Where a click on the comment's timecode sends the player (timecode_player's arguments): its time,
    its frame when it has one, its range's last frame and its drawing to show there."""
    shapes = [shape.model_dump() for shape in comment.drawing] if comment.drawing else None
    return {"seek_to": comment.timecode, "seek_frame": comment.frame, "show_drawing": shapes,
            "show_out_frame": comment.out_frame}


def player_seek(value: object) -> dict[str, Any]:
    """The timecode_player arguments of a seek handed over in the session (`seek_request`'s, or seconds
    alone as before frames)."""
    return value if isinstance(value, dict) else {"seek_to": value}


def timeline_marks(comments: Iterable[Comment], fps: float) -> list[dict[str, Any]]:
    """The comments as marks on the player's timeline (timecode_player's `marks`): each one's frame (for
    a comment from before frames were kept, the frame of its timecode), its range's last frame, whether
    it is drawn or resolved, and who said what (cut short). Comments pinned to nothing have no mark."""
    marks: list[dict[str, Any]] = []
    for comment in comments:
        if comment.frame is not None:
            first = comment.frame
        elif is_timecode(comment.timecode):
            first = frame_at(comment.timecode, fps)
        else:
            continue
        body = " ".join(comment.body.split())
        if len(body) > MARK_LABEL_CHARS:
            body = body[:MARK_LABEL_CHARS - 1] + "…"
        marks.append({"in": first, "out": comment.out_frame, "drawn": comment.drawing is not None,
                      "resolved": comment.resolved, "label": f"{comment.author}: {body}"})
        if len(marks) == MAX_MARKS:
            break
    return marks
