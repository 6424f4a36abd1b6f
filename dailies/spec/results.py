"""The files of a succeeded task: their names and media types, wherever they are kept (the
service's result storage, the dashboard's archive of local copies)."""

from __future__ import annotations

VIDEO_NAME = "video.mp4"
LAST_FRAME_NAME = "last_frame.png"  # only when the request asked for `return_last_frame`
RESULT_NAMES = (VIDEO_NAME, LAST_FRAME_NAME)
MEDIA_TYPES = {VIDEO_NAME: "video/mp4", LAST_FRAME_NAME: "image/png"}
