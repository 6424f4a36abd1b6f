"""The names the dashboard's share panel (components/share_panel.py) imports from here; the command
itself is dailies/cli/share.py. Kept until components/ imports them from `dailies.cli.share`."""

from .cli.share import DASHBOARD_URL_ENV, share_link

__all__ = ["DASHBOARD_URL_ENV", "share_link"]
