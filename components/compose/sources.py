"""Where Compose finds earlier work to build on: finished tasks (their video or last frame, to
chain shots; drafts, to make their final) and the prompts the journal kept for them."""

from __future__ import annotations

import tempfile
from pathlib import Path

import streamlit as st

from components.common import data
from components.compose.state_keys import FETCHED_KEY
from dailies.client import Client, DailiesError
from dailies.journal import Journal
from dailies.spec.models import TaskRecord
from dailies.spec.statuses import TaskStatus

# The list is read again after this long, so a task that finished meanwhile shows up without a
# manual refresh, but typing in the form does not query the service on every keystroke. A
# submission from here reads it anew at once (`data.changed`).
RECENT_MAX_AGE_SECONDS = 15
RECENT_PAGE_SIZE = 50
_FETCHED_KEPT = 8


def recent_succeeded(client: Client | None) -> list[TaskRecord]:
    """Recently succeeded tasks of the current connection (newest first); none without a client."""
    if client is None:
        return []
    try:
        return list(data.list_tasks(max_age=RECENT_MAX_AGE_SECONDS, status=TaskStatus.SUCCEEDED,
                                    page_size=RECENT_PAGE_SIZE).items)
    except DailiesError:
        # The pickers then offer nothing; the form itself works without the service.
        return []


def prompts_for(journal: Journal, records: list[TaskRecord]) -> dict[str, str]:
    """The prompt the journal kept for each task it knows (the service does not return prompts)."""
    return {task_id: sub.prompt for task_id, sub in journal.submissions(r.id for r in records).items()}


def pick_task(key: str, label: str, records: list[TaskRecord], journal: Journal) -> TaskRecord | None:
    """A select box of finished tasks (labelled with their journal prompts); the one chosen, or None."""
    prompts = prompts_for(journal, records)
    by_id = {r.id: r for r in records}
    # Nothing chosen at first (the placeholder shows); a task gone from the list is unchosen.
    if st.session_state.get(key) not in by_id:
        st.session_state[key] = None
    task_id = st.selectbox(label, list(by_id), key=key, placeholder="Choose a finished task",
                           format_func=lambda i: task_label(by_id[i], prompts), persist_state="session")
    return None if task_id is None else by_id[task_id]


def task_label(record: TaskRecord, prompts: dict[str, str]) -> str:
    """'“a red kite over …” · 480p 16:9 4 s · cgt-…', or without the prompt when unknown."""
    facts = " ".join(str(x) for x in (record.resolution, record.ratio,
                                      f"{record.duration} s" if record.duration else None) if x)
    prompt = prompts.get(record.id, "").strip().replace("\n", " ")
    if len(prompt) > 48:
        prompt = prompt[:47] + "…"
    head = f"“{prompt}” · " if prompt else ""
    draft = " · draft" if record.draft else ""
    return f"{head}{facts}{draft} · {record.id}"


def fetch_result_image(client: Client, url: str) -> bytes:
    """The bytes of a result image (a last frame), kept in the session so reruns do not fetch it
    again. Result URLs expire after 24 hours, so chaining copies the frame instead of linking it.

    Raises `DailiesError` when the file cannot be fetched (an expired URL is a 403).
    """
    fetched: dict[str, bytes] = st.session_state.setdefault(FETCHED_KEY, {})
    if url in fetched:
        return fetched[url]
    with tempfile.TemporaryDirectory(prefix="dailies-compose-") as tmp:
        data = client.download(url, Path(tmp) / "frame").read_bytes()
    while len(fetched) >= _FETCHED_KEPT:
        fetched.pop(next(iter(fetched)))
    fetched[url] = data
    return data


def fetch_error_text(exc: DailiesError) -> str:
    """A person's sentence for a failed fetch of an earlier result."""
    status = getattr(exc, "status_code", None)
    if status == 403:
        return "could not fetch the earlier result: its URL has expired (result URLs live 24 hours)"
    return f"could not fetch the earlier result: {exc}"
