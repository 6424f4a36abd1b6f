"""What a person can do with one task: cancel or delete it, keep it, and hand it to Compose
(rerun or edit, make the final of a draft, chain its video or last frame into a new task).

Hand-offs go through `components.common.handoff` (Compose reads them). Destructive actions ask first.
"""

from __future__ import annotations

import json
from typing import Any

import streamlit as st

from components.common import connection, data, handoff
from components.common import countdown as cd
from components.common.keep import keep_button
from components.common.stored_requests import request_of, stored_request
from components.tasks.state_keys import FLASH_KEY
from dailies.client import APIError, Client, ConflictError, UnsupportedEndpointError
from dailies.journal import Journal, Submission
from dailies.spec.models import TaskRecord
from dailies.spec.statuses import DELETABLE, TaskStatus


def flash(message: str) -> None:
    """A message for the next run (an action that reruns the page would otherwise lose it)."""
    st.session_state[FLASH_KEY] = message


def show_flash() -> None:
    message = st.session_state.pop(FLASH_KEY, None)
    if message:
        st.success(message)


def final_request(record: TaskRecord) -> dict[str, Any]:
    """The request that makes the final video of a succeeded draft (DESIGN.md, draft flow)."""
    return {"model": record.model, "content": [{"type": "draft_task", "draft_task": {"id": record.id}}]}


def can_make_final(record: TaskRecord) -> bool:
    return record.status == TaskStatus.SUCCEEDED and bool(record.draft) and bool(record.model)


def _to_compose(sent: bool) -> None:
    """After a hand-off: Compose has opened, or, when this page runs on its own (`streamlit run
    dashboard/views/tasks.py`, a test of the page alone), the hand-off waits in the session for it."""
    if not sent:
        st.success("Sent to Compose: open the Compose page to continue.")


def compose_rerun(journal: Journal, record: TaskRecord | None, submission: Submission | None, key: str,
                  stored: dict[str, Any] | None = None) -> None:
    """'Open in Compose' with the same inputs, when the journal knows what was sent, or the service
    stored it (`stored`: a task made with the API, whose inputs were URLs)."""
    task_id = submission.task_id if submission is not None else record.id if record is not None else ""
    if submission is None and stored is None:
        st.button("✍️ Open in Compose", key=key, disabled=True,
                  help="The journal does not know this task's inputs, and the service did not return them whole "
                       "(an inline image comes back as a thumbnail only).")
        st.caption("Its inputs are not known whole: it was not submitted from this dashboard, and the service "
                   "returns inline images as thumbnails only.")
        return
    if st.button("✍️ Open in Compose (rerun or edit)", key=key,
                 help="Compose opens with this task's model, prompt, inputs and parameters."):
        if submission is None:
            request = stored
        else:
            try:
                request = journal.restore_request(submission.request)
            except OSError as exc:
                st.error(f"An input of this task is missing from the journal ({exc}); it cannot be reopened whole.")
                return
        _to_compose(handoff.send_to_compose(request, note=f"Same inputs as task {task_id}", parent=task_id))


def compose_final(record: TaskRecord, key: str) -> None:
    if not can_make_final(record):
        return
    if st.button("🎬 Make the final from this draft", key=key,
                 help="A new task on the same model with this draft as its content: it reuses the draft's prompt, "
                      "images, seed, ratio and duration; resolution and tier may be chosen again."):
        _to_compose(handoff.send_to_compose(final_request(record), note=f"Final of draft {record.id}",
                                            parent=record.id, how="final"))


def compose_chain(record: TaskRecord, now: float, key_prefix: str) -> None:
    """Use this task's video or last frame as an input of a new task (only while the links work)."""
    video = cd.playable_url(record, now)
    frame = cd.playable_last_frame_url(record, now)
    if video is None and frame is None:
        return
    if video is not None and st.button("🎞️ Use video in a new task", key=f"{key_prefix}.use_video",
                                       help="Adds this video to Compose as a reference video."):
        _to_compose(handoff.send_input_to_compose(video, "video_url", "reference_video",
                                                  note=f"Video of task {record.id}", parent=record.id))
    if frame is not None and st.button("🖼️ Use last frame in a new task", key=f"{key_prefix}.use_frame",
                                       help="Adds this task's last frame to Compose as the first frame."):
        _to_compose(handoff.send_input_to_compose(frame, "image_url", "first_frame",
                                                  note=f"Last frame of task {record.id}", parent=record.id))


def cancel_or_delete(client: Client, journal: Journal, record: TaskRecord, key_prefix: str) -> None:
    """Cancel (queued) or delete (succeeded, failed, expired), each behind a confirmation."""
    if record.status == TaskStatus.QUEUED:
        with st.popover("🚫 Cancel task…"):
            st.write("Cancel this queued task? It will not run and nothing is billed.")
            if st.button("Yes, cancel it", key=f"{key_prefix}.confirm_cancel", type="primary"):
                _cancel(client, journal, record)
    elif record.status in DELETABLE:
        kept = journal.kept(record.id)
        with st.popover("🗑️ Delete task…"):
            st.write("Delete this task's record and its result files on the service?")
            if kept:
                st.caption("The kept copy in the local archive stays, and keeps playing.")
            elif record.status == TaskStatus.SUCCEEDED:
                st.warning("Nothing is kept locally: keep the result first if you still need it.")
            if st.button("Yes, delete it", key=f"{key_prefix}.confirm_delete", type="primary"):
                _delete(client, journal, record, f"Deleted {record.id} from the service.")
    elif record.status == TaskStatus.RUNNING:
        st.caption("A running task can be neither cancelled nor deleted (the service answers 409).")
    elif record.status == TaskStatus.CANCELLED:
        st.caption("A cancelled task's record stays until the service purges it (7 days after creation).")


def _cancel(client: Client, journal: Journal, record: TaskRecord) -> None:
    """Cancel only: the record on screen may be minutes old, and the spec's DELETE of a task that has
    finished since deletes its result. A Dailies service cancels without deleting; elsewhere (the real
    Ark) DELETE is all there is."""
    try:
        client.tasks.cancel_only(record.id)
    except UnsupportedEndpointError:
        _delete(client, journal, record, f"Cancelled {record.id}.")
        return
    except ConflictError as exc:
        data.changed()
        st.warning(f"{record.id} could not be cancelled: {exc.message} Nothing was deleted.")
        return
    except APIError as exc:
        st.error(f"The service refused: {exc}")
        return
    data.changed()
    flash(f"Cancelled {record.id}.")
    st.rerun()


def _delete(client: Client, journal: Journal, record: TaskRecord, done: str) -> None:
    # The last record is saved first, so a kept result still shows its parameters afterwards.
    data.remember(journal, [record])
    try:
        client.tasks.delete(record.id)
    except APIError as exc:
        st.error(f"The service refused: {exc}")
        return
    data.changed()
    flash(done)
    st.rerun()


def copy_json(record: TaskRecord) -> None:
    """The record as JSON in a code block, whose copy button copies it."""
    st.code(json.dumps(record.model_dump(mode="json", exclude_none=True), indent=2, ensure_ascii=False),
            language="json")


def render(client: Client, journal: Journal, record: TaskRecord | None, submission: Submission | None, now: float,
           key_prefix: str, live: bool) -> None:
    """All actions that apply to the task. `live` is False when the service no longer has the task."""
    if record is not None and live:
        keep_button(client, journal, record, now, key=f"{key_prefix}.keep")
        cancel_or_delete(client, journal, record, key_prefix)
    stored = None
    if submission is None and record is not None and live:
        found = stored_request(client, connection.current().cache_id, record.id)
        stored = request_of(found) if found is not None else None
    compose_rerun(journal, record, submission, key=f"{key_prefix}.compose", stored=stored)
    if record is not None and live:
        compose_final(record, key=f"{key_prefix}.final")
        compose_chain(record, now, key_prefix)
