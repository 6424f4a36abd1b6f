"""Where Compose finds earlier work to build on: finished tasks (their video or last frame, to
chain shots; drafts, to make their final) and the prompts the journal kept for them."""

from __future__ import annotations

import tempfile
import time
from pathlib import Path

import streamlit as st

from dailies.client import Client, DailiesError
from dailies.journal import Journal
from dailies.spec.models import TaskRecord
from dailies.spec.statuses import TaskStatus

RECENT_KEY = "compose.recent"
FETCHED_KEY = "compose.fetched"
# The list is read again after this long, so a task that finished meanwhile shows up without a
# manual refresh, but typing in the form does not query the service on every keystroke.
RECENT_MAX_AGE_SECONDS = 15
RECENT_PAGE_SIZE = 50
_FETCHED_KEPT = 8


def recent_succeeded(client: Client | None) -> list[TaskRecord]:
    """Recently succeeded tasks of the current service (newest first), cached in the session."""
    if client is None:
        return []
    cached = st.session_state.get(RECENT_KEY)
    if cached and cached["base_url"] == client.base_url and time.time() - cached["at"] < RECENT_MAX_AGE_SECONDS:
        return cached["items"]
    try:
        items = client.tasks.list(status=TaskStatus.SUCCEEDED, page_size=RECENT_PAGE_SIZE).items
    except DailiesError:
        # The pickers then offer nothing; the form itself works without the service.
        items = []
    st.session_state[RECENT_KEY] = {"base_url": client.base_url, "at": time.time(), "items": items}
    return items


def forget_recent() -> None:
    """Read the list again on the next run (after a submission, or on the user's refresh)."""
    st.session_state.pop(RECENT_KEY, None)


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
