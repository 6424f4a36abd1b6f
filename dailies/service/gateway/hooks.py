"""What the service tells and asks a gateway's forwarding generator, given once at its construction
(`UpstreamGenerator(..., hooks=GatewayHooks(...))`): the generator calls these and nothing else of
the service. Each defaults to doing nothing, so a generator alone (a test, a tool) needs none.

The service's own set is made by `gateway/wiring.py`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from .checkpoint import UpstreamCheckpoint


def _go(key_name: str, model: str) -> float:
    return 0.0


def _nothing(*args: object) -> None:
    return None


def _no_callback(task_id: str) -> str | None:
    return None


@dataclass(frozen=True)
class GatewayHooks:
    # Asked before each create: seconds to wait before this key may create another task of this
    # model (the upstream's requests per minute, counted across every worker: pacing.py); 0: go.
    admit: Callable[[str, str], float] = _go
    # Told when the upstream answered an admitted create (any answer: it arrived), so it counts from then.
    answered: Callable[[str, str], None] = _nothing
    # Told of an upstream task created for a task that had ended here meanwhile (our task id, the
    # checkpoint naming it): kept, to cancel it there or count what it costs (holds.py).
    orphaned: Callable[[str, UpstreamCheckpoint], None] = _nothing
    # Told of every upstream call: (call, outcome, seconds); the metrics listen here.
    observe: Callable[[str, str, float], None] = _nothing
    # The URL the upstream calls back when a task changes, given our task id (callbacks.py); None
    # without a public address.
    callback_url_for: Callable[[str], str | None] = _no_callback
    # Told when a key is set aside (name, why), so `dailies upstream list` shows it on every machine.
    on_set_aside: Callable[[str, str], None] = _nothing
