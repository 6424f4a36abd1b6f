"""The review loop from the keyboard, on one shot (Review's "Open alone" view): approve, ask for
changes, reject, comment here, the next and the previous shot, each a button with a shortcut
(Streamlit's `shortcut=`; it ignores keys typed into a box), and a popover listing them with the
player's own keys. Streamlit keeps C and R for itself, so the keys are A, E, X, M, N and P.

The next and previous shots are the grid's neighbours (newest first, the listing the grid reads,
cached), asked only when pressed: a deep link to one shot does not list every result.
"""

from __future__ import annotations

import streamlit as st

from components.common import actions, notices
from components.review.results import gather
from components.review.state_keys import KEYS_KEY, PINNED_KEY, POSITION_KEY
from dailies.journal import Journal
from dailies.journal.statuses import APPROVED, CHANGES_REQUESTED, REJECTED

# (status, label, key)
VERDICTS = ((APPROVED, "✅ Approve", "A"), (CHANGES_REQUESTED, "✏️ Changes", "E"), (REJECTED, "⛔ Reject", "X"))
COMMENT_HERE = "M"
NEXT, PREVIOUS = "N", "P"
PLAYER_KEYS = ("← → a frame back or on · Space play / pause · J back a second · K pause · "
               "L play, again faster")


def _verdict(journal: Journal, task_id: str, status: str) -> None:
    change = journal.set_status(task_id, status)
    if change is not None:
        notices.tell(journal.status_notice(change))


def _comment_here(task_id: str) -> None:
    """Open the comment box pinned where the player was last paused or sought to (its time)."""
    from components.review import comments as review_comments

    position = st.session_state.get(POSITION_KEY.format(task_id))
    if position is not None:
        st.session_state[PINNED_KEY.format(task_id)] = position
    review_comments.open_form(task_id)


def neighbour(ids: list[str], task_id: str, step: int) -> str | None:
    """The id `step` places from `task_id` in `ids` (None past either end, or when it is not there)."""
    if task_id not in ids:
        return None
    index = ids.index(task_id) + step
    return ids[index] if 0 <= index < len(ids) else None


def _go(journal: Journal, task_id: str, step: int, online: bool) -> None:
    results, _ = gather(journal, online=online)
    target = neighbour([r.task_id for r in results], task_id, step)
    if target is None:
        st.toast("No next shot." if step > 0 else "No previous shot.")
        return
    st.query_params["task"] = target


def render_review_keys(journal: Journal, task_id: str, online: bool) -> None:
    """The buttons and the shortcuts' list, on one row."""
    with st.container(horizontal=True, gap="small", vertical_alignment="center", key=KEYS_KEY):
        for status, label, key in VERDICTS:
            actions.button(label, key=f"{KEYS_KEY}.{status}", shortcut=key, on_click=_verdict,
                           args=(journal, task_id, status), width="content")
        actions.button("💬 Comment here", key=f"{KEYS_KEY}.comment", shortcut=COMMENT_HERE, on_click=_comment_here,
                       args=(task_id,), width="content")
        actions.button("← Previous shot", key=f"{KEYS_KEY}.previous", shortcut=PREVIOUS, on_click=_go,
                       args=(journal, task_id, -1, online), type="tertiary", width="content")
        actions.button("Next shot →", key=f"{KEYS_KEY}.next", shortcut=NEXT, on_click=_go,
                       args=(journal, task_id, 1, online), type="tertiary", width="content")
        with st.popover("⌨️", help="Keyboard shortcuts"):
            st.markdown("\n".join([*(f"- **{key}** {label.split(' ', 1)[1]}" for _, label, key in VERDICTS),
                                   f"- **{COMMENT_HERE}** comment here (where the player stopped)",
                                   f"- **{NEXT}** / **{PREVIOUS}** next / previous shot",
                                   f"- In the player (click it first): {PLAYER_KEYS}"]))
