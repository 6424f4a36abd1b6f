"""The Settings page: its session-state keys. The connection it edits, who is using it, the catalogs and
sign-in are in `components.common`, which every page reads."""
