"""A gateway put together for one service process: its hooks bound to the service's pacing,
metrics, key records, orphans and callback URLs, given to the forwarding generator as it is made."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial

from sqlalchemy import Engine

from dailies.service.gateway import callbacks as upstream_callbacks
from dailies.service.gateway import holds
from dailies.service.gateway import keys as upstream_keys
from dailies.service.gateway.forwarded import ForwardedTasks
from dailies.service.gateway.forwarding import POLL_FIRST_S, POLL_MAX_S, UpstreamGenerator, UpstreamKey
from dailies.service.gateway.hooks import GatewayHooks
from dailies.service.gateway.pacing import Pacer
from dailies.service.runtime.metrics import Metrics
from dailies.service.settings import Settings
from dailies.service.storage.signing import UrlSigner
from dailies.service.tasks.store import TaskStore

# Makes the forwarding generator with the hooks it is given (tests: their own transport and clocks).
GatewayFactory = Callable[[GatewayHooks], UpstreamGenerator]


@dataclass(frozen=True)
class Gateway:
    """What a service holds when it forwards: the generator its render slots call, and what its
    task rules ask of it."""

    generator: UpstreamGenerator
    tasks: ForwardedTasks


def build_gateway(settings: Settings, engine: Engine, store: TaskStore, metrics: Metrics, signer: UrlSigner,
                  make: GatewayFactory | None = None) -> Gateway:
    pacer = Pacer(store.write, settings.upstream_rpm, settings.upstream_rpm_window, settings.clock)
    callback_url_for = GatewayHooks.callback_url_for
    if settings.upstream_callback_url:
        callback_url_for = partial(upstream_callbacks.callback_url, settings.upstream_callback_url, signer=signer)
    hooks = GatewayHooks(
        admit=pacer.admit, answered=pacer.answered, orphaned=partial(holds.keep_orphan, store),
        observe=metrics.upstream_call, callback_url_for=callback_url_for,
        on_set_aside=partial(upstream_keys.mark_set_aside, engine))
    generator = (make or partial(_configured, settings, engine))(hooks)
    metrics.upstream_keys_set_aside.set_function(lambda: len(generator.set_aside))
    return Gateway(generator, ForwardedTasks(generator, store, settings.clock))


def _configured(settings: Settings, engine: Engine, hooks: GatewayHooks) -> UpstreamGenerator:
    """The gateway of the settings, with the upstream keys of the environment first, then those
    stored in the database by priority."""
    assert settings.upstream_url is not None
    given = list(settings.upstream_keys)
    names = {k.name for k in given}
    stored = [UpstreamKey(name, key) for name, key in upstream_keys.load(engine) if name not in names]
    poll_first, poll_max = settings.upstream_poll or (POLL_FIRST_S, POLL_MAX_S)
    return UpstreamGenerator(settings.upstream_url, given + stored, hooks=hooks, timeout=settings.upstream_timeout,
                             clock=settings.clock, poll_first=poll_first, poll_max=poll_max)
