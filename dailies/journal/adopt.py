"""Bringing older rows into a view's scope (components/common/identity.py: once per process for a key's own
scope, every few minutes for a key into its project's, so what reached the key's scope since joins too):

- on a Dailies service, the journal a key wrote while journals were per key joins its project's
  scope (`adopt(key_scope)`): its submissions, inputs, kept copies, records and preferences become the
  project's (a row the project already has for the same task stays as it is);
- the legacy per-key verdicts, stars and notes (table `reviews`) become a status change, the
  author's stars and a comment by the author (the key's member name, or the display name given),
  at the time they were last changed. The legacy rows are then deleted, so this runs once.

Kept files stay where they are: a kept row holds its file's full path or bucket key.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable

from sqlalchemy import select

from .comments import CommentsMixin
from .scope import Scope
from .statuses import FROM_VERDICT
from .view import UNSCOPED

# Tables whose rows move to the project as they are (batches are keyed by id alone: their scope changes).
_MOVED = ("submissions", "authors", "kept", "records", "preferences", "statuses", "ratings", "comments", "shots")


class AdoptMixin(CommentsMixin):
    def adopt(self, old: Scope | None = None, *, keep_preferences: Iterable[str] = ()) -> int:
        """Bring `old`'s rows (None: only this scope's own legacy reviews) into this view's scope;
        the number of rows brought or converted. The preferences named in `keep_preferences` stay
        with `old` (what is read from that scope alone, such as a key's display name). Adopting again
        brings only what reached `old` since."""
        if self._scope is None:
            raise ValueError("only a scoped view adopts rows")
        new = self._writes_as
        sources = [new] + ([old.name] if old is not None and old.name != new else [])
        if self._scope.include_unscoped:
            sources.append(UNSCOPED)
        moved = 0
        with self._store.writer.begin() as conn:
            for source in sources[1:]:
                if source == UNSCOPED:
                    continue  # pre-scope rows stay visible through include_unscoped; only their reviews move
                moved += self._move(conn, source, new, frozenset(keep_preferences))
            moved += self._convert_reviews(conn, sources, new)
        return moved

    def _move(self, conn, source: str, target: str, keep_preferences: frozenset[str] = frozenset()) -> int:
        # Submissions of the previous release name nobody: they were the key's, so its member's.
        submissions, authors = self._table("submissions"), self._table("authors")
        named = select(authors.c.task_id).where(authors.c.scope == source)
        unnamed = conn.execute(select(submissions.c.task_id, submissions.c.submitted_at).where(
            submissions.c.scope == source, submissions.c.task_id.not_in(named))).all()
        if unnamed:
            conn.execute(self._store.upsert("authors"), [
                {"scope": source, "task_id": r.task_id, "author": self.author, "at": r.submitted_at} for r in unnamed])
        moved = 0
        batches = self._table("batches")
        moved += conn.execute(batches.update().where(batches.c.scope == source).values(scope=target)).rowcount
        for name in _MOVED:
            table = self._table(name)
            key = [c.name for c in table.primary_key.columns if c.name != "scope"]
            columns = [c for c in table.columns if c.name not in ("scope", "seq")]
            moving = table.c.scope == source
            if name == "preferences" and keep_preferences:
                moving = moving & table.c.name.not_in(keep_preferences)
            rows = [dict(r._mapping) for r in conn.execute(select(*columns).where(moving))]
            if not rows:
                continue  # adopting again finds the key's scope empty: the project's keys are not read
            have = {tuple(r) for r in conn.execute(select(*[table.c[k] for k in key]).where(table.c.scope == target))}
            fresh = [{**r, "scope": target} for r in rows if tuple(r[k] for k in key) not in have]
            if fresh:
                conn.execute(self._store.upsert(name), fresh)
            conn.execute(table.delete().where(moving))
            moved += len(fresh)
        return moved

    def _convert_reviews(self, conn, sources: list[str], target: str) -> int:
        reviews = self._table("reviews")
        rows = list(conn.execute(select(reviews).where(reviews.c.scope.in_(sources))))
        author = self.author
        statuses, ratings, comments = [], [], []
        for row in rows:
            if row.verdict in FROM_VERDICT:
                statuses.append({"scope": target, "id": uuid.uuid4().hex, "task_id": row.task_id,
                                 "status": FROM_VERDICT[row.verdict], "author": author, "previous": "pending",
                                 "at": row.updated_at})
            if row.stars:
                ratings.append({"scope": target, "task_id": row.task_id, "author": author, "stars": row.stars,
                                "at": row.updated_at})
            if (row.notes or "").strip():
                comments.append({"scope": target, "id": uuid.uuid4().hex, "task_id": row.task_id, "author": author,
                                 "body": row.notes.strip(), "created_at": row.updated_at, "timecode": None,
                                 "parent_id": None, "resolved_at": None, "resolved_by": None})
        for name, converted in (("statuses", statuses), ("ratings", ratings), ("comments", comments)):
            if converted:
                conn.execute(self._store.upsert(name), converted)
        if rows:
            conn.execute(reviews.delete().where(reviews.c.scope.in_(sources)))
        return len(rows)
