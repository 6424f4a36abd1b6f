"""One person, one name across a rename: what a view's author wrote (statuses, stars, comments,
submissions, shares) is moved to their new name, in the view's own scope, in one transaction."""

from __future__ import annotations

from sqlalchemy import select

from .view import View

# Each table that names a person, and the columns that do.
_NAMED = {"statuses": ("author",), "comments": ("author", "resolved_by"), "authors": ("author",),
          "shares": ("created_by",)}


class AuthorsMixin(View):
    def rename_author(self, old: str, new: str) -> None:
        """Everything `old` wrote in this view's scope now reads as `new`'s. Stars are one per person and
        task: where both names rated a task, the later rating stays."""
        if not old or not new or old == new or self._scope is None:
            return
        scope = self._writes_as
        with self._store.writer.begin() as conn:
            ratings = self._table("ratings")
            theirs = {row.task_id: row for row in conn.execute(
                select(ratings).where(ratings.c.scope == scope, ratings.c.author.in_((old, new))))
                if row.author == new}
            for row in conn.execute(select(ratings).where(ratings.c.scope == scope, ratings.c.author == old)).all():
                kept = theirs.get(row.task_id)
                if kept is not None and kept.at >= row.at:
                    conn.execute(ratings.delete().where(ratings.c.scope == scope, ratings.c.task_id == row.task_id,
                                                        ratings.c.author == old))
                    continue
                if kept is not None:
                    conn.execute(ratings.delete().where(ratings.c.scope == scope, ratings.c.task_id == row.task_id,
                                                        ratings.c.author == new))
                conn.execute(ratings.update().where(ratings.c.scope == scope, ratings.c.task_id == row.task_id,
                                                    ratings.c.author == old).values(author=new))
            # What each read of the inbox: one row per person and item, so where both names read an
            # item (both marked all read, say) the later read stays.
            reads = self._table("inbox_reads")
            theirs_read = {row.item_id: row.read_at for row in conn.execute(
                select(reads.c.item_id, reads.c.read_at).where(reads.c.scope == scope, reads.c.person == new))}
            for row in conn.execute(select(reads.c.item_id, reads.c.read_at).where(
                    reads.c.scope == scope, reads.c.person == old)).all():
                mine = reads.c.scope == scope, reads.c.person == old, reads.c.item_id == row.item_id
                if row.item_id in theirs_read:
                    conn.execute(reads.delete().where(*mine))
                    if row.read_at > theirs_read[row.item_id]:
                        conn.execute(reads.update().where(reads.c.scope == scope, reads.c.person == new,
                                                          reads.c.item_id == row.item_id).values(read_at=row.read_at))
                else:
                    conn.execute(reads.update().where(*mine).values(person=new))
            for name, columns in _NAMED.items():
                table = self._table(name)
                for column in columns:
                    conn.execute(table.update().where(table.c.scope == scope, table.c[column] == old)
                                 .values({column: new}))
