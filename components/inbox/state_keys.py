"""The Inbox page's session-state keys, declared once. `{}` takes an item id."""

from __future__ import annotations

SHOW_KEY = "inbox.show"  # "Unread" or "All"
OPEN_KEY = "inbox.open.{}"
READ_KEY = "inbox.read.{}"
ALL_READ_KEY = "inbox.all_read"
