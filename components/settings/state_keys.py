"""The Settings page's own session-state keys, declared once (the connection's, which every page reads,
are in `components.common.state_keys`). Their values are what tests and browser tests know: never
change one."""

from __future__ import annotations

FORM_KEY = "settings.form"
BASE_URL_FIELD = "settings.form.base_url"
API_KEY_FIELD = "settings.form.api_key"
SHOWN_KEY = "settings.form.shown"  # the address the Base URL field was last filled with
OUTCOME_KEY = "settings.form.outcome"  # what Save or Forget did, said once on the next run
SAVE_KEY = "settings.save"
FORGET_KEY = "settings.forget"
TEST_KEY = "settings.test"
DISPLAY_NAME_KEY = "settings.display_name"
# Notifications (components/settings/notifications.py)
NOTIFY_FORM_KEY = "settings.notify.form"
NOTIFY_FOR_KEY = "settings.notify.for"
NOTIFY_KIND_KEY = "settings.notify.kind"
NOTIFY_ADDRESS_KEY = "settings.notify.address"
NOTIFY_EVENTS_KEY = "settings.notify.events"
NOTIFY_OUTCOME_KEY = "settings.notify.outcome"
NOTIFY_REMOVE_KEY = "settings.notify.remove.{}"
NOTIFY_ADD_KEY = "settings.notify.add"
