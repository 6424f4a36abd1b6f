"""A version's comment thread on its Review card: each comment with its author, time and timecode
(a button that seeks the card's player there), replies under what they answer, resolve / reopen.
Writing one sits behind a single "💬 Comment" control (`form`), a popover that the player's
"Comment at …" and a comment's Reply open with the box in focus, pinned to that position or that
comment."""

from __future__ import annotations

from collections.abc import Callable
from datetime import tzinfo

import streamlit as st

from components.common import actions, notices
from components.common.comments import said, seek_request, timecode_button
from components.common.mention_box import mention_completion, people_of
from components.common.timecode_player import format_timecode
from components.review.state_keys import (
    COMMENT_KEY,
    COMMENT_OPEN_KEY,
    COMMENT_PROBLEM_KEY,
    NO_REPLY_KEY,
    PINNED_DRAWING_KEY,
    PINNED_FRAME_KEY,
    PINNED_KEY,
    PINNED_OUT_KEY,
    POST_KEY,
    REPLY_KEY,
    REPLYING_KEY,
    RESOLVE_KEY,
    SEEK_KEY,
    TIMECODE_KEY,
    UNPIN_KEY,
)
from dailies.journal import Comment, Journal, thread

FORM_LABEL = "💬 Comment"
# Run each time the popover's content mounts (it opens): the box takes the keys at once. Streamlit
# names an element's container `st-key-<key>` with the key's dots as dashes.
_FOCUS = """<script>{{
  let tries = 0;
  const focus = () => {{
    const box = document.querySelector('.st-key-{key} textarea');
    if (box) box.focus(); else if (tries++ < 60) requestAnimationFrame(focus);
  }};
  focus();
}}</script>"""


def open_form(task_id: str) -> None:
    """Open the version's comment popover (before it is drawn in this run, or from a callback)."""
    st.session_state[COMMENT_OPEN_KEY.format(task_id)] = True


def _post(journal: Journal, task_id: str, on_change: Callable[[], None]) -> None:
    body = st.session_state.get(COMMENT_KEY.format(task_id), "")
    drawing = st.session_state.get(PINNED_DRAWING_KEY.format(task_id))
    if not body.strip() and not drawing:
        st.session_state[COMMENT_PROBLEM_KEY.format(task_id)] = "Write something to post."
        return
    try:
        comment = journal.add_comment(task_id, body, timecode=st.session_state.get(PINNED_KEY.format(task_id)),
                                      parent_id=st.session_state.pop(REPLYING_KEY.format(task_id), None),
                                      frame=st.session_state.get(PINNED_FRAME_KEY.format(task_id)), drawing=drawing,
                                      out_frame=st.session_state.get(PINNED_OUT_KEY.format(task_id)))
        _unpin(task_id)
    except ValueError as exc:
        st.session_state[COMMENT_PROBLEM_KEY.format(task_id)] = str(exc).capitalize() + "."
        return
    notices.tell(journal.comment_notice(comment))
    # The popover stays open: a box emptied as it closed kept its text in the browser, which sent it back.
    st.session_state[COMMENT_KEY.format(task_id)] = ""
    on_change()


def _resolve(journal: Journal, comment: Comment, on_change: Callable[[], None]) -> None:
    journal.set_resolved(comment.id, not comment.resolved)
    on_change()


def _seek(task_id: str, comment: Comment) -> None:
    st.session_state[SEEK_KEY.format(task_id)] = seek_request(comment)


def _reply(task_id: str, comment_id: str | None) -> None:
    st.session_state[REPLYING_KEY.format(task_id)] = comment_id
    if comment_id is not None:
        open_form(task_id)


def _unpin(task_id: str) -> None:
    for key in (PINNED_KEY, PINNED_FRAME_KEY, PINNED_DRAWING_KEY, PINNED_OUT_KEY):
        st.session_state.pop(key.format(task_id), None)


def render(journal: Journal, task_id: str, comments: list[Comment], tz: tzinfo,
           on_change: Callable[[], None]) -> None:
    """The thread, one row a comment: its text, then its timecode, Reply and Resolve beside it (they
    wrap under a long one). `on_change` runs after anything is written (the card reloads its data)."""
    if not comments:
        return
    with st.container(gap="xxsmall"):
        for comment, depth in thread(comments):
            with st.container(horizontal=True, gap="xsmall", vertical_alignment="center"):
                with st.container(width="stretch"):  # the text takes the row; its buttons line up on the right
                    said(comment, depth, tz)
                with st.container(horizontal=True, gap="xsmall", vertical_alignment="center", width="content"):
                    timecode_button(comment, TIMECODE_KEY.format(comment.id), _seek, (task_id, comment))
                    actions.button("Reply", key=REPLY_KEY.format(comment.id), type="tertiary", width="content",
                                   on_click=_reply, args=(task_id, comment.id))
                    actions.button("Reopen" if comment.resolved else "Resolve", key=RESOLVE_KEY.format(comment.id),
                                   type="tertiary", width="content", on_click=_resolve,
                                   args=(journal, comment, on_change))


def form(journal: Journal, task_id: str, comments: list[Comment], on_change: Callable[[], None]) -> None:
    """The "💬 Comment" popover: the box, Post, and what the comment is pinned to (a position, a comment),
    each with its ✖. Its content is drawn closed too, so a test or a script finds the box by its key."""
    by_id = {c.id: c for c in comments}
    replying = by_id.get(st.session_state.get(REPLYING_KEY.format(task_id)) or "")
    pinned = st.session_state.get(PINNED_KEY.format(task_id))
    notes = []
    if replying is not None:
        notes.append(f"replying to {replying.author}")
    if pinned is not None:
        notes.append(f"at {format_timecode(pinned)}")
    if st.session_state.get(PINNED_DRAWING_KEY.format(task_id)):
        notes.append("with your drawing")
    # Tracked ("rerun"), so "Comment at …" and Reply can open it; it stays open after Post, for another.
    with st.popover(FORM_LABEL, key=COMMENT_OPEN_KEY.format(task_id), on_change="rerun"):
        st.text_area("Comment", key=COMMENT_KEY.format(task_id), height=96, width=360,
                     placeholder="A note for the team" + (f" ({', '.join(notes)})" if notes else "") + "…")
        problem = st.session_state.pop(COMMENT_PROBLEM_KEY.format(task_id), None)
        if problem:
            st.caption(f":red[{problem}]")
        with st.container(horizontal=True, gap="small"):
            actions.button("Post", key=POST_KEY.format(task_id), on_click=_post, args=(journal, task_id, on_change),
                           type="primary", width="content")
            if pinned is not None:
                actions.button(f"✖ not at {format_timecode(pinned)}", key=UNPIN_KEY.format(task_id), type="tertiary",
                               on_click=_unpin, args=(task_id,), width="content")
            if replying is not None:
                actions.button("✖ not a reply", key=NO_REPLY_KEY.format(task_id), type="tertiary",
                               on_click=_reply, args=(task_id, None), width="content")
        st.html(_FOCUS.format(key=COMMENT_KEY.format(task_id).replace(".", "-")), unsafe_allow_javascript=True)
        mention_completion(COMMENT_KEY.format(task_id), people_of(journal))
