"""The Live page's own session-state keys, declared once. Their values are what tests and browser tests
know: never change one."""

from __future__ import annotations

PICK_KEY = "live.pick"
TITLE_KEY = "live.title"
START_KEY = "live.start"
CONTROL_KEY = "live.control.{}"  # the control token this browser session holds for a session it presents
VERSION_KEY = "live.version.{}"  # the version the presenter shows
HANDOVER_KEY = "live.handover.{}"
HANDOVER_BUTTON_KEY = "live.handover_button.{}"
END_KEY = "live.end.{}"
PLAYER_KEY = "live.player.{}"
PROBLEM_KEY = "live.problem"
