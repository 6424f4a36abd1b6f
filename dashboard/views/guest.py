"""Guest review: what a share link (`/guest?share=<token>`) shows, with no key (issue 25).

The router (dashboard/app.py) runs this page alone whenever the address has `share`: a guest never
reaches another page. Every run looks the token up again (its SHA-256), so a revoked, expired or
locked share stops showing at once; a passphrase is asked before anything else. The page then shows
the share's versions only (kept video, last frame if kept, prompt unless hidden, status) and, if
the share allows it, a comment form and a status select, written into the project's journal signed
"<name> (guest)". The player is the Review card's: a guest's comment is pinned to the frame they
stopped on ("Comment at …"), and a share that takes comments shows each version's thread (the
team's and guests', with their authors; a timecode plays from there), read from the journal on each
run, so a guest's own comments are still there after a reload. Nothing on the page depends on any
other query parameter.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import streamlit as st

from components.common import actions, connection, notices, shares
from components.common.comments import player_seek, said, seek_request, timecode_button, timeline_marks
from components.common.markdown_text import markdown_text
from components.common.mention_box import mention_completion
from components.common.timecode_player import format_timecode, timecode_player
from components.guest.state_keys import (
    COMMENT_KEY,
    ERROR_KEY,
    NAME_KEY,
    PASSPHRASE_FORM_KEY,
    PASSPHRASE_KEY,
    PINNED_DRAWING_KEY,
    PINNED_FRAME_KEY,
    PINNED_KEY,
    PINNED_OUT_KEY,
    PLAYER_KEY,
    POST_KEY,
    PREFIX,
    SEEK_KEY,
    SHARE_KEY,
    STATUS_KEY,
    TIMECODE_KEY,
    UNLOCKED_KEY,
    UNPIN_KEY,
)
from dailies.journal import STATUS_LABELS, STATUSES, Comment, ShareRefused, thread
from dailies.journal.shares import GUEST_AUTHOR, MAX_ATTEMPTS, ShareState, is_guest_author
from dailies.spec.results import LAST_FRAME_NAME, VIDEO_NAME
from dailies.timecodes import record_frame_rate

REFUSALS = {
    ShareState.UNKNOWN: "This link does not open anything. Check that you copied it whole, or ask for a new one.",
    ShareState.REVOKED: "This share has been revoked by the project. Ask whoever sent it for a new link.",
    ShareState.EXPIRED: "This share has expired. Ask whoever sent it for a new link.",
}


def _when(at: float) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M UTC")


def _ask_passphrase(journal, share, token: str, now: float) -> None:
    unlocked = st.session_state.setdefault(UNLOCKED_KEY, {})
    if unlocked.get(share.id):
        return
    with st.form(PASSPHRASE_FORM_KEY):
        typed = st.text_input("Passphrase", type="password", key=PASSPHRASE_KEY)
        sent = st.form_submit_button("Open")
    if sent:
        try:
            if journal.check_passphrase(share, typed, now):
                unlocked[share.id] = True
                st.rerun()
            left = MAX_ATTEMPTS - journal.open_share(token, now).failed_attempts  # ShareRefused once locked
            st.error(f"Wrong passphrase. {left} attempt(s) left before the share locks for a while.")
        except ShareRefused as refused:
            _refuse(refused)
    st.stop()


def _refuse(refused: ShareRefused) -> None:
    if refused.reason == ShareState.LOCKED:
        st.error("Too many wrong passphrases: this share is locked"
                 + (f" until {_when(refused.until)}." if refused.until else " for a while."))
    else:
        st.error(REFUSALS.get(refused.reason, REFUSALS[ShareState.UNKNOWN]))
    st.stop()


def _guest_now(task_id: str):
    """The share as it is at the moment of a callback (it may have been revoked, have expired or been
    locked since the page was drawn): its guest view, or None with the reason noted for the page."""
    journal = connection.shared_journal()
    try:
        share = journal.open_share(st.query_params.get("share", ""), time.time())
    except ShareRefused:
        return None  # the page's run, which follows, says why
    if share.has_passphrase and not st.session_state.get(UNLOCKED_KEY, {}).get(share.id):
        return None
    return journal.guest_view(share, st.session_state.get(NAME_KEY, ""))


def _post(task_id: str) -> None:
    guest = _guest_now(task_id)
    if guest is None:
        return
    body = st.session_state.get(COMMENT_KEY.format(task_id), "")
    try:
        comment = guest.add_comment(task_id, body, timecode=st.session_state.get(PINNED_KEY.format(task_id)),
                                    frame=st.session_state.get(PINNED_FRAME_KEY.format(task_id)),
                                    drawing=st.session_state.get(PINNED_DRAWING_KEY.format(task_id)),
                                    out_frame=st.session_state.get(PINNED_OUT_KEY.format(task_id)))
    except (ValueError, PermissionError) as exc:
        st.session_state[ERROR_KEY.format(task_id)] = str(exc)
        return
    notices.tell_as_guest(guest.share, guest.comment_notice(comment))
    _unpin(task_id)
    st.session_state[COMMENT_KEY.format(task_id)] = ""


def _seek(task_id: str, comment: Comment) -> None:
    st.session_state[SEEK_KEY.format(task_id)] = seek_request(comment)


def _unpin(task_id: str) -> None:
    for key in (PINNED_KEY, PINNED_FRAME_KEY, PINNED_DRAWING_KEY, PINNED_OUT_KEY):
        st.session_state.pop(key.format(task_id), None)


def _set_status(task_id: str) -> None:
    guest = _guest_now(task_id)
    if guest is None:
        return
    try:
        change = guest.set_status(task_id, st.session_state[STATUS_KEY.format(task_id)])
    except (ValueError, PermissionError) as exc:
        st.session_state[ERROR_KEY.format(task_id)] = str(exc)
        return
    if change is not None:
        notices.tell_as_guest(guest.share, guest.status_notice(change))


def _local_copy(kept) -> Path | None:
    """The kept copy as a file on this machine, or None when it is gone (deleted from the disk or the
    bucket, the bucket out of reach). A bucket's copy is fetched once into a cache on disk and played
    from there: not a presigned URL (the guest never holds a link that outlives the share), and not
    fetched again on every run of the page (a shared reel is hundreds of megabytes)."""
    if kept is None:
        return None
    if kept.path is not None:
        return kept.path if kept.path.is_file() else None
    cached = connection.data_dir() / "dashboard" / "guest-cache" / (
        hashlib.sha256(f"{kept.location}#{kept.size}".encode()).hexdigest() + Path(kept.name).suffix)
    if cached.is_file():
        return cached
    try:
        data = kept.read_bytes()
    except Exception:  # gone from the bucket, or the bucket out of reach (botocore's errors are not OSError)
        return None
    cached.parent.mkdir(parents=True, exist_ok=True)
    _prune(cached.parent)
    partial = cached.with_suffix(f".{uuid.uuid4().hex}.part")
    partial.write_bytes(data)
    partial.replace(cached)  # whole or not there: two sessions may fetch it at once
    return cached


GUEST_CACHE_DAYS = 1


def _prune(folder: Path) -> None:
    """Copies not played for a day go (a guest coming back later fetches them again)."""
    cutoff = time.time() - GUEST_CACHE_DAYS * 86_400
    for old in folder.iterdir():
        try:
            if old.stat().st_mtime < cutoff:
                old.unlink()
        except OSError:  # another session's, removed meanwhile
            pass


def _frame_rate(journal, share, task_id: str) -> float:
    """The shared version's frames per second, as the record saved in its scope says; else 24."""
    record = journal.scoped(share.scope_of(GUEST_AUTHOR)).record(task_id) or {}
    return record_frame_rate(record.get("framespersecond"))


def _version(journal, share, task_id: str, number: int) -> None:
    guest = journal.guest_view(share, st.session_state.get(NAME_KEY, ""))
    kept = guest.kept(task_id)
    with st.container(border=True):
        st.markdown(f"**Version {number}** of {len(share.task_ids)}")
        left, right = st.columns([3, 2], gap="large")
        with left:
            video = _local_copy(kept.get(VIDEO_NAME))
            if video is None:
                st.warning("The copy of this video is no longer kept.")
            elif share.allow_comments:
                # Handed over once, so a later click on the same timecode goes there again.
                seek = player_seek(st.session_state.pop(SEEK_KEY.format(task_id), None))
                fps = _frame_rate(journal, share, task_id)
                state = timecode_player(video, key=PLAYER_KEY.format(task_id), fps=fps,
                                        marks=timeline_marks(guest.comments(task_id), fps), **seek)
                if state.comment_at is not None:
                    st.session_state[PINNED_KEY.format(task_id)] = state.comment_at
                    st.session_state[PINNED_FRAME_KEY.format(task_id)] = state.comment_frame
                    st.session_state[PINNED_DRAWING_KEY.format(task_id)] = state.comment_drawing
                    st.session_state[PINNED_OUT_KEY.format(task_id)] = state.comment_out_frame
            else:  # nothing to pin a comment to: the plain player, without a "Comment at" button
                st.video(video)
            frame = _local_copy(kept.get(LAST_FRAME_NAME))
            if frame is not None:
                with st.expander("Last frame"):
                    st.image(str(frame))
        with right:
            prompt = guest.prompt(task_id)
            if prompt:
                st.markdown("**Prompt**")
                st.text(prompt)
            status = guest.status_of(task_id)
            if share.allow_status:
                key = STATUS_KEY.format(task_id)
                # The journal's status at every draw (a member or another guest may have changed it): the
                # guest's own pick was written by its callback before this run, or refused (then the
                # select goes back to what the journal holds, beside the error).
                if st.session_state.get(key) != status:
                    st.session_state[key] = status
                st.selectbox("Status", STATUSES, format_func=STATUS_LABELS.get, key=key, on_change=_set_status,
                             args=(task_id,), disabled=not st.session_state.get(NAME_KEY, "").strip(),
                             help="Type your name above to set a status.")
            else:
                st.caption(f"Status: {STATUS_LABELS.get(status, status)}")
            error = st.session_state.pop(ERROR_KEY.format(task_id), None)
            if error:
                st.error(error)
            if share.allow_comments:
                _thread(guest, task_id)


def _thread(guest, task_id: str) -> None:
    """The version's comments, everyone's, read-only but for their timecodes; then the guest's form."""
    comments = guest.comments(task_id)
    st.markdown(f"**Comments** ({len(comments)})")
    for comment, depth in thread(comments):
        said(comment, depth, UTC)
        timecode_button(comment, TIMECODE_KEY.format(comment.id), _seek, (task_id, comment))
    named = bool(st.session_state.get(NAME_KEY, "").strip())
    pinned = st.session_state.get(PINNED_KEY.format(task_id))
    at = f" (at {format_timecode(pinned)})" if pinned is not None else ""
    st.text_area("Comment", key=COMMENT_KEY.format(task_id), max_chars=5000, disabled=not named,
                 placeholder=f"Your comment{at}" if named else "Type your name above to comment")
    # @name completes to the people already in this thread (the guest sees them there): never the
    # project's other members, whom a share does not show.
    mention_completion(COMMENT_KEY.format(task_id), sorted({c.author for c in comments
                                                           if not is_guest_author(c.author)}, key=str.casefold))
    with st.container(horizontal=True, gap="small"):
        actions.button("Post", key=POST_KEY.format(task_id), on_click=_post, args=(task_id,), disabled=not named,
                       width="content")
        if pinned is not None:
            actions.button(f"✖ not at {format_timecode(pinned)}", key=UNPIN_KEY.format(task_id), type="tertiary",
                           on_click=_unpin, args=(task_id,), width="content")


# The router gives a share link's address two entries, both this page (components/common/pages.py: at /guest
# and at the root every unknown address falls back to): the sidebar would only list it twice.
_NO_SIDEBAR = ("<style>[data-testid=stSidebar], [data-testid=stSidebarCollapsedControl], "
               "[data-testid=stExpandSidebarButton] { display: none !important; }</style>")


NOT_FOR_GUESTS = ("This dashboard is not set up for guests: it has no sign-in and is not in team mode, so it "
                  "gives its own key to whoever opens it. Ask whoever sent the link for one to a team "
                  "dashboard or to one whose visitors sign in.")


def render(now: float | None = None) -> None:
    st.html(_NO_SIDEBAR)
    st.header("Shared review")
    if not shares.guests_stay_guests():
        # However the link was made (`dailies share create` warns, but makes it): a guest here could
        # drop `?share=` and use every page with the dashboard's key.
        st.error(NOT_FOR_GUESTS)
        st.stop()
    token = st.query_params.get("share", "")
    journal = connection.shared_journal()  # no connection, no key: the share says which scope
    now = time.time() if now is None else now
    try:
        share = journal.open_share(token, now)
    except ShareRefused as refused:
        _refuse(refused)
        return
    # A session holds one share: another token in the address starts it afresh.
    marker = hashlib.sha256(token.encode("utf-8")).hexdigest()
    if st.session_state.get(SHARE_KEY) != marker:
        for name in [k for k in st.session_state if str(k).startswith(PREFIX)]:
            del st.session_state[name]
        st.session_state[SHARE_KEY] = marker
    if share.has_passphrase:
        _ask_passphrase(journal, share, token, now)
    st.caption(f"Shared by {markdown_text(share.created_by)} · until {_when(share.expires_at)} · "
               f"{len(share.task_ids)} version(s)")
    if share.allow_comments or share.allow_status:
        st.text_input("Your name", key=NAME_KEY, max_chars=60,
                      help="Shown with your comments and statuses, marked as a guest.")
    for number, task_id in enumerate(share.task_ids, start=1):
        _version(journal, share, task_id, number)


render()
