"""Drawings on a frame (dailies/spec/drawings.py): the shapes a player draws are kept, whatever is
not one is refused with the field named, and nothing unbounded is parsed."""

from __future__ import annotations

import json

import pytest

from dailies.spec.drawings import MAX_DRAWING_BYTES, MAX_POINTS, MAX_SHAPES, drawing_json, parse_drawing

EVERY_KIND = [
    {"kind": "pen", "points": [[0.1, 0.2], [0.15, 0.25], [0.2, 0.2]], "colour": "#ffcc00", "width": 0.004},
    {"kind": "arrow", "x1": 0.9, "y1": 0.9, "x2": 0.6, "y2": 0.55},
    {"kind": "rect", "x1": 0.2, "y1": 0.2, "x2": 0.4, "y2": 0.5, "colour": "#34c759"},
    {"kind": "ellipse", "x1": 0, "y1": 0, "x2": 1, "y2": 1, "colour": "#0a84ff"},
    {"kind": "text", "x": 0.5, "y": 0.1, "text": "too dark here", "colour": "#ffffff"},
]


def test_every_kind_of_shape_round_trips_through_its_stored_json():
    shapes, problems = parse_drawing(json.dumps(EVERY_KIND))
    assert problems == [] and [s.kind for s in shapes] == ["pen", "arrow", "rect", "ellipse", "text"]
    again, problems = parse_drawing(drawing_json(shapes))
    assert problems == [] and again == shapes
    assert shapes[1].colour == "#ff3b30" and shapes[1].width == 0.006  # the defaults: red, a thin line


@pytest.mark.parametrize(("drawing", "where", "says"), [
    ([{"kind": "pen", "points": [[0.1, 1.2]]}], "drawing[0].points[0][1]", "less than or equal to 1"),
    ([{"kind": "rect", "x1": 0, "y1": 0, "x2": 1, "y2": True}], "drawing[0].y2", "valid number"),
    ([{"kind": "rect", "x1": 0, "y1": 0, "x2": "1", "y2": 1}], "drawing[0].x2", "valid number"),
    ([{"kind": "arrow", "x1": 0, "y1": 0, "x2": 1, "y2": float("nan")}], "drawing[0].y2", "finite"),
    ([{"kind": "blob"}], "drawing[0]", "'blob'"),
    ([{"kind": "text", "x": 0.5, "y": 0.5, "text": ""}], "drawing[0].text", "at least 1"),
    ([{"kind": "text", "x": 0.5, "y": 0.5, "text": "x", "colour": "pink"}], "drawing[0].colour", "#ff3b30"),
    ([{"kind": "pen", "points": [[0.1, 0.2]], "onclick": "x"}], "drawing[0].onclick", "not permitted"),
    ([{"kind": "pen", "points": [[0.1, 0.2]], "width": 0.5}], "drawing[0].width", "0.05"),
    ([{"kind": "pen", "points": [[0.1, 0.2, 0.3]]}], "drawing[0].points[0]", "at most 2"),
    ({"kind": "pen"}, "drawing", "valid list"),
])
def test_what_is_not_a_shape_is_refused_naming_its_field(drawing, where, says):
    shapes, problems = parse_drawing(drawing)
    assert shapes is None and problems
    assert problems[0].path == where and says in problems[0].message, problems


def test_sizes_are_bounded_before_and_while_parsing():
    _, problems = parse_drawing("[" + " " * MAX_DRAWING_BYTES + "]")
    assert problems[0].path == "drawing" and f"{MAX_DRAWING_BYTES:,} bytes" in problems[0].message
    _, problems = parse_drawing([{"kind": "text", "x": 0, "y": 0, "text": "x"}] * (MAX_SHAPES + 1))
    assert problems[0].path == "drawing" and str(MAX_SHAPES) in problems[0].message
    _, problems = parse_drawing([{"kind": "pen", "points": [[0.5, 0.5]] * (MAX_POINTS + 1)}])
    assert problems[0].path == "drawing[0].points" and str(MAX_POINTS) in problems[0].message
    _, problems = parse_drawing("[" * 50_000)
    assert problems[0].message == "a drawing is a JSON list of shapes"
    assert len(parse_drawing([{"kind": "blob"}] * 100)[1]) <= 5  # a few problems named, not a hundred


def test_no_drawing_is_none():
    assert parse_drawing(None) == (None, []) and parse_drawing("[]") == (None, []) and drawing_json(None) is None
