"""Naming yourself keeps you one person (issue 37): after "Your name" is set, the stars, statuses and
comments made before are the renamed person's, and a new rating replaces theirs instead of counting
as a second person's."""

from __future__ import annotations

import pytest

from components.common import identity
from dailies.journal import Journal, Scope
from dailies.journal.statuses import APPROVED
from dailies.spec.models import Identity

BASE = "http://127.0.0.1:8000/api/v3"
KEY = "dk-unnamed-member-key-0001"
OTHER = "dk-another-members-key-02"
TASK, LATER = "cgt-20260101120000-aaaaa", "cgt-20260101120000-bbbbb"


@pytest.fixture
def shared(tmp_path):
    journal = Journal(tmp_path / "journal.sqlite3", database_url="", storage="")
    yield journal
    journal.close()


def view(shared: Journal, key: str, who: Identity | None) -> Journal:
    return identity.journal_for(shared, Scope.of(BASE, key), who)


@pytest.mark.parametrize("who", [Identity(project="studio", member=None), None],
                         ids=["a Dailies project, the key unnamed", "another service, the key's own journal"])
def test_a_rename_keeps_stars_statuses_and_comments_with_the_person(shared, who):
    before = view(shared, KEY, who)
    tag = before.author
    assert tag.startswith("key ")
    before.rate(TASK, 5, at=1.0)
    before.rate(LATER, 2, at=1.0)
    before.set_status(TASK, APPROVED)
    comment = before.add_comment(TASK, "lovely light")
    someone_else = view(shared, OTHER, who)
    someone_else.rate(TASK, 1)

    identity.rename(shared, Scope.of(BASE, KEY), who, "Maya")
    after = view(shared, KEY, who)
    assert after.author != tag and after.author.startswith("Maya")
    stars = after.ratings([TASK, LATER])
    assert stars[TASK] == {after.author: 5} | ({someone_else.author: 1} if who is not None else {})
    after.rate(LATER, 4)  # replaces Maya's earlier 2: one person, one rating
    assert after.ratings([LATER])[LATER] == {after.author: 4}
    assert after.statuses([TASK])[TASK].author == after.author
    assert [c.author for c in after.comments([TASK])[TASK]] == [after.author]
    assert comment.id in {c.id for c in after.comments([TASK])[TASK]}


def test_a_rating_under_the_new_name_is_kept_over_an_older_one_under_the_former(shared):
    scope = Scope.of(BASE, KEY, author="key 1234abcd")
    journal = shared.scoped(scope)
    journal.rate(TASK, 2, at=1.0)
    shared.scoped(Scope.of(BASE, KEY, author="Maya")).rate(TASK, 5, at=2.0)
    journal.rename_author("key 1234abcd", "Maya")
    assert journal.ratings([TASK])[TASK] == {"Maya": 5}
