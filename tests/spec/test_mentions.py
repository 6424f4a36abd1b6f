"""`@name` in comments (dailies/spec/mentions.py): the longest known name, any case, ending a word;
what a half-typed mention completes to."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from dailies.spec.mentions import complete, completions, mentioned, typing_mention

PEOPLE = ["Ana", "Ana Lima", "Bo", "Chloé", "Dee (guest)"]


def test_mentions_are_the_longest_known_names_after_an_at_sign():
    assert mentioned("@Ana Lima, can you look? cc @bo", PEOPLE) == ["Ana Lima", "Bo"]
    assert mentioned("@ana: and @Ana again", PEOPLE) == ["Ana"]
    assert mentioned("@Chloé!", PEOPLE) == ["Chloé"]


def test_no_mention_without_a_whole_known_name():
    assert mentioned("@Anabel and @Bob", PEOPLE) == []  # names that only start like someone's
    assert mentioned("write to ana@studio.example", ["studio"]) == []  # an address, not a mention
    assert mentioned("no at sign, Ana", PEOPLE) == [] and mentioned("@", PEOPLE) == []
    assert mentioned("@Ana", ["", "  "]) == []


def test_a_mention_being_typed_completes_to_a_name():
    assert typing_mention("hey @an") == "an" and typing_mention("hey @") == ""
    assert typing_mention("mail ana@st") is None and typing_mention("no mention") is None
    assert typing_mention("@Ana\nnext line") is None
    assert completions("hey @an", PEOPLE) == ["Ana", "Ana Lima"]
    assert completions("hey @li", PEOPLE) == ["Ana Lima"]  # a later word of the name
    assert completions("hey @", PEOPLE)[:2] == ["Ana", "Ana Lima"]
    assert completions("done", PEOPLE) == []
    assert complete("hey @an", "Ana Lima") == "hey @Ana Lima "
    assert complete("looks good", "Bo") == "looks good @Bo "
    assert complete("", "Bo") == "@Bo "


@given(st.text(max_size=60), st.sampled_from(PEOPLE[:4]))
def test_a_completed_mention_is_found(text, name):
    assert name in mentioned(complete(text, name), PEOPLE)


def test_a_fold_that_changes_length_before_the_at_sign_moves_nothing():
    assert mentioned("Straße @Ana ok", PEOPLE) == ["Ana"]
    assert mentioned("ﬁx @Bob", PEOPLE) == []  # the ligature folds to two letters: still no Bo
    assert mentioned("İ @bo", PEOPLE) == ["Bo"]
