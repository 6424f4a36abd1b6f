"""The Tasks page's session-state keys, declared once. Their values are what saved sessions, tests and
browser tests know: never change one. A leading underscore after "tasks." marks state no widget holds."""

from __future__ import annotations

# table.py
VIEW_KEY = "tasks.view"  # the open tab: the table or the charts
TABLE_KEY = "tasks.table"
REFRESH_KEY = "tasks.refresh"
REFRESH_ASKED_KEY = "tasks._refresh_asked"  # set by the Refresh button: this run lists anew
SELECTED_KEY = "tasks.selected"  # the task id shown in the detail (None: none)
DEEP_LINK_KEY = "tasks._query_task"  # the ?task= value last seen or written
RENDERED_IDS_KEY = "tasks._rendered_ids"  # row ids as last drawn, to read a row selection by id
SIGNATURE_KEY = "tasks._signature"  # (ids and statuses, active) as of the last listing
IN_PAGE_RUN_KEY = "tasks._in_page_run"  # set by the page for the fragment's run inside it
LAST_LISTING_KEY = "tasks._last_listing"  # (query, page) as last drawn, for the idle redraws

# filters.py
STATUS_KEY = "tasks.status"
TASK_IDS_KEY = "tasks.task_ids"
MODEL_KEY = "tasks.model"
ENDPOINT_KEY = "tasks.endpoint"
TIER_KEY = "tasks.tier"
PAGE_KEY = "tasks.page"
PAGE_SIZE_KEY = "tasks.page_size"

# actions.py
FLASH_KEY = "tasks.flash"

# detail.py
DETAIL_PREFIX = "tasks.detail"  # the detail's widgets start with it (the actions' too)
