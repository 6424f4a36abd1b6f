"""What a click on a comment's timecode asks of the player (components/common/comments.py): its time,
its frame, its range's last frame and its drawing; a seek from before frames is its seconds alone."""

from __future__ import annotations

from components.common.comments import MARK_LABEL_CHARS, MAX_MARKS, player_seek, seek_request, timeline_marks
from dailies.journal import Comment
from dailies.spec.drawings import parse_drawing


def test_a_comment_on_a_range_with_a_drawing_asks_for_all_of_it():
    shapes, _ = parse_drawing([{"kind": "rect", "x1": 0.1, "y1": 0.1, "x2": 0.2, "y2": 0.2}])
    comment = Comment("c1", "cgt-1", "Ana", "hold here", 1.0, timecode=1.56, frame=37, out_frame=40, drawing=shapes)
    asked = player_seek(seek_request(comment))
    assert asked == {"seek_to": 1.56, "seek_frame": 37, "show_out_frame": 40,
                     "show_drawing": [{"kind": "rect", "x1": 0.1, "y1": 0.1, "x2": 0.2, "y2": 0.2,
                                       "colour": "#ff3b30", "width": 0.006}]}


def test_a_comment_from_before_frames_asks_for_its_time_only():
    comment = Comment("c2", "cgt-1", "Bo", "old note", 1.0, timecode=2.5)
    assert player_seek(seek_request(comment)) == {"seek_to": 2.5, "seek_frame": None, "show_drawing": None,
                                                  "show_out_frame": None}
    assert player_seek(2.5) == {"seek_to": 2.5} and player_seek(None) == {"seek_to": None}


def test_every_pinned_comment_is_a_mark_on_the_timeline():
    shapes, _ = parse_drawing([{"kind": "rect", "x1": 0.1, "y1": 0.1, "x2": 0.2, "y2": 0.2}])
    thread = [
        Comment("c1", "cgt-1", "Ana", "hold\nhere", 1.0, timecode=1.56, frame=37, out_frame=40, drawing=shapes),
        Comment("c2", "cgt-1", "Bo", "old note", 2.0, timecode=2.5),  # from before frames: its time's frame
        Comment("c3", "cgt-1", "Cy", "in general", 3.0),  # pinned to nothing: no mark
        Comment("c4", "cgt-1", "Di", "x" * 200, 4.0, timecode=0.0, frame=0, resolved_at=5.0, resolved_by="Ana"),
    ]
    marks = timeline_marks(thread, 24)
    assert marks[:2] == [
        {"in": 37, "out": 40, "drawn": True, "resolved": False, "label": "Ana: hold here"},
        {"in": 60, "out": None, "drawn": False, "resolved": False, "label": "Bo: old note"}]
    assert marks[2]["in"] == 0 and marks[2]["resolved"] is True
    assert len(marks[2]["label"]) == len("Di: ") + MARK_LABEL_CHARS and marks[2]["label"].endswith("…")
    assert len(marks) == 3


def test_a_long_thread_gives_at_most_max_marks():
    thread = [Comment(f"c{i}", "cgt-1", "Ana", "n", float(i), timecode=0.5, frame=12) for i in range(MAX_MARKS + 5)]
    assert len(timeline_marks(thread, 24)) == MAX_MARKS
