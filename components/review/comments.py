"""A version's comment thread on its Review card: each comment with its author, time and timecode
(a button that seeks the card's player there), replies under what they answer, resolve / reopen;
then a `Comment` text area and a `Post` button, which pins the comment to the player's position when
the person pressed "Comment at …" under the player first."""

from __future__ import annotations

from collections.abc import Callable
from datetime import tzinfo

import streamlit as st

from components.common.comments import said, timecode_button
from components.common.timecode_player import format_timecode
from components.review.state_keys import (
    COMMENT_KEY,
    COMMENT_PROBLEM_KEY,
    NO_REPLY_KEY,
    PINNED_KEY,
    POST_KEY,
    REPLY_KEY,
    REPLYING_KEY,
    RESOLVE_KEY,
    SEEK_KEY,
    TIMECODE_KEY,
    UNPIN_KEY,
)
from dailies.journal import Comment, Journal, thread


def _post(journal: Journal, task_id: str, on_change: Callable[[], None]) -> None:
    body = st.session_state.get(COMMENT_KEY.format(task_id), "")
    if not body.strip():
        st.session_state[COMMENT_PROBLEM_KEY.format(task_id)] = "Write something to post."
        return
    try:
        journal.add_comment(task_id, body, timecode=st.session_state.pop(PINNED_KEY.format(task_id), None),
                            parent_id=st.session_state.pop(REPLYING_KEY.format(task_id), None))
    except ValueError as exc:
        st.session_state[COMMENT_PROBLEM_KEY.format(task_id)] = str(exc).capitalize() + "."
        return
    st.session_state[COMMENT_KEY.format(task_id)] = ""
    on_change()


def _resolve(journal: Journal, comment: Comment, on_change: Callable[[], None]) -> None:
    journal.set_resolved(comment.id, not comment.resolved)
    on_change()


def _seek(task_id: str, seconds: float) -> None:
    st.session_state[SEEK_KEY.format(task_id)] = seconds


def _reply(task_id: str, comment_id: str | None) -> None:
    st.session_state[REPLYING_KEY.format(task_id)] = comment_id


def _unpin(task_id: str) -> None:
    st.session_state.pop(PINNED_KEY.format(task_id), None)


def render(journal: Journal, task_id: str, comments: list[Comment], tz: tzinfo,
           on_change: Callable[[], None]) -> None:
    """The thread and the form; `on_change` runs after anything is written (the card reloads its data)."""
    by_id = {c.id: c for c in comments}
    for comment, depth in thread(comments):
        said(comment, depth, tz)
        # A row of small buttons under the text: the timecode (plays from there), reply, resolve.
        with st.container(horizontal=True, gap="small"):
            timecode_button(comment, TIMECODE_KEY.format(comment.id), _seek, (task_id, comment.timecode))
            st.button("Reply", key=REPLY_KEY.format(comment.id), type="tertiary", width="content",
                      on_click=_reply, args=(task_id, comment.id))
            st.button("Reopen" if comment.resolved else "Resolve", key=RESOLVE_KEY.format(comment.id),
                      type="tertiary", width="content", on_click=_resolve, args=(journal, comment, on_change))
    replying = by_id.get(st.session_state.get(REPLYING_KEY.format(task_id)) or "")
    pinned = st.session_state.get(PINNED_KEY.format(task_id))
    notes = []
    if replying is not None:
        notes.append(f"replying to {replying.author}")
    if pinned is not None:
        notes.append(f"at {format_timecode(pinned)}")
    st.text_area("Comment", key=COMMENT_KEY.format(task_id), height=68,
                 placeholder="A note for the team" + (f" ({', '.join(notes)})" if notes else "") + "…")
    problem = st.session_state.pop(COMMENT_PROBLEM_KEY.format(task_id), None)
    if problem:
        st.caption(f":red[{problem}]")
    with st.container(horizontal=True, gap="small"):
        st.button("Post", key=POST_KEY.format(task_id), on_click=_post, args=(journal, task_id, on_change),
                  width="content")
        if pinned is not None:
            st.button(f"✖ not at {format_timecode(pinned)}", key=UNPIN_KEY.format(task_id), type="tertiary",
                      on_click=_unpin, args=(task_id,), width="content")
        if replying is not None:
            st.button("✖ not a reply", key=NO_REPLY_KEY.format(task_id), type="tertiary",
                      on_click=_reply, args=(task_id, None), width="content")
