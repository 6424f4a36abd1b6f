"""The HTTP server of `dailies serve`: uvicorn's, told to answer the long polls when a stop is asked.

uvicorn stops by closing its sockets, then waits for every request in flight; a follower's long poll
(`/dailies/v1/live/{id}?after=`) lasts up to 25 s, so a node asked to stop answers its waiters
first, at once, with the state as it is (their players ask again, elsewhere or once the node is back).
"""

from __future__ import annotations

from types import FrameType
from typing import Any

import uvicorn

from .live_watch import release_waiters


class NodeServer(uvicorn.Server):
    def __init__(self, config: uvicorn.Config, app: Any) -> None:
        super().__init__(config)
        self.app = app  # the FastAPI app under the config's wrappers

    def handle_exit(self, sig: int, frame: FrameType | None) -> None:
        super().handle_exit(sig, frame)
        release_waiters(self.app)
