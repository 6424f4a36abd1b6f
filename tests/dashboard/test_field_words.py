"""Compose names a problem by the field a person filled, not by its JSON path (issue 37)."""

from __future__ import annotations

from components.compose.field_words import in_words, slot_label
from components.compose.state_keys import FIRST_SLOT, LAST_SLOT, REF_IMAGE_SLOT
from dailies.spec.problems import Problem

PATHS = {"prompt": "content[0]", FIRST_SLOT: "content[1]", LAST_SLOT: "content[2]",
         REF_IMAGE_SLOT.format(0): "content[3]"}


def test_an_input_is_named_by_its_slot():
    assert in_words(Problem("content[1].image_url", "is 30 px wide; at least 300"), PATHS) == \
        "First frame: is 30 px wide; at least 300"
    assert in_words(Problem("content[3].image_url.url", "must not be empty"), PATHS) == \
        "Reference image 1: must not be empty"
    assert slot_label(REF_IMAGE_SLOT.format(8)) == "Reference image 9"


def test_a_field_is_named_by_its_label_and_an_unknown_path_stays_as_it_is():
    assert in_words(Problem("execution_expires_after", "at most 72 hours"), PATHS) == "Give up after: at most 72 hours"
    assert in_words(Problem("content[0].text", "too long"), PATHS) == "Prompt: too long"
    assert in_words(Problem("content", "at most 9 images"), PATHS) == "Inputs: at most 9 images"
    assert in_words(Problem("something_new", "odd"), PATHS) == "something_new: odd"
    assert in_words(Problem("", "the body is empty"), PATHS) == "the body is empty"
