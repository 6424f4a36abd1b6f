"""Sending what Compose built: one batch in the journal, one task per body, progress while it
goes, links to the tasks afterwards, and the service's error (code, param, message) when it
refuses, with the form left as it was."""

from __future__ import annotations

import hashlib
import json
import time
import uuid
from typing import Any

import streamlit as st
from sqlalchemy.exc import SQLAlchemyError

from components.common import actions, data, pages
from components.common.shot_labels import distinct_labels
from components.compose import render_watch
from components.compose.body import FormValues, Plan, idempotency_key
from components.compose.image_input import thumbnail_data_url
from components.compose.prefill import LINEAGE_KEY
from components.compose.state_keys import AGAIN_KEY, PENDING_KEY, RESULT_KEY, SENT_KEY, SUBMIT_KEY, TOKEN_KEY
from dailies.client import APIStatusError, Client, DailiesError
from dailies.journal import InputRef, Journal, Submission
from dailies.spec.scenarios import Scenario
from dailies.spec.statuses import TaskStatus

# A URL longer than this is not worth keeping in the journal's list of inputs (data URLs never are).
_URL_KEPT_CHARS = 2048


def render(plan: Plan, values: FormValues, client: Client | None, journal: Journal) -> None:
    """The Submit button (disabled while any problem stands), the sending, and the last result."""
    n = len(plan.bodies)
    if client is None:
        st.warning("No API key yet: open **Settings** to enter the service address and key.")
    label = "Submit" if n == 1 else f"Submit {n} tasks"
    # After a whole batch went, the same form waits: a second press is another take, asked for by name.
    # The bodies (Base64 images included) are hashed only while a sent batch is remembered, and the
    # mark is dropped once the form differs, so later runs of Compose hash nothing.
    sent = False
    if plan.ok and SENT_KEY in st.session_state:
        sent = st.session_state[SENT_KEY] == _digest(plan.bodies)
        if not sent:
            del st.session_state[SENT_KEY]
    clicked = st.button(f"Submitted ✓ ({n})" if sent and n > 1 else "Submitted ✓" if sent else label,
                        key=SUBMIT_KEY, type="primary", icon=":material/send:", width="stretch",
                        disabled=sent or not plan.ok or client is None)
    if sent:
        actions.button("Send the same again (another take)", key=AGAIN_KEY, icon=":material/replay:",
                       on_click=lambda: st.session_state.pop(SENT_KEY, None))
    if plan.mistakes:
        st.caption("Submit stays off until every problem above is fixed: nothing is sent before that.")
    if clicked and plan.ok and client is not None:
        submit(plan, values, client, journal)
    show_result()


def batch_label(plan: Plan, values: FormValues) -> str:
    if values.mode == Scenario.DRAFT_FINAL:
        return f"Final of draft {values.draft_task_id}"
    prompt = plan.tasks[0].prompt.strip().splitlines()[0] if plan.tasks[0].prompt.strip() else "(no prompt)"
    return prompt if len(prompt) <= 60 else prompt[:59] + "…"


def input_refs(values: FormValues, paths: dict[str, str]) -> list[InputRef]:
    """What the journal keeps of each input: its source, a thumbnail for images held as bytes, and
    the URL when it is a real URL (not a data URL, which the journal stores as a file itself)."""
    refs: list[InputRef] = []
    if values.mode == Scenario.DRAFT_FINAL:
        return [InputRef(index=0, kind="draft_task", role=None, source=values.draft_task_id)]
    for choice in values.media:
        index = int(paths[choice.slot].removeprefix("content[").removesuffix("]"))
        url = choice.sent_url()
        keep_url = not url.startswith("data:") and len(url) <= _URL_KEPT_CHARS
        refs.append(InputRef(
            index=index, kind=choice.kind, role=choice.role, source=choice.source or url,
            thumbnail=thumbnail_data_url(choice.data) if choice.data is not None else None,
            url=url if keep_url else None,
        ))
    return refs


def link_version(journal: Journal, task_id: str, prompt: str, lineage: dict[str, Any] | None) -> str | None:
    """A task made from another's hand-off joins that task's shot: a final, a chained shot, or a rerun
    (the same prompt) or an edit (another prompt). What went wrong, if anything."""
    if not lineage or not lineage.get("parent"):
        return None
    parent = lineage["parent"]
    how = lineage.get("how") or ("rerun" if lineage.get("prompt") == prompt else "edit")
    try:
        journal.link_version(task_id, parent, how)
    except (OSError, SQLAlchemyError) as exc:
        return f"Task {task_id} was created, but it could not be joined to the shot of {parent}: {exc}"
    return None


def submit(plan: Plan, values: FormValues, client: Client, journal: Journal) -> None:
    """Create every task of the plan, recording each in the journal as soon as it exists.

    A failure stops the batch and keeps the idempotency token: pressing Submit again with the same
    form returns the tasks already created instead of creating them twice, and sends the rest.
    """
    state = st.session_state
    token = state.setdefault(TOKEN_KEY, uuid.uuid4().hex)
    pending = state.get(PENDING_KEY)
    if pending and pending["token"] == token:
        batch_id = pending["batch_id"]
    else:
        batch_id = journal.new_batch(batch_label(plan, values), values.mode)
        state[PENDING_KEY] = {"token": token, "batch_id": batch_id}
    refs = input_refs(values, plan.paths)
    draft_prompt = ""
    if values.mode == Scenario.DRAFT_FINAL and (kept := journal.submission(values.draft_task_id)):
        draft_prompt = kept.prompt
    lineage = state.get(LINEAGE_KEY)
    if values.mode == Scenario.DRAFT_FINAL and values.draft_task_id:  # a final is a version of its draft's shot
        lineage = {"parent": values.draft_task_id, "how": "final"}
    n = len(plan.bodies)
    created: list[dict[str, Any]] = []
    failure: dict[str, Any] | None = None
    notes: list[str] = []  # what the journal could not keep; the tasks exist
    with st.status(f"Submitting {n} task{'s' if n != 1 else ''}…", expanded=True) as status:
        bar = st.progress(0.0, text=f"Submitting 1 of {n}…")
        for i, (task, body) in enumerate(zip(plan.tasks, plan.bodies, strict=True)):
            bar.progress(i / n, text=f"Submitting {i + 1} of {n}…")
            status.update(label=f"Submitting {i + 1} of {n}…")
            try:
                response = client.tasks.create(body, idempotency_key=idempotency_key(token, body))
            except APIStatusError as exc:
                failure = {"index": i, "status": exc.status_code, "code": exc.code, "param": exc.param,
                           "message": exc.message}
                break
            except DailiesError as exc:
                failure = {"index": i, "status": None, "code": None, "param": None, "message": str(exc)}
                break
            prompt = task.prompt or draft_prompt
            try:
                journal.record_submission(Submission(
                    task_id=response.id, batch_id=batch_id, submitted_at=time.time(), base_url=client.base_url,
                    model=values.model, mode=values.mode, prompt=prompt, request=body, inputs=refs,
                ))
            except (OSError, SQLAlchemyError) as exc:
                # The task exists on the service: go on with the batch, and say what the journal lost.
                notes.append(f"Task {response.id} was created, but its prompt and inputs could not be journaled: {exc}")
            created.append({"id": response.id, "prompt": prompt, "seed": task.seed, "status": TaskStatus.QUEUED.value,
                            "tier": body.get("service_tier") or "default"})
            if (note := link_version(journal, response.id, prompt, lineage)) is not None:
                notes.append(note)
        done = len(created)
        bar.progress(done / n, text=f"{done} of {n} submitted")
        if failure is None:
            status.update(label=f"Submitted {done} task{'s' if done != 1 else ''}", state="complete",
                          expanded=False)
        else:
            status.update(label=f"Stopped after {done} of {n}: the service refused task {failure['index'] + 1}",
                          state="error", expanded=False)
    for item, label in zip(created, _link_labels(created), strict=True):
        item["label"] = label
    state[RESULT_KEY] = {"batch_id": batch_id, "created": created, "failure": failure, "total": n, "notes": notes}
    if created:
        state.pop(LINEAGE_KEY, None)  # the hand-off's versions are made; the next take starts a shot
    if failure is None:
        # The next press is a new take of the same form, not a retry of this one.
        state[TOKEN_KEY] = uuid.uuid4().hex
        state.pop(PENDING_KEY, None)
        state[SENT_KEY] = _digest(plan.bodies)
    data.changed()  # the new tasks: every listing of this connection is read anew
    if failure is None:
        st.rerun()  # drawn again from the result: Submit as sent, the watch of the new tasks started


def show_result() -> None:
    """The outcome of the last submission: links to its tasks, and the refusal if there was one."""
    result = st.session_state.get(RESULT_KEY)
    if not result:
        return
    created, failure, total = result["created"], result["failure"], result["total"]
    for note in result.get("notes", []):
        st.warning(note)
    if created:
        st.success(f"Last submission: {len(created)} of {total} task{'s' if total != 1 else ''} sent · batch "
                   f"`{result['batch_id']}`. Open a task to follow it:")
        for item in created:
            task_link(item["id"], f"{item['label']} · {render_watch.mark(item)}", tooltip=item.get("prompt") or None)
    if failure:
        where = f"Task {failure['index'] + 1} of {total}" if total > 1 else "The task"
        head = " · ".join(str(x) for x in (failure["status"], failure["code"]) if x)
        param = f" (field `{failure['param']}`)" if failure["param"] else ""
        st.error(f"{where} was not created: **{head or 'error'}**{param}\n\n{failure['message']}\n\n"
                 "The form is unchanged. Fix what the service names and press Submit again: tasks already "
                 "created are not created twice.")


def _link_labels(created: list[dict[str, Any]]) -> list[str]:
    """The panel is narrow: each task's id, and what tells it from the others of its batch (the part
    of its prompt they do not share, else its seed)."""
    if len(created) == 1:
        seed = created[0].get("seed")
        return [created[0]["id"] + (f" · seed {seed}" if seed not in (None, -1) else "")]
    labels = distinct_labels([item.get("prompt") or "" for item in created],
                             [item.get("seed") for item in created], width=28)
    return [f"{item['id']} · {label}" for item, label in zip(created, labels, strict=True)]


def _digest(bodies: list[dict[str, Any]]) -> str:
    return hashlib.sha256(json.dumps(bodies, sort_keys=True).encode()).hexdigest()


def task_link(task_id: str, label: str, tooltip: str | None = None) -> None:
    """A link to the task on the Tasks page (`?task=<id>`)."""
    pages.link(pages.TASKS, label, icon=":material/movie:", query={"task": task_id}, help=tooltip)
