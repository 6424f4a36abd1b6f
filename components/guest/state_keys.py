"""The guest page's session-state keys, declared once. Their values are what saved sessions, tests and
browser tests know: never change one. `{}` takes a task id."""

from __future__ import annotations

PREFIX = "guest."  # every key of the page: a new share in the address drops them all
SHARE_KEY = "guest.share"  # the share this session holds (its token's hash)
NAME_KEY = "guest.name"
UNLOCKED_KEY = "guest.unlocked"  # {share id: True} once this session gave the passphrase
PASSPHRASE_FORM_KEY = "guest.passphrase_form"
PASSPHRASE_KEY = "guest.passphrase"
# Per task: the timecode the next comment is pinned to, and the position the player is asked to go to.
PINNED_KEY = "guest.comment_at.{}"
PINNED_FRAME_KEY = "guest.comment_frame.{}"
PINNED_DRAWING_KEY = "guest.comment_drawing.{}"  # what was drawn on that frame
PINNED_OUT_KEY = "guest.comment_out_frame.{}"  # the last frame of the range marked, when one was
SEEK_KEY = "guest.seek.{}"
COMMENT_KEY = "guest.comment.{}"
ERROR_KEY = "guest.error.{}"
STATUS_KEY = "guest.status.{}"
PLAYER_KEY = "guest.player.{}"
POST_KEY = "guest.post.{}"
UNPIN_KEY = "guest.unpin.{}"
TIMECODE_KEY = "guest.tc.{}"  # per comment
