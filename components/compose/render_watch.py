"""Compose tells you when a render of your last submission ends: while any of its tasks is queued or
running, a fragment asks the service for their statuses every few seconds; when one ends, the page's
next run shows a toast for it and marks its link. Nothing runs once every task has ended."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import streamlit as st

from components.compose.state_keys import ENDED_KEY, RESULT_KEY
from dailies.client import Client, DailiesError
from dailies.spec.statuses import TERMINAL, TaskStatus

WATCH_SECONDS = 3
_MARKS = {TaskStatus.SUCCEEDED: "✓ succeeded", TaskStatus.FAILED: "✗ failed", TaskStatus.EXPIRED: "✗ expired",
          TaskStatus.CANCELLED: f"✗ {TaskStatus.CANCELLED.value}", TaskStatus.RUNNING: "rendering…",
          TaskStatus.QUEUED: "waiting in the queue"}


def unfinished(result: dict[str, Any] | None) -> list[dict[str, Any]]:
    if not result:
        return []
    return [item for item in result.get("created", []) if item.get("status") not in TERMINAL]


def mark(item: dict[str, Any]) -> str:
    """What a link of the last submission says of its task: its status as last seen."""
    status = item.get("status") or TaskStatus.QUEUED
    return _MARKS.get(status, status)


def watch(client: Client | None) -> None:
    """Announce what ended since the last run; keep watching while anything is under way."""
    for item in st.session_state.pop(ENDED_KEY, []):
        ok = item["status"] == TaskStatus.SUCCEEDED
        st.toast(f"{item['label']}: {'finished — open it in Review' if ok else item['status']}",
                 icon="✅" if ok else "⚠️")
    if client is not None and unfinished(st.session_state.get(RESULT_KEY)):
        st.fragment(run_every=WATCH_SECONDS)(_poll)(client)


def _poll(client: Client) -> None:
    result = st.session_state.get(RESULT_KEY)
    waiting = unfinished(result)
    if not waiting:
        return
    by_tier: dict[str, list[str]] = defaultdict(list)
    for item in waiting:
        by_tier[item.get("tier") or "default"].append(item["id"])
    statuses: dict[str, str] = {}
    try:
        for tier, ids in by_tier.items():
            page = client.tasks.list(task_ids=ids, service_tier=tier, page_size=min(len(ids), 500))
            statuses.update({task.id: str(task.status) for task in page.items})
    except DailiesError:
        return  # the service does not answer now: asked again in a few seconds
    ended = []
    for item in waiting:
        status = statuses.get(item["id"])
        if status is not None and status != item.get("status"):
            item["status"] = status
            if status in TERMINAL:
                ended.append(item)
    if ended:
        st.session_state[ENDED_KEY] = [*st.session_state.get(ENDED_KEY, []), *ended]
        st.rerun()  # the whole page: its toasts, and the links' marks
