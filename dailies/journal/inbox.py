"""A person's inbox: what in their project needs them, read from what the journal already holds, and
which of it they have read.

Nothing is written when something happens: an item is a comment, a status change or a task's record
seen from one person's side (a comment naming them with `@`, a reply to a comment of theirs, a comment
or status on a version they made, a version of theirs that finished or failed), so the inbox cannot
miss what a writer forgot to announce, and it is the view's scope's alone (a project's, never
another's). What is read is the one thing kept per person: item ids marked read, and a time before
which everything is ("Mark all read").
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal

from sqlalchemy import or_, select

from ..spec.mentions import mentioned
from ..spec.notifications import GUEST_SUFFIX
from ..spec.statuses import TaskStatus
from .comments import Comment, CommentsMixin

# "ended": a version of theirs succeeded or failed (the item's text is the task's status).
Kind = Literal["mention", "reply", "comment", "status", "ended"]
KINDS: tuple[Kind, ...] = ("mention", "reply", "comment", "status", "ended")
INBOX_DAYS = 30  # older news is not news
MAX_ITEMS = 200
ALL_READ = "*"  # the read row whose time marks everything before it read


@dataclass(frozen=True)
class InboxItem:
    id: str  # stable across reads: the kind and the id of what it is about
    kind: Kind
    task_id: str
    actor: str  # who did it; "" for a task's own end
    at: float
    text: str  # the comment's body, the status set, or the task's end
    read: bool = False
    frame: int | None = None  # where on the version, for a comment pinned to a frame
    # When the journal learnt of it ("Mark all read" reads what had arrived by then): a version's end
    # is learnt when a dashboard saves its record, which may be long after it ended.
    arrived: float = 0.0


class InboxMixin(CommentsMixin):
    def people(self) -> list[str]:
        """The project's people as the journal knows them: everyone who made a version, set a status,
        rated or commented in this scope (not a share's guests), and the view's own author."""
        names: set[str] = set()
        for name, column in (("authors", "author"), ("statuses", "author"), ("ratings", "author"),
                             ("comments", "author")):
            table = self._table(name)
            names.update(row[0] for row in self._read(select(table.c[column]).where(self._visible(table))
                                                       .distinct()))
        if self._scope is not None and self._scope.author:
            names.add(self._scope.author)
        return sorted((n for n in names if n and not n.endswith(GUEST_SUFFIX)), key=str.casefold)

    def inbox(self, person: str, now: float | None = None, limit: int = MAX_ITEMS,
              members: Iterable[str] = ()) -> list[InboxItem]:
        """What needs `person`, newest first, of the last INBOX_DAYS: never their own doing. The
        database picks the candidates (an `@` in the text, a reply to one of theirs, on a version of
        theirs), so a long project's other talk is never read here. `members`: names the journal may
        not know yet (the service's), so "@Ana Lima" is not taken for Ana."""
        now = time.time() if now is None else now
        since = now - INBOX_DAYS * 86400
        if not person:
            return []
        authors, comments = self._table("authors"), self._table("comments")
        made_query = select(authors.c.task_id).where(self._visible(authors), authors.c.author == person).correlate(None)
        # Not correlated with the outer query's comments: the person's own comments, wherever they are.
        mine_query = select(comments.c.id).where(self._visible(comments), comments.c.author == person).correlate(None)
        candidates = self._read(
            select(comments).where(self._visible(comments), comments.c.created_at >= since, comments.c.author != person,
                                   or_(comments.c.body.contains("@"), comments.c.parent_id.in_(mine_query),
                                       comments.c.task_id.in_(made_query)))
            .order_by(comments.c.created_at.desc()).limit(limit * 5))
        made = {row.task_id for row in self._read(made_query)}
        parents = {row.parent_id for row in candidates if row.parent_id}
        mine = {row.id for row in self._read(mine_query.where(comments.c.id.in_(parents)))} if parents else set()
        people = [*self.people(), *members] if any("@" in row.body for row in candidates) else [person]
        items: dict[str, InboxItem] = {}
        for row in candidates:
            comment = self._comment(row)
            kind = _comment_kind(comment, person, people, mine, made)
            if kind is not None:
                items[f"{kind}:{comment.id}"] = InboxItem(f"{kind}:{comment.id}", kind, comment.task_id,
                                                          comment.author, comment.created_at, comment.body,
                                                          frame=comment.frame, arrived=comment.created_at)
        if made:
            statuses = self._table("statuses")
            for row in self._read(select(statuses).where(self._visible(statuses), statuses.c.at >= since,
                                                         statuses.c.author != person,
                                                         statuses.c.task_id.in_(made_query))):
                items[f"status:{row.id}"] = InboxItem(f"status:{row.id}", "status", row.task_id, row.author,
                                                      row.at, row.status, arrived=row.at)
            records = self._table("records")
            for row in self._read(select(records.c.task_id, records.c.record, records.c.saved_at).where(
                    self._visible(records), records.c.task_id.in_(made_query), records.c.saved_at >= since)):
                ended = _ended(row.record)
                if ended is not None and ended[1] >= since:
                    status, at = ended
                    items[f"ended:{row.task_id}"] = InboxItem(f"ended:{row.task_id}", "ended", row.task_id, "",
                                                              at, status, arrived=row.saved_at)
        newest = sorted(items.values(), key=lambda item: item.at, reverse=True)[:limit]
        read_ids, read_before = self._reads(person)
        return [InboxItem(**{**item.__dict__, "read": item.id in read_ids or item.arrived <= read_before})
                for item in newest]

    def unread(self, person: str, now: float | None = None, members: Iterable[str] = ()) -> int:
        return sum(not item.read for item in self.inbox(person, now, members=members))

    def mark_read(self, person: str, item_ids: Iterable[str], at: float | None = None) -> None:
        when = time.time() if at is None else at
        self._write("inbox_reads", [{"scope": self._writes_as, "person": person, "item_id": item_id, "read_at": when}
                                    for item_id in item_ids if item_id and item_id != ALL_READ])

    def mark_all_read(self, person: str, at: float | None = None) -> None:
        """Everything up to `at` (now) read; what comes later is not."""
        when = time.time() if at is None else at
        self._write("inbox_reads", [{"scope": self._writes_as, "person": person, "item_id": ALL_READ,
                                     "read_at": when}])

    def _reads(self, person: str) -> tuple[set[str], float]:
        table = self._table("inbox_reads")
        ids, before = set(), float("-inf")
        for row in self._read(select(table.c.item_id, table.c.read_at).where(self._visible(table),
                                                                            table.c.person == person)):
            if row.item_id == ALL_READ:
                before = max(before, row.read_at)
            else:
                ids.add(row.item_id)
        return ids, before


def _comment_kind(comment: Comment, person: str, people: list[str], mine: set[str], made: set[str]) -> Kind | None:
    """Why a comment by someone else is in `person`'s inbox, the strongest reason first; None: it is not."""
    if person in mentioned(comment.body, people):
        return "mention"
    if comment.parent_id is not None and comment.parent_id in mine:
        return "reply"
    if comment.task_id in made:
        return "comment"
    return None


def _ended(record_json: str) -> tuple[str, float] | None:
    """(its status, when) of a saved record that succeeded or failed; None otherwise."""
    try:
        record = json.loads(record_json)
    except ValueError:
        return None
    if not isinstance(record, dict):
        return None
    status, at = record.get("status"), record.get("updated_at")
    if status not in (TaskStatus.SUCCEEDED, TaskStatus.FAILED) or not isinstance(at, int | float):
        return None
    return str(status), float(at)
