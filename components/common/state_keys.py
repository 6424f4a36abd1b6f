"""Session-state keys of what several pages share, declared once: the connection (edited in Settings,
read everywhere), sign-in, the data layer, kept copies, the hand-off to Compose. Their values are what
saved sessions, tests and browser tests know: never change one."""

from __future__ import annotations

# connection.py
CONNECTION_PREFIXES = ("settings.", "connection.")  # state of the connection, not of a page: kept
BASE_URL_KEY = "settings.base_url"
API_KEY_KEY = "settings.api_key"
TOKEN_KEY = "connection.browser_token"  # this browser's remembered-key token, once known
RESTORED_KEY = "connection.restored"  # the cookie has been looked at in this session
USER_SAVED_KEY = "connection.user_saved"  # the signed-in user has a key saved with them
IDENTITY_RETRY_KEY = "connection.identity_retry"

# catalogs.py
CATALOG_KEY = "settings.catalog"

# data.py
SESSION_BEGAN_KEY = "data._session_began"  # when this session first listed: older listings are not its

# handoff.py
PREFILL_KEY = "compose.prefill"

# keep.py
AUTO_KEEP_KEY = "tasks.auto_keep"

# browser_cookie.py
COOKIE_WRITER_KEY = "cookie.{}"  # the writer of one cookie, by its name


# signin.py
SIGN_OUT_KEY = "signin.logout"
SIGN_IN_KEY = "signin.login"
