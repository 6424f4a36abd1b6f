"""A drawing on a frame, saved with a review comment: pen strokes, arrows, rectangles, ellipses and
text, in a few colours, each point relative to the picture (0 to 1 from the left and from the top, as
Frame.io stores annotations), so it scales with any player and any export size.

Pure and bounded: a drawing comes from a browser (the player's canvas) or a guest, so it is parsed
from at most MAX_DRAWING_BYTES of JSON, into at most MAX_SHAPES shapes of at most MAX_POINTS points,
and every problem names its field (`drawing[3].points[12]`).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, TypeAdapter, ValidationError

from .problems import Problem, join_path

MAX_DRAWING_BYTES = 64_000
MAX_SHAPES = 200
MAX_POINTS = 2_000
MAX_TEXT_CHARS = 200
# The palette the player offers: red, yellow, green, blue, white, black.
COLOURS = ("#ff3b30", "#ffcc00", "#34c759", "#0a84ff", "#ffffff", "#000000")
Colour = Literal["#ff3b30", "#ffcc00", "#34c759", "#0a84ff", "#ffffff", "#000000"]

# A coordinate on the picture: 0 is the left (or top) edge, 1 the right (or bottom) one.
Unit = Annotated[float, Field(ge=0, le=1, strict=True, allow_inf_nan=False)]
# A point as [x, y] (JSON has no tuples).
Point = Annotated[list[Unit], Field(min_length=2, max_length=2)]
# A line's width as a share of the picture's height (0.004 is about 3 px on a 720p frame).
Width = Annotated[float, Field(gt=0, le=0.05, strict=True, allow_inf_nan=False)]


class _Shape(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True)
    colour: Colour = "#ff3b30"


class Pen(_Shape):
    kind: Literal["pen"]
    points: Annotated[list[Point], Field(min_length=1, max_length=MAX_POINTS)]
    width: Width = 0.006


class Box(_Shape):
    """An arrow (from x1,y1 to its head at x2,y2), a rectangle or an ellipse (in the box of the two corners)."""

    kind: Literal["arrow", "rect", "ellipse"]
    x1: Unit
    y1: Unit
    x2: Unit
    y2: Unit
    width: Width = 0.006


class Text(_Shape):
    kind: Literal["text"]
    x: Unit
    y: Unit
    text: Annotated[str, Field(min_length=1, max_length=MAX_TEXT_CHARS)]


Shape = Annotated[Pen | Box | Text, Field(discriminator="kind")]
_DRAWING = TypeAdapter(Annotated[list[Shape], Field(max_length=MAX_SHAPES)])


Drawing = tuple[Shape, ...]


def parse_drawing(raw: str | bytes | list[Any] | None, where: str = "drawing") -> tuple[Drawing | None, list[Problem]]:
    """The shapes of a drawing given as JSON text (or already a list), or the problems with it. None and
    an empty list are no drawing."""
    if raw is None:
        return None, []
    if isinstance(raw, str | bytes):
        if len(raw) > MAX_DRAWING_BYTES:
            return None, [Problem(where, f"a drawing is at most {MAX_DRAWING_BYTES:,} bytes of JSON")]
        try:
            raw = json.loads(raw)
        except (ValueError, RecursionError):
            return None, [Problem(where, "a drawing is a JSON list of shapes")]
    try:
        shapes = _DRAWING.validate_python(raw)
    except ValidationError as exc:
        return None, [Problem(join_path((where, *_field_of(error["loc"]))), error["msg"])
                      for error in exc.errors()[:5]]
    return (tuple(shapes) or None), []


_KINDS = ("pen", "arrow", "rect", "ellipse", "text")


def _field_of(loc: tuple[str | int, ...]) -> tuple[str | int, ...]:
    """A pydantic location as the field's path: the shape's tag ('pen', after its index) is dropped."""
    return loc[:1] + loc[2:] if len(loc) >= 2 and loc[1] in _KINDS else loc


def drawing_json(shapes: Drawing | None) -> str | None:
    """The stored form of a drawing (compact JSON), None for none."""
    if not shapes:
        return None
    return json.dumps([shape.model_dump() for shape in shapes], separators=(",", ":"))
