"""How an inbox item reads (pure): its icon and its line, "Bo replied", "Cy mentioned you"."""

from __future__ import annotations

from dailies.journal import InboxItem
from dailies.journal.statuses import STATUS_LABELS
from dailies.spec.statuses import TaskStatus

ICONS = {"mention": ":material/alternate_email:", "reply": ":material/reply:", "comment": ":material/chat:",
         "status": ":material/flag:", "ended": ":material/movie:"}


def headline(item: InboxItem) -> str:
    """What happened, in the words of the person it happened to (names as plain text: the caller escapes)."""
    if item.kind == "mention":
        return f"{item.actor} mentioned you"
    if item.kind == "reply":
        return f"{item.actor} replied to you"
    if item.kind == "comment":
        return f"{item.actor} commented on your version"
    if item.kind == "status":
        return f"{item.actor} set your version to {STATUS_LABELS.get(item.text, item.text)}"
    return "Your version is ready" if item.text == TaskStatus.SUCCEEDED else "Your version failed"


def excerpt(item: InboxItem, chars: int = 200) -> str:
    """The comment's words on one line, cut short; nothing for a status or a task's end."""
    if item.kind not in ("mention", "reply", "comment"):
        return ""
    text = " ".join(item.text.split())
    return text if len(text) <= chars else text[:chars - 1] + "…"
