"""Variations are named by what differs between them, never by the 40 characters they share."""

from __future__ import annotations

from components.common.shot_labels import distinct_labels, shorten

BOAT = "A paper boat drifting down a rain-soaked street at dusk, neon reflections"


def test_variations_of_one_line_are_named_by_that_line():
    prompts = [f"{BOAT}, camera {move}" for move in ("pushes in slowly", "orbits left", "stays still")]
    assert distinct_labels(prompts) == ["… pushes in slowly", "… orbits left", "… stays still"]


def test_a_varied_word_in_the_middle_keeps_an_ellipsis_on_both_sides():
    prompts = [f"A {colour} paper boat drifting down the street" for colour in ("red", "blue")]
    assert distinct_labels(prompts) == ["… red …", "… blue …"]


def test_a_prompt_that_is_only_the_shared_words_says_so():
    assert distinct_labels([BOAT, BOAT + " at night"]) == ["(the shared words only)", "… at night"]
    # A word that changed (a comma added) is part of what differs.
    assert distinct_labels([BOAT, BOAT + ", at night"]) == ["… reflections", "… reflections, at night"]


def test_the_same_prompt_is_told_apart_by_seed_then_by_place():
    assert distinct_labels([BOAT, BOAT], seeds=[7, 8]) == [shorten(BOAT) + " · seed 7", shorten(BOAT) + " · seed 8"]
    assert distinct_labels([BOAT, BOAT], seeds=[-1, -1]) == [shorten(BOAT) + " · #1", shorten(BOAT) + " · #2"]


def test_one_version_alone_is_its_prompt_shortened():
    assert distinct_labels([BOAT]) == [shorten(BOAT)]
    assert len(shorten(BOAT)) == 40 and shorten(BOAT).endswith("…")
    assert distinct_labels([""]) == ["(no prompt)"]


def test_every_label_of_a_batch_differs():
    prompts = [BOAT, BOAT, BOAT + " wide", "Something else entirely"]
    labels = distinct_labels(prompts, seeds=[1, 1, 2, 3])
    assert len(set(labels)) == len(labels)


def test_a_picker_of_several_ideas_names_each_and_tells_alike_ones_apart():
    from components.common.shot_labels import labels_among_many

    prompts = [f"{BOAT}, camera pushes in", "A lantern over the river", f"{BOAT}, camera orbits"]
    labels = labels_among_many(prompts)
    assert labels[1] == "A lantern over the river"
    assert labels[0].endswith("… pushes in") and labels[2].endswith("… orbits")
    assert labels[0].startswith("A paper boat") and len(set(labels)) == 3


def test_the_task_tables_rows_of_variations_say_what_differs():
    from datetime import UTC

    from components.tasks.rows import table_rows
    from dailies.spec.models import TaskRecord

    records = [TaskRecord.model_validate({"id": f"cgt-2026010112000{i}-aaaa{i}", "model": "m", "status": "succeeded",
                                          "created_at": 1, "updated_at": 1}) for i in range(3)]
    stored = {r.id: type("Stored", (), {"prompt": prompt})() for r, prompt in zip(
        records, [f"{BOAT}, camera pushes in", f"{BOAT}, camera orbits", "A lantern"], strict=True)}
    frame = table_rows(records, {}, set(), 1.0, UTC, stored=stored)
    assert list(frame["prompt"])[2] == "A lantern"
    assert list(frame["prompt"])[0].endswith("· … pushes in") and list(frame["prompt"])[1].endswith("· … orbits")
