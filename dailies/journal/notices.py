"""What a comment or a status change tells the service's notifications (POST /dailies/v1/notifications/
events): the journal knows what the service does not, whose version it is, whose comment a reply answers
and what the shot is called. The service routes it (dailies/spec/notifications.py)."""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from dailies.journal.comments import Comment, CommentsMixin
from dailies.journal.statuses import StatusChange

SHOT_CHARS = 120


class NoticesMixin(CommentsMixin):
    def comment_notice(self, comment: Comment) -> dict[str, Any]:
        notice = self._about(comment.task_id)
        if comment.parent_id:
            table = self._table("comments")
            parent = self._read(select(table.c.author).where(self._visible(table), table.c.id == comment.parent_id))
            notice["reply_to"] = next((row.author for row in parent), "")
        return {**notice, "kind": "comment", "text": comment.body, "actor": comment.author}

    def status_notice(self, change: StatusChange) -> dict[str, Any]:
        return {**self._about(change.task_id), "kind": "status", "status": change.status, "actor": change.author}

    def _about(self, task_id: str) -> dict[str, Any]:
        authors, submissions = self._table("authors"), self._table("submissions")
        made_by = self._read(select(authors.c.author).where(self._visible(authors), authors.c.task_id == task_id))
        prompts = self._read(select(submissions.c.prompt).where(self._visible(submissions),
                                                                submissions.c.task_id == task_id))
        prompt = " ".join(next((row.prompt or "" for row in prompts), "").split())
        return {"task_id": task_id, "maker": next((row.author for row in made_by), ""),
                "shot": prompt if len(prompt) <= SHOT_CHARS else prompt[:SHOT_CHARS - 1] + "…"}
