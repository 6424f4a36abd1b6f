"""What every part of the journal stands on: a view's store and scope, and the reads and writes its
parts are made of (a view reads and writes its own scope's rows; the unscoped view, every scope's)."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, Self, TypeVar

from sqlalchemy import ColumnElement, Table, select, true

from .schema import UNSCOPED, Store
from .scope import Scope

DATABASE_ENV = "DAILIES_DATABASE_URL"
STORAGE_ENV = "DAILIES_STORAGE"

T = TypeVar("T")
SOMEONE = "Someone"  # the author of what is written through a view that knows no name


class View:
    """The base of `Journal` (dailies.journal), which adds the parts (submissions, statuses, ...)."""

    def __init__(self, path: Path, *, database_url: str | None = None, storage: str | None = None,
                 _store: Store | None = None, _scope: Scope | None = None) -> None:
        if _store is None:
            env: Mapping[str, str] = os.environ
            _store = Store(Path(path), env.get(DATABASE_ENV, "") if database_url is None else database_url,
                           env.get(STORAGE_ENV, "") if storage is None else storage)
        self._store = _store
        self._scope = _scope
        self.path = self._store.path

    def scoped(self, scope: Scope) -> Self:
        """The view of one connection: its rows, its files; the engine is shared."""
        return type(self)(self.path, _store=self._store, _scope=scope)

    @property
    def scope(self) -> Scope | None:
        return self._scope

    @property
    def shared(self) -> bool:
        """Whether the rows are in a database other dashboards may share (not this machine's file)."""
        return self._store.postgres

    def close(self) -> None:
        """Close the database's connections, for every view of it (the views share them)."""
        self._store.engine.dispose()

    @property
    def author(self) -> str:
        """Who writes through this view (Scope.author): the name on what they submit, set and say."""
        return (self._scope.author if self._scope is not None else "") or SOMEONE

    @property
    def _writes_as(self) -> str:
        return self._scope.name if self._scope is not None else UNSCOPED

    @property
    def _folder(self) -> str | None:
        return self._scope.folder if self._scope is not None else None

    def _table(self, name: str) -> Table:
        return self._store.tables[name]

    def _read(self, statement) -> list[Any]:
        with self._store.engine.connect() as conn:
            return list(conn.execute(statement))

    def _write(self, name: str, rows: list[dict[str, Any]]) -> None:
        """Insert or replace whole rows, in one transaction (one commit, not one per row)."""
        key = [c.name for c in self._table(name).primary_key.columns]
        # One statement may not touch one row twice (PostgreSQL's ON CONFLICT): the last of a key wins.
        unique = list({tuple(row[k] for k in key): row for row in rows}.values())
        if unique:
            with self._store.writer.begin() as conn:
                conn.execute(self._store.upsert(name), unique)

    def _visible(self, table: Table) -> ColumnElement[bool]:
        """The condition that keeps this view's rows."""
        if self._scope is None:
            return true()
        if self._scope.include_unscoped:
            return table.c.scope.in_([self._scope.name, UNSCOPED])
        return table.c.scope == self._scope.name

    def _preferred(self, name: str, *where: ColumnElement[bool], columns: Iterable[Any] = (),
                   limit: int | None = None) -> list[Any]:
        """This view's rows of a table that meet `where`, in order of preference: where one task has
        rows in several visible scopes, a scoped row before an old one, then the newest."""
        table = self._table(name)
        statement = (select(*columns) if columns else select(table)).where(self._visible(table), *where)
        statement = statement.order_by(table.c.scope == UNSCOPED, self._store.written(table).desc()).limit(limit)
        return self._read(statement)

    def _by_task(self, name: str, task_ids: Iterable[str], make: Callable[[Any], T]) -> dict[str, T]:
        """The preferred row of each of these tasks in a table, made into `make`'s objects."""
        ids = list(dict.fromkeys(task_ids))
        if not ids:
            return {}
        out: dict[str, T] = {}
        for row in self._preferred(name, self._table(name).c.task_id.in_(ids)):
            if row.task_id not in out:
                out[row.task_id] = make(row)
        return out
