"""The journal tests' journal: on the test's backend (a SQLite file; PostgreSQL with the bucket)."""

from __future__ import annotations

import pytest

from dailies.journal import Journal


@pytest.fixture
def journal(backend, tmp_path):
    if backend.team:
        opened = Journal(tmp_path / "dashboard" / "journal.sqlite3", database_url=backend.database_url,
                         storage=backend.storage)
    else:
        opened = Journal(tmp_path / "dashboard" / "journal.sqlite3", database_url="", storage="")
    yield opened
    opened.close()
