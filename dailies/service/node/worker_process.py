"""`dailies worker`: render slots without HTTP, for any machine that reaches the database and the
storage. It claims queued tasks, renders them and stores the results; API nodes (`dailies serve
--workers 0`) take requests and deliver callbacks. Every process, worker or API node, also runs
the housekeeper (expiry, recovery of tasks whose worker died, purge): its changes are guarded, so
any number of them may run at once.

SIGTERM (or SIGINT) stops it gracefully: no more claims, running renders get the grace period to
finish, what is left goes back to the queue, exit code 0. A database that is down at start is
waited for; only a configuration error ends the process early (exit code 2).
"""

from __future__ import annotations

import logging
import signal
import threading

from dailies.generator.protocol import Generator
from dailies.service.node.services import Services
from dailies.service.node.startup import ConfigurationError, wait_for_database
from dailies.service.settings import Settings

log = logging.getLogger("dailies.worker")
# How often the main thread wakes while it waits to be stopped (see wait_until_stopped).
SIGNAL_CHECK_S = 0.5


def wait_until_stopped(stop: threading.Event) -> None:
    """Until `stop` is set. The kernel may hand SIGTERM to any thread (a render's, boto's); Python then
    runs the handler on the main thread only once that thread runs Python code again, which a wait
    without a timeout never does: a worker so signalled went on until SIGKILL. Hence short waits."""
    while not stop.wait(SIGNAL_CHECK_S):
        pass


def run_worker(settings: Settings, generator: Generator | None = None, stop: threading.Event | None = None,
               grace_period: float = 30.0, metrics_port: int | None = None) -> int:
    """Run render slots until SIGTERM or SIGINT (or until `stop` is set); returns an exit code."""
    if settings.workers < 1:
        raise ValueError("a worker needs at least one render slot")
    stop = stop or threading.Event()
    if threading.current_thread() is threading.main_thread():
        for signum in (signal.SIGTERM, signal.SIGINT):
            signal.signal(signum, lambda *_: stop.set())
    try:
        if not wait_for_database(settings, stop):
            return 0
        services = Services(settings, generator)
    except (ConfigurationError, ValueError) as exc:
        log.error("dailies worker cannot start: %s", exc)
        return 2
    if metrics_port is not None:
        try:
            services.metrics.serve(metrics_port)
        except OSError as exc:
            log.error("dailies worker cannot serve metrics on port %d: %s", metrics_port, exc)
            services.stop()
            return 2
    services.start(deliver_callbacks=False)
    log.info("worker started: %d render slot(s)%s; %s", settings.workers,
             f", metrics on port {metrics_port}" if metrics_port is not None else "", services.describe())
    try:
        wait_until_stopped(stop)
    finally:
        log.info("worker stopping: no more claims; running renders have %g s to finish", grace_period)
        services.stop(grace_period)
        log.info("worker stopped")
    return 0
