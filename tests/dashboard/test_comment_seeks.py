"""What a click on a comment's timecode asks of the player (components/common/comments.py): its time,
its frame, its range's last frame and its drawing; a seek from before frames is its seconds alone."""

from __future__ import annotations

from components.common.comments import player_seek, seek_request
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
