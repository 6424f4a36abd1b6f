"""A comment's drawing on its frame, as a picture: the frame decoded from the version's kept copy and
the shapes drawn over it with Pillow, for the review report's PDF (the browser draws the same shapes
on a canvas over the player: components/common/frame_ink.py).

The copy came from an upstream or a bucket: it is opened only through `spec.media.open_untrusted`,
and decoding stops at the frame asked for or after MAX_DECODED_FRAMES.
"""

from __future__ import annotations

import io
import math
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .spec.drawings import Shape

# A day of frames at 120 fps is the journal's bound on a frame number; a clip ends long before. This
# bounds the work of one picture whatever a stored frame number says.
MAX_DECODED_FRAMES = 120 * 60
WIDTH_PX = 640  # the picture's width in the report (the frame is scaled down to it)


def frame_picture(source: Path | bytes, frame: int) -> Any | None:
    """The frame numbered `frame` (from 0, in presentation order) of a video, as a Pillow image; None
    when the video cannot be read or ends before it."""
    from .spec.media import open_untrusted

    try:
        with open_untrusted(source, "video") as container:
            stream = container.streams.video[0]
            rate = float(stream.average_rate or stream.guessed_rate or 24)
            for index, decoded in enumerate(container.decode(stream)):
                at = decoded.pts * decoded.time_base if decoded.pts is not None and decoded.time_base else None
                number = index if at is None else round(float(at) * rate)
                if number >= frame:
                    return decoded.to_image()
                if index >= MAX_DECODED_FRAMES:
                    return None
    except Exception:  # not a video PyAV can decode (its errors differ between versions)
        return None
    return None


def draw(image: Any, shapes: Sequence[Shape]) -> Any:
    """`image` with `shapes` drawn over it (coordinates 0 to 1 of the picture), as the player draws them."""
    from PIL import ImageDraw

    from .generator.typography import load_font

    picture = image.convert("RGB")
    pen = ImageDraw.Draw(picture)
    w, h = picture.size

    def xy(x: float, y: float) -> tuple[float, float]:
        return x * w, y * h

    for s in shapes:
        width = max(2, round(getattr(s, "width", 0.006) * h))
        if s.kind == "pen":
            points = [xy(x, y) for x, y in s.points]
            if len(points) == 1:
                points.append((points[0][0] + 1, points[0][1]))
            pen.line(points, fill=s.colour, width=width, joint="curve")
        elif s.kind in ("rect", "ellipse"):
            box = [xy(min(s.x1, s.x2), min(s.y1, s.y2)), xy(max(s.x1, s.x2), max(s.y1, s.y2))]
            (pen.rectangle if s.kind == "rect" else pen.ellipse)(box, outline=s.colour, width=width)
        elif s.kind == "arrow":
            (x1, y1), (x2, y2) = xy(s.x1, s.y1), xy(s.x2, s.y2)
            pen.line([(x1, y1), (x2, y2)], fill=s.colour, width=width)
            angle, head = math.atan2(y2 - y1, x2 - x1), max(8.0, 0.04 * h)
            for side in (-0.45, 0.45):
                pen.line([(x2, y2), (x2 - head * math.cos(angle + side), y2 - head * math.sin(angle + side))],
                         fill=s.colour, width=width)
        elif s.kind == "text":
            pen.text(xy(s.x, s.y), s.text, fill=s.colour, font=load_font(max(12, round(0.06 * h))))
    return picture


def drawn_frame(source: Path | bytes, frame: int, shapes: Sequence[Shape], width: int = WIDTH_PX) -> bytes | None:
    """A JPEG of the frame with the drawing over it, `width` pixels wide at most; None when the frame
    cannot be read."""
    image = frame_picture(source, frame)
    if image is None:
        return None
    picture = draw(image, shapes)
    if picture.width > width:
        picture = picture.resize((width, max(1, round(picture.height * width / picture.width))))
    out = io.BytesIO()
    picture.save(out, "JPEG", quality=85)
    return out.getvalue()
