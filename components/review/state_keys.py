"""The Review page's session-state keys, declared once (the reel maker's start with "reel.", the share
panel's with "share."). Their values are what saved sessions, tests and browser tests know: never change
one. `{}` takes a task, shot or comment id."""

from __future__ import annotations

# panel.py
INBOX_KEY = "review.inbox"
MEMBER_KEY = "review.member"
BATCH_KEY = "review.batch"
PAGE_KEY = "review.page"
REFRESH_KEY = "review.refresh"
REEL_KEY = "review.reel_open"
REPORT_KEY = "review.report_open"
SHARE_KEY = "review.share_open"
FRESH_KEY = "review._fresh"  # the Refresh button was pressed: this run lists anew
PER_PAGE_KEY = "review.per_page"

# card.py
COMPARE_KEY = "review.compare"
# Set by a review widget's callback when the page must follow the change, not only the card.
PAGE_FOLLOWS_KEY = "review._page_follows"
PAGE_RUN_KEY = "review._page_run"  # a new value at every run of the whole page (review_panel.render)
FILTERED_KEY = "review._filtered"  # the page shows a filtered selection: a status change may move a card

# comments.py: per task, the timecode the next comment is pinned to, and the comment being answered.
PINNED_KEY = "review.comment_at.{}"
PINNED_FRAME_KEY = "review.comment_frame.{}"  # the frame shown when "Comment at" was pressed
PINNED_DRAWING_KEY = "review.comment_drawing.{}"  # what was drawn on that frame
PINNED_OUT_KEY = "review.comment_out_frame.{}"  # the last frame of the range marked, when one was
POSITION_KEY = "review.position.{}"  # where the version's player was last paused or sought to
LINKED_FRAME_KEY = "review.linked_frame"  # (task id, frame) of the address the one-shot view last went to
KEYS_KEY = "review.keys"  # the one-shot view's keyboard row; its buttons' keys start with it
REPLYING_KEY = "review.reply_to.{}"
SEEK_KEY = "review.seek.{}"  # the position the card's player is asked to go to

# reel_maker.py
PICKED_KEY = "reel.picked"
ORDER_KEY = "reel.order"
SLATES_KEY = "reel.slates"
BURN_IN_KEY = "reel.burn_in"
SIZE_KEY = "reel.size"
FPS_KEY = "reel.fps"
LAST_KEY = "reel.last"

# share_panel.py
LINK_KEY = "share.created_link"  # the link just made, shown once

# card.py
STATUS_KEY = "review.status.{}"  # per task
STARS_KEY = "review.stars.{}"
PLAYER_KEY = "review.player.{}"
VERSION_KEY = "review.version.{}"  # per shot
COMPARE_PREV_KEY = "review.compare_prev.{}"
OPEN_KEY = "review.open.{}"
CARD_RUN_KEY = "review._card_run.{}"  # per shot: the page run its card last drew in

# comments.py
COMMENT_KEY = "review.comment.{}"  # per task
COMMENT_PROBLEM_KEY = "review.comment_problem.{}"
POST_KEY = "review.post.{}"
COMMENT_OPEN_KEY = "review.comment_open.{}"  # the "💬 Comment" popover is open (the player's "Comment at" opens it)
UNPIN_KEY = "review.unpin.{}"
NO_REPLY_KEY = "review.noreply.{}"
REPLY_KEY = "review.reply.{}"  # per comment
RESOLVE_KEY = "review.resolve.{}"
TIMECODE_KEY = "review.tc.{}"

# panel.py
COMPARE_BATCH_KEY = "review.compare_batch"
SHARE_PANEL_KEY = "review.share"
BACK_KEY = "review.back"
SYNC_PREFIX = "review.sync."  # then the compared task ids

# reel_maker.py
REEL_DOWNLOAD_KEY = "reel.download.{}"  # per reel file
REEL_SHARE_KEY = "reel.share.{}"
REEL_SHARE_PANEL_KEY = "reel.share_panel.{}"
MAKE_KEY = "reel.make"
EARLIER_KEY = "reel.earlier"
HANDOFF_ORDER_KEY = "reel.handoff"  # the reel's order as an OTIO timeline
PRESENT_LIVE_KEY = "reel.present_live"  # a live session on the reel's order
PRESENT_OUTCOME_KEY = "reel.present_outcome"  # why it did not start, or where it is

# report_download.py
REPORT_DOWNLOAD_KEY = "review.report"  # the report's buttons start with it

# handoff_download.py
HANDOFF_KEY = "review.handoff_open"
HANDOFF_FORMAT_KEY = "review.handoff_format"  # the download button's key starts with it

# dashboard/views/review.py: a name for a key nobody named, asked where stars and comments are signed
NAME_KEY = "review.your_name"
PER_ROW_KEY = "review.per_row"  # cards per row (1 to 3)
LEFT_KEY = "review.left.{}"  # (new status, previous) of a version whose status took it out of the filtered view
UNDO_KEY = "review.undo.{}"
