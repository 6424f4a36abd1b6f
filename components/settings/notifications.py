"""Settings, Notifications: where the project's notifications go and which reach the person, set on a
Dailies service (`/dailies/v1/notifications/targets`). A person's own target takes only what concerns
them (a mention, a reply, their shot, their task, their budget); the project's takes every event of
the kinds it lists. A service without notifications (the real Ark) says so and offers nothing."""

from __future__ import annotations

import streamlit as st

from components.common import actions, dailies_only
from components.settings.state_keys import (
    NOTIFY_ADD_KEY,
    NOTIFY_ADDRESS_KEY,
    NOTIFY_EVENTS_KEY,
    NOTIFY_FOR_KEY,
    NOTIFY_FORM_KEY,
    NOTIFY_KIND_KEY,
    NOTIFY_OUTCOME_KEY,
    NOTIFY_REMOVE_KEY,
)
from dailies.client import Client, DailiesError
from dailies.spec.models import NotificationTarget
from dailies.spec.notifications import EVENT_TITLES

KIND_TITLES = {"email": "E-mail", "slack": "Slack", "mattermost": "Mattermost", "webhook": "Webhook (signed)"}
ADDRESS_HINTS = {"email": "name@studio.example", "slack": "https://hooks.slack.com/services/…",
                 "mattermost": "https://mattermost.studio.example/hooks/…", "webhook": "https://…"}
PERSONAL_FIRST = ["mention", "reply"]
ME, PROJECT = "me", "project"


def render(client: Client | None, person: str) -> None:
    st.subheader("Notifications")
    if client is None:
        st.caption("Connect to a service to choose where notifications go.")
        return
    offered = dailies_only.ask(client.notification_targets,
                               elsewhere="This service sends no notifications (it is not a Dailies service).",
                               failing="The service does not list its notification targets right now")
    if isinstance(offered, dailies_only.NoAnswer):
        return
    _outcome()
    mine = [t for t in offered.targets if t.owner == person]
    project = [t for t in offered.targets if not t.owner]
    st.caption(f"What reaches **{person}**, and where the project's news goes. Comments and statuses wait "
               "a little, so a burst of them is one message.")
    for title, targets in ((f"Yours ({person})", mine), ("The project's", project)):
        if targets:
            st.markdown(f"**{title}**")
            for target in targets:
                _row(client, target)
    _form(client, person, offered.kinds or list(KIND_TITLES), offered.email)


def _row(client: Client, target: NotificationTarget) -> None:
    text, remove = st.columns([6, 1], vertical_alignment="center")
    events = ", ".join(EVENT_TITLES.get(e, e).lower() for e in target.events)
    text.markdown(f"{KIND_TITLES.get(target.kind, target.kind)} · `{target.address}`  \n{events}")
    actions.button("Remove", key=NOTIFY_REMOVE_KEY.format(target.id), icon=":material/delete:",
                   on_click=_remove, args=(client, target.id), where=remove)


def _form(client: Client, person: str, kinds: list[str], email: bool) -> None:
    choices = [k for k in kinds if k in KIND_TITLES and (email or k != "email")]
    with st.form(NOTIFY_FORM_KEY, clear_on_submit=False, border=True):
        st.markdown("**Add where notifications go**")
        st.radio("For", [ME, PROJECT], key=NOTIFY_FOR_KEY, horizontal=True,
                 format_func=lambda v: f"Me ({person}): what concerns me" if v == ME else "The project: everything")
        st.selectbox("Send by", choices, key=NOTIFY_KIND_KEY, format_func=lambda k: KIND_TITLES[k],
                     help=None if email else "E-mail is offered once the service's operator sets DAILIES_SMTP_URL.")
        st.text_input("Address", key=NOTIFY_ADDRESS_KEY, placeholder="an e-mail address, or the incoming webhook's URL")
        st.multiselect("About", list(EVENT_TITLES), key=NOTIFY_EVENTS_KEY, format_func=EVENT_TITLES.__getitem__,
                       default=PERSONAL_FIRST, help="For yourself: mentions of you, replies to your comments, "
                       "and what happens to the shots and tasks you made. For the project: every comment, status, "
                       "task and budget.")
        actions.form_submit_button("Add", key=NOTIFY_ADD_KEY, on_click=_add, args=(client, person))


def _add(client: Client, person: str) -> None:
    state = st.session_state
    owner = person if state.get(NOTIFY_FOR_KEY, ME) == ME else None
    try:
        target = client.add_notification_target(state.get(NOTIFY_KIND_KEY) or "", (state.get(NOTIFY_ADDRESS_KEY) or "")
                                                .strip(), state.get(NOTIFY_EVENTS_KEY) or [], owner=owner)
    except DailiesError as exc:
        state[NOTIFY_OUTCOME_KEY] = ("error", getattr(exc, "message", str(exc)))
        return
    state[NOTIFY_ADDRESS_KEY] = ""
    state[NOTIFY_OUTCOME_KEY] = ("success", f"{KIND_TITLES.get(target.kind, target.kind)} to {target.address} added.")


def _remove(client: Client, target_id: str) -> None:
    try:
        client.remove_notification_target(target_id)
    except DailiesError as exc:
        st.session_state[NOTIFY_OUTCOME_KEY] = ("error", getattr(exc, "message", str(exc)))
        return
    st.session_state[NOTIFY_OUTCOME_KEY] = ("success", "Removed.")


def _outcome() -> None:
    outcome = st.session_state.pop(NOTIFY_OUTCOME_KEY, None)
    if outcome is not None:
        (st.success if outcome[0] == "success" else st.error)(outcome[1])
