"""Share links from Review (issue 25): share some versions (a selection, a batch, a filter's results)
with a guest who has no key, and list and revoke the project's shares.

`render_share_panel(task_ids, journal, client, base_public_url)`: `journal` is the person's view
(`connection.journal()`: the project's scope on a Dailies service), `client` keeps a copy of a
version that has none yet (the link plays kept copies, so it outlives the 24 h result URLs), and
`base_public_url` is the dashboard's public address (`components.common.shares.public_url()`). The link
is shown once, right after creation: only its token's hash is stored.
"""

from __future__ import annotations

import time
from datetime import UTC, datetime

import streamlit as st

from components.common import actions
from components.common.keep import LinkExpired, keep_result
from components.common.markdown_text import markdown_text
from components.common.shares import NO_SHARES_HERE, guests_stay_guests
from components.review.state_keys import LINK_KEY
from dailies.cli.share import share_link
from dailies.client import Client, DailiesError
from dailies.journal import Journal
from dailies.journal.shares import ShareState, ask_notice_grant, prompts_to_share
from dailies.spec.results import VIDEO_NAME

EXPIRIES = {"1 day": 86_400.0, "7 days": 7 * 86_400.0, "30 days": 30 * 86_400.0}


def _when(at: float | None) -> str:
    return datetime.fromtimestamp(at, UTC).strftime("%Y-%m-%d %H:%M UTC") if at else "—"


def _prompts(journal: Journal, client: Client | None, task_ids: list[str]) -> dict[str, str]:
    def stored(task_id: str) -> str | None:
        try:
            return client.task_request(task_id).prompt if client is not None else None
        except DailiesError:
            return None

    return prompts_to_share(journal, task_ids, stored)


def _keep_missing(journal: Journal, client: Client | None, task_ids: list[str]) -> list[str]:
    """Keep a copy of each version that has none; the ids that still have none (with the reason shown)."""
    missing = []
    for task_id in task_ids:
        if VIDEO_NAME in journal.kept(task_id):
            continue
        if client is None:
            missing.append(task_id)
            continue
        try:
            keep_result(client, journal, client.tasks.get(task_id))
        except (DailiesError, LinkExpired, OSError) as exc:
            st.error(f"Could not keep a copy of {task_id}: {exc}")
            missing.append(task_id)
    return missing


def render_share_panel(task_ids: list[str], journal: Journal, client: Client | None, base_public_url: str,
                       key: str = "share") -> None:
    """Create a share of `task_ids` (expiry, passphrase, what the guest may do); the link once; the
    project's shares with who made them, and Revoke."""
    ids = list(dict.fromkeys(task_ids))
    if not guests_stay_guests():
        st.warning(NO_SHARES_HERE)
        _list(journal, key)  # shares made elsewhere (the CLI, before) can still be revoked here
        return
    with st.form(f"{key}.form"):
        st.markdown(f"**Share {len(ids)} version(s) with a guest** (a link that needs no key)")
        cols = st.columns(2)
        with cols[0]:
            expiry = st.selectbox("Expires in", list(EXPIRIES), index=1, key=f"{key}.expires")
            passphrase = st.text_input("Passphrase (optional)", type="password", key=f"{key}.passphrase")
        with cols[1]:
            allow_comments = st.checkbox("Guest may comment", value=True, key=f"{key}.comments")
            allow_status = st.checkbox("Guest may set a status", key=f"{key}.status")
            hide_prompt = st.checkbox("Hide the prompt", key=f"{key}.hide_prompt")
        made = st.form_submit_button("Create share link", disabled=not ids)
    if made:
        missing = _keep_missing(journal, client, ids)
        if missing:
            st.error("No kept copy of " + ", ".join(missing) + ": the share was not made.")
        else:
            said: list[str] = []
            # What the guests comment is told to the project's notifications with this grant.
            asker = ask_notice_grant(client, said) if client is not None and (allow_comments or allow_status) else None
            try:
                share, token = journal.create_share(ids, EXPIRIES[expiry], passphrase=passphrase or None,
                                                    allow_comments=allow_comments, allow_status=allow_status,
                                                    hide_prompt=hide_prompt, prompts=_prompts(journal, client, ids),
                                                    notice_grant=asker)
            except ValueError as exc:
                st.error(f"Could not share: {exc}")
            else:
                st.session_state[f"{key}.{LINK_KEY}"] = (share.id, share_link(base_public_url, token), said)
    created = st.session_state.pop(f"{key}.{LINK_KEY}", None)
    if created is not None:
        st.success(f"Share {created[0]} created. Copy the link now: it is shown only once.")
        st.code(created[1], language=None)
        for note in created[2]:
            st.caption(note)
    _list(journal, key)


def _revoke(journal: Journal, share_id: str) -> None:
    journal.revoke_share(share_id)


def _list(journal: Journal, key: str) -> None:
    shares = journal.shares()
    if not shares:
        st.caption("No shares yet in this project.")
        return
    now = time.time()
    st.markdown(f"**Shares of this project** ({len(shares)})")
    for share in shares:
        state = share.state(now)
        cols = st.columns([5, 1], vertical_alignment="center")
        with cols[0]:
            flags = [f for f, on in (("comments", share.allow_comments), ("status", share.allow_status),
                                     ("prompt hidden", share.hide_prompt), ("passphrase", share.has_passphrase))
                     if on]
            st.markdown(f"`{share.id}` · **{state}** · by {markdown_text(share.created_by)} · "
                        f"{_when(share.created_at)} · until {_when(share.expires_at)} · "
                        f"{len(share.task_ids)} version(s)"
                        + (f" · {', '.join(flags)}" if flags else ""))
        with cols[1]:
            actions.button("Revoke", key=f"{key}.revoke.{share.id}", disabled=state == ShareState.REVOKED,
                           on_click=_revoke, args=(journal, share.id))
