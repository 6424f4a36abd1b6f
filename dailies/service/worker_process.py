"""`dailies worker`: render slots without HTTP, for any machine that reaches the database and the
storage. It claims queued tasks, renders them and stores the results; API nodes (`dailies serve
--workers 0`) take requests and deliver callbacks. Every process, worker or API node, also runs
the housekeeper (expiry, recovery of tasks whose worker died, purge): its changes are guarded, so
any number of them may run at once.
"""

from __future__ import annotations

import logging
import signal
import threading

from ..generator.protocol import Generator
from .services import Services
from .settings import Settings

log = logging.getLogger("dailies.worker")


def run_worker(settings: Settings, generator: Generator | None = None, stop: threading.Event | None = None) -> int:
    """Run render slots until SIGTERM or SIGINT (or until `stop` is set); returns an exit code."""
    if settings.workers < 1:
        raise ValueError("a worker needs at least one render slot")
    stop = stop or threading.Event()
    services = Services(settings, generator)
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: stop.set())
    services.start(deliver_callbacks=False)
    log.info("worker started: %d render slot(s); %s", settings.workers, services.describe())
    try:
        stop.wait()
    finally:
        log.info("worker stopping")
        services.stop()
    return 0
