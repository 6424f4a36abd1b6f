"""The Live page: the lobby (start a session on finished versions, join an open one), a session presented
(its versions, hand-over, end, the link to invite) or followed. The players present and follow in the
browser (components/common/live_sync.py); this page only says who does what, and draws again when the
player says the presenter changed."""

from __future__ import annotations

from typing import Any

import streamlit as st

from components.common import actions, dailies_only, live_start, members, pages
from components.common.identity import is_unnamed
from components.common.shot_labels import labels_among_many
from components.common.stored_requests import stored_requests
from components.common.timecode_player import timecode_player
from components.live.following import NotFollowable, session_by_link
from components.live.state_keys import (
    CONTROL_KEY,
    END_KEY,
    HANDOVER_BUTTON_KEY,
    HANDOVER_KEY,
    PICK_KEY,
    PLAYER_KEY,
    PROBLEM_KEY,
    START_KEY,
    TITLE_KEY,
    VERSION_KEY,
)
from dailies.client import Client, DailiesError, NotFoundError, UnsupportedEndpointError
from dailies.journal import Journal
from dailies.spec.live import MAX_VERSIONS
from dailies.spec.models import LiveSession, LiveVersion, TaskRecord

RECENT = 60
PLAYER_HEIGHT = "62vh"


def lobby(client: Client, cache_id: str, journal: Journal, person: str, recent: list[TaskRecord]) -> None:
    """Start a session on some of the recent finished versions; the project's open sessions."""
    listed = dailies_only.ask(client.live_sessions,
                              elsewhere="This service has no live sessions (it is not a Dailies service).",
                              failing="The service does not list its live sessions right now")
    if listed is dailies_only.NoAnswer.NOT_DAILIES:
        return
    open_sessions = [] if isinstance(listed, dailies_only.NoAnswer) else listed  # one may still start one
    if open_sessions:
        st.subheader("Open now")
        for session in open_sessions:
            pages.link(pages.LIVE, f"{session.title} · presented by {session.presenter} · "
                       f"{len(session.versions)} versions", icon=":material/cast:", query={"session": session.id})
    st.subheader("Present")
    if not recent:
        st.caption("No finished version to present yet.")
        return
    # The prompts the journal kept, else the service's stored requests (a task made with the CLI, or the SDK).
    prompts = {task_id: sub.prompt for task_id, sub in journal.submissions(r.id for r in recent).items()}
    asked = stored_requests(client, cache_id, [r.id for r in recent if r.id not in prompts])
    prompts |= {task_id: stored.prompt for task_id, stored in asked.items() if stored.prompt}
    labels = dict(zip([r.id for r in recent],
                      labels_among_many([prompts.get(r.id, r.id) for r in recent], [r.seed for r in recent]),
                      strict=True))
    st.multiselect("Versions to review", list(labels), key=PICK_KEY, format_func=labels.__getitem__,
                   max_selections=MAX_VERSIONS, placeholder="Choose the versions, in the order to show them")
    st.text_input("Title", key=TITLE_KEY, placeholder="Dailies", max_chars=200)
    actions.button("Start presenting", key=START_KEY, icon=":material/cast:", type="primary",
                   disabled=not st.session_state.get(PICK_KEY), on_click=_start, args=(client, person, labels))
    problem = st.session_state.pop(PROBLEM_KEY, None)
    if problem:
        st.error(problem)


def _start(client: Client, person: str, labels: dict[str, str]) -> None:
    picked = st.session_state.get(PICK_KEY) or []
    session = live_start.start(client, [(t, labels.get(t, t)) for t in picked], st.session_state.get(TITLE_KEY) or "",
                               person)
    if isinstance(session, str):
        st.session_state[PROBLEM_KEY] = session
        return
    st.session_state[CONTROL_KEY.format(session.id)] = session.control_token
    st.query_params["session"] = session.id


def member_session(client: Client, session_id: str, person: str, people: list[str]) -> None:
    """A session opened by a member: presented when the service says they present, else followed."""
    try:
        session = client.live_session(session_id)
    except UnsupportedEndpointError:
        st.info("This service has no live sessions (it is not a Dailies service).")
        return
    except NotFoundError:
        st.error("No such live session in your project.")
        return
    if session.ended:
        st.info(f"“{session.title}” has ended.")
        return
    control = _control_token(client, session, person) if session.presenter == person else None
    _session(session, session.follow_token or "", control, person)
    if control is not None:
        _presenter_tools(client, session, person, people)
    _invite(session)


def guest_session(session_id: str, token: str) -> None:
    """A session followed from its link, without a key."""
    try:
        session = session_by_link(session_id, token)
    except NotFollowable as exc:
        st.error(f"This live session cannot be followed: {exc}.")
        return
    if session.ended:
        st.info(f"“{session.title}” has ended.")
        return
    _session(session, token, None, "")


def _control_token(client: Client, session: LiveSession, person: str) -> str | None:
    """The control token this browser session holds, else a new one (a reload, a page restarted)."""
    key = CONTROL_KEY.format(session.id)
    if not st.session_state.get(key):
        try:
            st.session_state[key] = client.live_control(session.id, presenter=person)
        except DailiesError as exc:
            st.warning(f"You present this session, but the service did not hand you its controls: {exc}")
            return None
    return st.session_state[key]


def _session(session: LiveSession, follow_token: str, control: str | None, person: str) -> None:
    presenting = control is not None
    st.subheader(session.title)
    st.caption("You present: everyone here follows your player (play, pause, frames, speed, drawings, pointer)."
               if presenting else f"Presented by **{session.presenter}**: your player follows theirs.")
    versions = {v.task_id: v for v in session.versions}
    shown = (session.state or {}).get("version") or session.versions[0].task_id
    if presenting:
        key = VERSION_KEY.format(session.id)
        if st.session_state.get(key) not in versions:
            st.session_state[key] = shown if shown in versions else session.versions[0].task_id
        shown = st.radio("Version shown", list(versions), key=key, horizontal=True,
                         format_func=lambda t: _label(versions[t]))
    else:
        st.caption(" · ".join(_label(v) for v in session.versions))
    version = versions[shown]
    if not version.video_url:
        st.warning(f"{_label(version)} has no video to show ({version.status}).")
    live: dict[str, Any] = {
        "role": "present" if presenting else "follow", "version": shown, "presenter": session.presenter,
        "state_url": session.state_url, "follow_url": session.follow_url, "follow_token": follow_token,
        "control_token": control, "versions": [v.model_dump() for v in session.versions],
    }
    state = timecode_player(version.video_url or "", key=PLAYER_KEY.format(session.id), fps=version.fps,
                            max_height=PLAYER_HEIGHT, live=live)
    if state.live_changed:  # handed over (to this person, or away): ask again who presents
        st.session_state.pop(CONTROL_KEY.format(session.id), None)
        st.rerun()


def _label(version: LiveVersion) -> str:
    return version.label or version.task_id


def _presenter_tools(client: Client, session: LiveSession, person: str, people: list[str]) -> None:
    others = [p for p in people if p != person and not is_unnamed(p)]
    hand, end = st.columns([3, 1], vertical_alignment="bottom")
    with hand:
        st.selectbox("Hand over to", others, key=HANDOVER_KEY.format(session.id), index=None,
                     placeholder="Someone of the project" if others else "Nobody else is named in this project")
    actions.button("Hand over", key=HANDOVER_BUTTON_KEY.format(session.id), icon=":material/swap_horiz:",
                   disabled=not others, on_click=_hand_over, args=(client, session.id, person), where=hand)
    actions.button("End session", key=END_KEY.format(session.id), icon=":material/stop_circle:",
                   on_click=_end, args=(client, session.id), where=end)
    problem = st.session_state.pop(PROBLEM_KEY, None)
    if problem:
        st.error(problem)


def _hand_over(client: Client, session_id: str, person: str) -> None:
    to = st.session_state.get(HANDOVER_KEY.format(session_id))
    if not to:
        st.session_state[PROBLEM_KEY] = "Choose who presents next."
        return
    try:
        client.hand_over_live(session_id, to, presenter=person)
    except DailiesError as exc:
        st.session_state[PROBLEM_KEY] = f"Not handed over: {getattr(exc, 'message', exc)}"
        return
    st.session_state.pop(CONTROL_KEY.format(session_id), None)


def _end(client: Client, session_id: str) -> None:
    try:
        client.end_live(session_id)
    except DailiesError as exc:
        st.session_state[PROBLEM_KEY] = f"Not ended: {getattr(exc, 'message', exc)}"


def _invite(session: LiveSession) -> None:
    root = pages.dashboard_root()
    if not root or not session.follow_token:
        return
    link = f"{root}{pages.LIVE.address({'session': session.id, pages.FOLLOW_PARAM: session.follow_token})}"
    st.caption("Invite: anyone with this link follows, guests too (no key needed).")
    st.code(link, language=None)


def people_of(client: Client | None, cache_id: str, journal: Journal) -> list[str]:
    return sorted(set(members.members(client, cache_id)) | set(journal.people()), key=str.casefold)

