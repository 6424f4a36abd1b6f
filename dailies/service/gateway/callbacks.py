"""The upstream's callbacks to a gateway: a faster signal than polling that a forwarded task changed.

A gateway started with a public address (`--public-url`, `DAILIES_PUBLIC_URL`) sends each upstream
create a `callback_url` of its own, `<public url>/dailies/v1/upstream/callback/<task id>?signature=...`
(never a member's: members' receivers are called by Dailies from its own records). The signature is an
HMAC of the path under the service's URL-signing secret, so only the holder of that exact URL (the
upstream) can knock, and only for that task.

The body is not trusted beyond its `id`: a callback only wakes the render that follows the task (in
whichever process: a PostgreSQL NOTIFY, wakeups.py), which then reads the task from the upstream itself
with its key. A lost or forged callback therefore changes nothing but timing; the poll stays the safety
net. The route answers 200 for every validly signed callback (also for a task no longer followed), so
the upstream does not retry what there is nothing to do about.
"""

from __future__ import annotations

from sqlalchemy import select

from dailies.service.db.tables import tasks
from dailies.service.gateway.checkpoint import UpstreamCheckpoint
from dailies.service.own_paths import PREFIX
from dailies.service.storage.signing import UrlSigner
from dailies.spec.statuses import TaskStatus

ROUTE = "/upstream/callback/{task_id}"
# Signed like a result URL that never expires: the path alone says what it is for.
NEVER = 0


def path_of(task_id: str) -> str:
    return PREFIX + ROUTE.format(task_id=task_id)


def callback_url(public_url: str, task_id: str, signer: UrlSigner) -> str:
    """What the upstream is given as `callback_url` for our task `task_id`."""
    path = path_of(task_id)
    return f"{public_url.rstrip('/')}{path}?signature={signer.signature(path, NEVER)}"


def signal(svc, task_id: str, upstream_id: str) -> None:
    """Wake the follower of the task, if it still runs here as that upstream task. Counted in
    `dailies_upstream_calls_total{call="callback"}`: `followed`, or `not_followed` (ended, another id)."""
    with svc.engine.begin() as conn:
        row = conn.execute(select(tasks.c.status, tasks.c.generator_state).where(tasks.c.id == task_id)).first()
        followed = (row is not None and row.status == TaskStatus.RUNNING
                    and UpstreamCheckpoint.from_json(row.generator_state).upstream_id == upstream_id)
        if followed:
            svc.wakeups.signal_upstream(conn, upstream_id)
    svc.metrics.upstream_call("callback", "followed" if followed else "not_followed", 0.0)
