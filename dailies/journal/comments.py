"""Comments: a thread per task (a version). Each has an author, a time, and optionally a timecode in
the video (seconds), the frame it was made on (or a range of frames) and a drawing on it; a reply
names the comment it answers; a comment is resolved and reopened by anyone of the scope (who and when
is kept)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterable
from dataclasses import dataclass, replace
from typing import Any

from sqlalchemy import select

from ..spec.drawings import Drawing, drawing_json, parse_drawing
from ..timecodes import MAX_FRAME, MAX_SECONDS, is_frame, is_timecode
from .statuses import StatusesMixin

MAX_COMMENT_CHARS = 5000


@dataclass(frozen=True)
class Comment:
    id: str
    task_id: str
    author: str  # the name they sign with
    body: str
    created_at: float  # unix seconds
    timecode: float | None = None  # seconds into the video, kept to the hundredth
    parent_id: str | None = None  # the comment this one answers
    resolved_at: float | None = None
    resolved_by: str | None = None
    # Pinned to a frame (counted from 0 at the video's rate) and, on a range, to its last; drawn on.
    frame: int | None = None
    out_frame: int | None = None
    drawing: Drawing | None = None

    @property
    def resolved(self) -> bool:
        return self.resolved_at is not None

    def row(self) -> dict[str, Any]:
        """The comment as its table's columns (the drawing as its JSON)."""
        return {**self.__dict__, "drawing": drawing_json(self.drawing)}


class CommentsMixin(StatusesMixin):
    """Stands on StatusesMixin for the view's author."""

    def add_comment(self, task_id: str, body: str, timecode: float | None = None, parent_id: str | None = None,
                    at: float | None = None, author: str | None = None, *, frame: int | None = None,
                    out_frame: int | None = None, drawing: str | list | None = None) -> Comment:
        """A comment on `task_id`, at `timecode` seconds and `frame` when given, on the range to `out_frame`,
        with a `drawing` (JSON text or a list of shapes: dailies/spec/drawings.py). A drawing alone is a
        comment too. ValueError names what is wrong."""
        body = body.strip()
        shapes, problems = parse_drawing(drawing)
        if problems:
            raise ValueError("; ".join(str(p) for p in problems))
        if not body and not shapes:
            raise ValueError("a comment needs some text")
        if len(body) > MAX_COMMENT_CHARS:
            raise ValueError(f"a comment is at most {MAX_COMMENT_CHARS} characters")
        if timecode is not None and not is_timecode(timecode):
            # Not only negatives and NaN: infinity, or 1e300, is no position in any video, and a report or
            # a card could not show it.
            raise ValueError(f"a timecode is a time in the video: from 0 to {MAX_SECONDS:g} seconds, "
                             f"not {timecode!r}")
        check_frames(frame, out_frame)
        comment = Comment(uuid.uuid4().hex, task_id, author or self.author, body,
                          time.time() if at is None else at, timecode, parent_id, frame=frame, out_frame=out_frame,
                          drawing=shapes)
        self._write("comments", [{"scope": self._writes_as, **comment.row()}])
        return comment

    @staticmethod
    def _comment(row: Any) -> Comment:
        # A timecode an older release let through (infinity, 1e300) is read as none: the comment shows,
        # unpinned, rather than break its card and every report of its version.
        timecode = row.timecode if row.timecode is None or is_timecode(row.timecode) else None
        frame = row.frame if is_frame(row.frame) else None
        out_frame = row.out_frame if frame is not None and is_frame(row.out_frame) and row.out_frame >= frame else None
        shapes, _ = parse_drawing(row.drawing)  # one that no longer parses is left out, the comment kept
        return Comment(row.id, row.task_id, row.author, row.body, row.created_at, timecode, row.parent_id,
                       row.resolved_at, row.resolved_by, frame, out_frame, shapes)

    def comments(self, task_ids: Iterable[str]) -> dict[str, list[Comment]]:
        """Each task's comments, oldest first (replies among them: `thread` orders them)."""
        ids = list(dict.fromkeys(task_ids))
        if not ids:
            return {}
        table = self._table("comments")
        out: dict[str, list[Comment]] = {}
        for row in self._read(select(table).where(self._visible(table), table.c.task_id.in_(ids))
                              .order_by(table.c.created_at)):
            out.setdefault(row.task_id, []).append(self._comment(row))
        return out

    def set_resolved(self, comment_id: str, resolved: bool, at: float | None = None) -> Comment:
        table = self._table("comments")
        rows = self._read(select(table).where(self._visible(table), table.c.id == comment_id))
        if not rows:
            raise KeyError(comment_id)
        row = rows[0]
        comment = replace(self._comment(row), resolved_at=(time.time() if at is None else at) if resolved else None,
                          resolved_by=self.author if resolved else None)
        self._write("comments", [{"scope": row.scope, **comment.row()}])
        return comment


def check_frames(frame: int | None, out_frame: int | None) -> None:
    """A comment's frame and a range's last frame: whole frames from 0, the range not backwards."""
    if frame is not None and not is_frame(frame):
        raise ValueError(f"frame: a frame number from 0 to {MAX_FRAME}, not {frame!r}")
    if out_frame is not None:
        if frame is None:
            raise ValueError("out_frame: a range needs its first frame (frame)")
        if not is_frame(out_frame) or out_frame < frame:
            raise ValueError(f"out_frame: the range's last frame, from frame ({frame}) to {MAX_FRAME}, "
                             f"not {out_frame!r}")


def thread(comments: list[Comment]) -> list[tuple[Comment, int]]:
    """Comments in reading order with their depth: each top-level comment (oldest first) followed by
    its replies (and theirs). A reply whose parent is gone shows at the top level."""
    ids = {c.id for c in comments}
    children: dict[str | None, list[Comment]] = {}
    for c in comments:
        children.setdefault(c.parent_id if c.parent_id in ids else None, []).append(c)
    out: list[tuple[Comment, int]] = []

    def walk(parent: str | None, depth: int) -> None:
        for c in children.get(parent, []):
            out.append((c, depth))
            walk(c.id, depth + 1)

    walk(None, 0)
    return out
