"""Start a live session from any page that holds an ordered selection of versions (a reel, the Live
page's own pick) and open it on the Live page, where its presenter's controls are asked for again
(components/live/panel.py): a page only hands over the versions, in order, with their labels."""

from __future__ import annotations

from collections.abc import Sequence

from components.common import pages
from dailies.client import Client, DailiesError, UnsupportedEndpointError
from dailies.spec.live import MAX_VERSIONS
from dailies.spec.models import LiveSession


def start(client: Client, versions: Sequence[tuple[str, str]], title: str, presenter: str) -> LiveSession | str:
    """The session started on `versions` ((task id, label), in the order shown), or why it was not."""
    if len(versions) > MAX_VERSIONS:
        return f"A live session shows at most {MAX_VERSIONS} versions: this has {len(versions)}."
    try:
        return client.start_live(list(versions), title, presenter=presenter)
    except UnsupportedEndpointError:
        return "This service has no live sessions (it is not a Dailies service)."
    except DailiesError as exc:
        return f"The session was not started: {getattr(exc, 'message', exc)}"


def open_session(session: LiveSession) -> bool:
    """Go to the session on the Live page (this run ends there); False without the router."""
    return pages.switch_to(pages.LIVE, query={"session": session.id})
