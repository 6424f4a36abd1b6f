"""One task in full: player, last frame, countdowns, fields, error, callback log, actions.

The record comes from the service; when the service answers 404 (deleted, or purged after 7
days) the last record the journal saved stands in, so a kept result still plays and shows its
parameters.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from datetime import tzinfo

import streamlit as st

from components.common import actions, connection, outbound, player
from components.common import countdown as cd
from components.common.markdown_text import markdown_text
from components.common.records import format_time, length_text, model_as_written, tokens
from components.common.stored_requests import stored_request
from components.common.task_lookup import LoadedTask, load
from components.tasks import actions as task_actions
from components.tasks import callbacks as task_callbacks
from components.tasks.rows import STATUS_EMOJI, format_age
from components.tasks.state_keys import DETAIL_PREFIX
from dailies.client import Client
from dailies.journal import Journal, Submission
from dailies.spec.models import TaskRecord, TaskRequest

TABS = ("Record", "Copy JSON", "Callback deliveries", "Inputs")


def countdown_badges(record: TaskRecord, now: float, tz: tzinfo) -> None:
    """The task's clocks as coloured badges, with the moments they run out."""
    clocks = cd.deadlines(record, now)
    if not clocks:
        return
    st.markdown(" ".join(f":{c.colour}-badge[{c.emoji} {c.text}]" for c in clocks))
    st.caption(" · ".join(f"{c.label}: {format_time(c.expires_at, tz)}" for c in clocks))


def _fields_table(record: TaskRecord, tz: tzinfo, now: float, submission: Submission | None = None) -> str:
    rows = [
        ("Status", f"{STATUS_EMOJI.get(record.status, '')} {record.status}"),
        ("Model", model_as_written(record, submission)),
        ("Service tier", record.service_tier),
        ("Resolution · ratio", f"{record.resolution or '—'} · {record.ratio or '—'}"),
        ("Length", f"{length_text(record)} at {record.framespersecond} fps" if record.framespersecond
         else length_text(record)),
        ("Seed", record.seed),
        ("Audio", {True: "yes", False: "no"}.get(record.generate_audio)),
        ("Draft", "yes (480p draft)" if record.draft else None),
        ("Final of draft", record.draft_task_id),
        ("Priority", record.priority),
        ("Tokens", f"{tokens(record):,}" if tokens(record) is not None else None),
        ("Created", f"{format_time(record.created_at, tz)} ({format_age(now - record.created_at)})"
         if record.created_at else None),
        ("Updated", f"{format_time(record.updated_at, tz)} ({format_age(now - record.updated_at)})"
         if record.updated_at else None),
    ]
    lines = ["| Field | Value |", "|---|---|"]
    lines += [f"| {name} | {value} |" for name, value in rows if value not in (None, "")]
    return "\n".join(lines)


def _inputs(submission: Submission) -> None:
    if not submission.inputs:
        st.caption("Text only: no images, videos or audio.")
        return
    for ref in submission.inputs:
        cols = st.columns([1, 4])
        if ref.thumbnail:
            cols[0].image(ref.thumbnail, width=96)
        cols[1].markdown(f"**{ref.kind}**" + (f" · {ref.role}" if ref.role else "") + f"  \n`{ref.source}`")


def _stored_inputs(stored: TaskRequest) -> None:
    """The inputs the service stored (a task not submitted from here): thumbnails of inline images,
    URLs as sent, the type and size of inline videos and audio."""
    media = [(item, getattr(item, item.type, None)) for item in stored.content if item.type != "text"]
    if not media:
        st.caption("Text only: no images, videos or audio.")
        return
    for item, source in media:
        cols = st.columns([1, 4])
        # Only a link (or the service's data-URL thumbnail): a path would be a file of this machine, served.
        if item.type == "image_url" and source is not None and outbound.browser_url(source.url, data=True):
            cols[0].image(source.url, width=96)
        where = (f"inline {source.inline.media_type}, {source.inline.bytes:,} bytes" if source and source.inline
                 else source.url if source and source.url else item.draft_task.id if item.draft_task else "")
        cols[1].markdown(f"**{item.type}**" + (f" · {item.role}" if item.role else "") + f"  \n`{where}`")


def render(client: Client | None, journal: Journal, task_id: str, tz: tzinfo,
           now: float | None = None, key_prefix: str = DETAIL_PREFIX,
           on_close: Callable[[], None] | None = None) -> LoadedTask:
    """Draw the detail of one task; return what was loaded."""
    now = time.time() if now is None else now
    loaded = load(client, journal, task_id)
    record = loaded.record
    submission = journal.submission(task_id)
    kept = journal.kept(task_id)

    head = st.columns([8, 1])
    emoji = STATUS_EMOJI.get(record.status, "") if record else "❔"
    head[0].subheader(f"{emoji} {task_id}", anchor=False)
    if on_close is not None:
        actions.button("✖ Close", key=f"{key_prefix}.close", on_click=on_close, where=head[1])
    task_actions.show_flash()
    if loaded.problem and (record or kept):
        st.info(loaded.problem + (" Showing the last record this dashboard saw." if record else ""))
    elif loaded.problem:
        st.warning(loaded.problem)
    if record is None and not kept:
        st.error(f"No task {task_id} on this service, and this dashboard has no copy of it.")
        return loaded
    stored = None if submission is not None else stored_request(client, connection.current().cache_id, task_id)
    if submission is not None:
        st.markdown(f"> {markdown_text(submission.prompt)}" if submission.prompt else "_No prompt: inputs only._")
    elif stored is not None:
        st.markdown(f"> {markdown_text(stored.prompt)}" if stored.prompt else "_No prompt: inputs only._")
        if stored.created_by:
            st.caption(f"Created by {markdown_text(stored.created_by)} (with the API, not from this dashboard).")
    else:
        st.caption("Prompt unknown: the list endpoint does not return prompts, and this task was not "
                   "submitted from this dashboard.")
    if record is not None and loaded.live:
        countdown_badges(record, now, tz)

    left, right = st.columns([3, 2], gap="large")
    with left:
        player.video(record, kept, now, on_service=loaded.live, max_height=540)
        if record is not None and record.error is not None:
            st.error(f"**{record.error.code}**: {record.error.message}", icon="🚨")
        player.last_frame(record, kept, now, on_service=loaded.live, width=360)
    with right:
        if record is not None:
            st.markdown(_fields_table(record, tz, now, submission))
        st.markdown("**Actions**")
        task_actions.render(client, journal, record, submission, now, key_prefix=key_prefix,
                            live=loaded.live and client is not None)

    # Only the open tab is drawn: the delivery log is a request to the service, and the JSON views
    # are the heaviest elements of the detail for the browser.
    record_tab, json_tab, callbacks_tab, inputs_tab = st.tabs(TABS, key=f"{key_prefix}.tab", on_change="rerun")
    if record_tab.open and record is not None:
        with record_tab:
            st.json(record.model_dump(mode="json", exclude_none=True), expanded=1)
    if json_tab.open and record is not None:
        with json_tab:
            task_actions.copy_json(record)
    if callbacks_tab.open:
        with callbacks_tab:
            if loaded.live and client is not None:
                task_callbacks.render(client, task_id, tz)
            else:
                st.caption("The service no longer has this task, nor its delivery log.")
    if inputs_tab.open:
        with inputs_tab:
            if submission is not None:
                _inputs(submission)
            elif stored is not None:
                _stored_inputs(stored)
            else:
                st.caption("Inputs unknown: this task was not submitted from this dashboard.")
    return loaded
