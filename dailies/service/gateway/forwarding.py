"""The forwarding generator: a task's render is the same task on an upstream service (the real Ark or
ModelArk, or another Dailies), followed to its end and archived into this service's storage.

It is a `Generator` like the preview renderer, so the worker, the store, the callbacks and the
records of a gateway are the ones every Dailies runs (docs/gateway.md says what is and is not done).

At most one upstream task per member task. Before a create is sent, the render checkpoints
`phase: creating`; once the upstream answers with an id, `phase: running` and the id. A render that
finds `running` (a worker stopped or killed, the task queued again) follows the same upstream task.
One that finds `creating` cannot know whether the create arrived (the upstream keeps no idempotency
key, and its records do not carry what would identify ours), so it never sends it again: the task
fails with `UpstreamOutcomeUnknown`. A create that did not leave (no connection) or that the upstream
refused with 429 or 5xx did not create anything and is retried with backoff.
"""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from dailies import netguard
from dailies.generator.inputs import InputError, InputResolver
from dailies.generator.protocol import (
    CancelCheck,
    ProgressCallback,
    RenderCancelled,
    RenderJob,
    RenderPostponed,
    RenderResult,
)
from dailies.retry_after import parse_retry_after
from dailies.service.gateway.checkpoint import CREATING, RUNNING, UpstreamCheckpoint
from dailies.service.gateway.hooks import GatewayHooks
from dailies.service.storage.own_results import ServiceInputResolver
from dailies.spec import limits as L
from dailies.spec.catalog import find_model, region_of_host
from dailies.spec.drafts import FIELDS_A_FINAL_SETS
from dailies.spec.media import encode_data_url
from dailies.spec.models import effective
from dailies.spec.pixels import estimate_tokens
from dailies.spec.statuses import TaskStatus

log = logging.getLogger("dailies.upstream")

TASKS_PATH = "/contents/generations/tasks"
OUTCOME_UNKNOWN = "UpstreamOutcomeUnknown"
UPSTREAM_UNAUTHORIZED = "UpstreamUnauthorized"
UPSTREAM_RESULT_INVALID = "UpstreamResultInvalid"
# Polling a running upstream task: soon at first, then less often as it ages.
POLL_FIRST_S = 1.0
POLL_MAX_S = 15.0
CREATE_BACKOFF_MAX_S = 30.0
# At most one LIST a second per key (BytePlus: 1 LIST/s per account), of at most this many ids.
LIST_INTERVAL_S = 1.0
# A key refused for one model (that model's service not activated on its account, no access to it)
# is not tried for that model again for a while; other models and other keys go on.
MODEL_REFUSAL_S = 600.0
# 403s that concern the key's whole account (overdue, suspended): the key is set aside for every model.
ACCOUNT_REFUSALS = frozenset({"AccountOverdueError", "OperationDenied.ServiceOverdue", "AuthenticationError",
                              "OperationDenied.AccountSuspended"})
# Answers of a result's download that say "not now" rather than "never": the render is postponed.
DOWNLOAD_RETRYABLE = frozenset({408, 425, 429})
# Redirects a result's download follows (a CDN, a signed link to a bucket): as many as the service
# follows for a member's input URL.
DOWNLOAD_REDIRECTS_MAX = 5
LIST_MAX_IDS = 100
# A LIST or GET may not show a task yet for a while after its create was answered (the upstream's
# index lags its create): a 404 is believed only once it has been answered for this many reads in a
# row over this long while the task is followed (or, asked by the sweep, this long after the create),
# enough for the lag and few enough to end a task the upstream truly does not have within minutes.
NOT_FOUND_READS = 5
NOT_FOUND_GRACE_S = 60.0
NOT_FOUND = "UpstreamTaskNotFound"
# Images read from our own storage are sent inline up to this size (the spec's limit for images).
INLINE_IMAGE_MAX_BYTES = 10 * 1024 * 1024


@dataclass(frozen=True)
class UpstreamKey:
    name: str
    key: str


class UpstreamFailed(InputError):
    """The upstream ended the task (failed, expired, refused it), or its outcome cannot be known:
    `code` and `message` are what the member's record shows."""

    def __init__(self, code: str, message: str) -> None:
        super().__init__(message, code)


class UpstreamEnded(UpstreamFailed):
    """The upstream itself ended the task without a result (failed, expired, cancelled there): it bills
    nothing for it."""


class UpstreamNotFound(UpstreamFailed):
    """The upstream answered 404 for a task: not there yet (a lagging index) or not at all."""


def parse_upstream_keys(text: str) -> list[UpstreamKey]:
    """`DAILIES_UPSTREAM_KEYS`: `name:key,name:key`, in order of priority."""
    keys = []
    for part in filter(None, (p.strip() for p in text.split(","))):
        name, sep, key = part.partition(":")
        if not sep or not name.strip() or not key.strip():
            raise ValueError("DAILIES_UPSTREAM_KEYS: each entry is name:key")
        keys.append(UpstreamKey(name.strip(), key.strip()))
    return keys


class UpstreamGenerator:
    """Forwards renders to `base_url` (an `/api/v3` base) with the team's upstream keys."""

    # What a member's record names when a render fails for no reason of the task's (a gateway runs
    # no renderer of its own).
    role = "The gateway forwarding this task to its upstream"

    def __init__(self, base_url: str, keys: list[UpstreamKey], *, hooks: GatewayHooks | None = None,
                 timeout: float = 30.0, transport: httpx.BaseTransport | None = None,
                 sleep: Callable[[float], None] = time.sleep, monotonic: Callable[[], float] = time.monotonic,
                 clock: Callable[[], float] = time.time,
                 poll_first: float = POLL_FIRST_S, poll_max: float = POLL_MAX_S,
                 list_interval: float = LIST_INTERVAL_S) -> None:
        if not keys:
            raise ValueError("a gateway needs at least one upstream key (DAILIES_UPSTREAM_KEYS=name:key)")
        self.base_url = base_url.rstrip("/")
        self.keys = list(keys)
        self.region = region_of_host(self.base_url)
        timeouts = httpx.Timeout(timeout, connect=min(10.0, timeout))
        self.http = httpx.Client(transport=transport, timeout=timeouts, follow_redirects=False)
        # A result's redirects go wherever the file's server says: a client of their own, which no
        # call with a key ever uses, and no proxy from the environment, so each hop goes to the
        # address checked (as the service fetches members' input URLs).
        self._redirects = httpx.Client(transport=transport, timeout=timeouts, follow_redirects=False,
                                       trust_env=False)
        # Every wait, interval and duration is on `monotonic` and `sleep`; every time other processes
        # read (a create's time, how old an orphan is, a member's deadline) on `clock`, the service's.
        self._sleep = sleep
        self._monotonic = monotonic
        self._clock = clock
        self.hooks = hooks or GatewayHooks()
        self.poll_first = poll_first
        self.poll_max = poll_max
        self.list_interval = list_interval
        # The upstream tasks this process follows (id -> (key name, tier)) and what the last LIST said.
        self._lock = threading.Lock()
        self._following: dict[str, tuple[str, str]] = {}
        self._latest: dict[str, dict[str, Any]] = {}
        self._unseen: set[str] = set()  # followed ids the last LIST did not show: read with a GET
        # BytePlus allows one LIST a second per account: one clock per key, whatever the tier; within a
        # key, the tier and the ids listed longest ago go first, so no task waits behind the others.
        self._listed_at: dict[str, float] = {}
        self._group_listed_at: dict[tuple[str, str], float] = {}
        self._id_listed_at: dict[str, float] = {}
        self.set_aside: set[str] = set()  # keys the upstream refused for their whole account (401, account 403s)
        # (key name, model) -> monotonic time until which that key is not tried for that model, and why.
        self.refused_for_model: dict[tuple[str, str], tuple[float, str, str]] = {}
        self.cooling: dict[str, float] = {}  # key name -> monotonic time its 429 wait ends
        self._woken: dict[str, threading.Event] = {}  # followed upstream id -> set by `wake`

    def wake(self, upstream_id: str) -> bool:
        """The upstream said this task changed (its callback reached a node of the service): the
        render following it here reads it now. False when this process does not follow it."""
        with self._lock:
            woken = self._woken.get(upstream_id)
        if woken is None:
            return False
        woken.set()
        return True

    def describe(self) -> str:
        return f"gateway to {self.base_url} ({len(self.keys)} upstream key(s))"

    def info(self) -> dict[str, Any]:
        """What `/dailies/v1/service` says of the gateway: never a key, only names and health."""
        return {"url": self.base_url, "region": str(self.region) if self.region else None,
                "keys": [{"name": k.name, "healthy": k.name not in self.set_aside} for k in self.keys]}

    # ---------- the render ----------

    def render(self, job: RenderJob, inputs: InputResolver, progress: ProgressCallback,
               is_cancelled: CancelCheck) -> RenderResult:
        state = UpstreamCheckpoint.from_dict(job.state)
        if state.upstream_id is not None:
            key = self._key(state.key)
            log.info("task %s continues upstream task %s", job.task_id, state.upstream_id)
        elif state.outcome_unknown:
            raise UpstreamFailed(OUTCOME_UNKNOWN, "The upstream create of this task was sent but its answer was "
                                 "lost (a timeout or a stopped worker); it is not sent again, so that the task is "
                                 "never created (and billed) twice upstream.")
        else:
            state, key = self._create(job, state, inputs, is_cancelled)
        assert state.upstream_id is not None
        tier = job.request.service_tier or "default"
        try:
            record = self._follow(state.upstream_id, key, tier, is_cancelled, progress)
        except UpstreamEnded:
            # Said with the task, so its reservation is released: the upstream bills nothing for it.
            job.checkpoint(state.but(upstream_ended=True).to_dict())
            raise
        except UpstreamNotFound:
            # Said with the task, so the sweep believes the upstream's next 404 without waiting again.
            job.checkpoint(state.but(upstream_missing=True).to_dict())
            raise
        # From here the upstream has billed the task: if it fails here (its results cannot be
        # downloaded, say), the service settles its cost instead of releasing it.
        job.checkpoint(state.but(upstream_succeeded=True).to_dict())
        return self._archive(record, job, key, inputs)

    def _refused(self, key: UpstreamKey, model: str) -> tuple[str, str] | None:
        """The upstream's (code, message) while this key is refused for this model, else None."""
        refused = self.refused_for_model.get((key.name, model))
        if refused is None or refused[0] <= self._monotonic():
            return None
        return refused[1], refused[2]

    def _ready(self, key: UpstreamKey) -> bool:
        return self.cooling.get(key.name, float("-inf")) <= self._monotonic()

    def _key(self, name: str | None) -> UpstreamKey:
        for key in self.keys:
            if key.name == name:
                return key
        raise UpstreamFailed(UPSTREAM_UNAUTHORIZED, f"The upstream key {name!r} this task was created with is no "
                             "longer configured.")

    def _headers(self, key: UpstreamKey) -> dict[str, str]:
        return {"Authorization": f"Bearer {key.key}", "Content-Type": "application/json"}

    # ---------- create ----------

    def upstream_body(self, job: RenderJob, inputs: InputResolver) -> dict[str, Any]:
        """The member's request as the upstream takes it: the model id in the upstream's family,
        no callback URL (members' receivers are called by Dailies, never by the provider), our own
        result images inline."""
        body = job.request.to_json_dict()
        body.pop("callback_url", None)
        draft_upstream_id = UpstreamCheckpoint.from_dict(job.state).draft_upstream_id
        if draft_upstream_id is not None:
            # A final: the upstream makes it from its own draft task, with what a final may set again.
            body = {k: v for k, v in body.items() if k == "model" or k in FIELDS_A_FINAL_SETS}
            body.pop("callback_url", None)
            body["content"] = [{"type": "draft_task", "draft_task": {"id": draft_upstream_id}}]
        our_callback = self.hooks.callback_url_for(job.task_id)
        if our_callback:  # the gateway's own receiver: a member's URL never leaves Dailies
            body["callback_url"] = our_callback
        if job.deadline_at is not None:
            # The member's deadline counts from their create, across our queue and the upstream's;
            # the upstream takes no less than its minimum (our own expiry still applies on time).
            left = int(job.deadline_at - self._clock())
            body["execution_expires_after"] = max(L.EXECUTION_EXPIRES_MIN, min(left, L.EXECUTION_EXPIRES_MAX))
        model = find_model(body["model"])
        if model is not None and self.region is not None:
            body["model"] = model.id_in(self.region)
        for index, item in enumerate(body.get("content") or []):
            image = item.get("image_url") if item.get("type") == "image_url" else None
            if image and inputs_own_result(inputs, image.get("url", ""), f"content[{index}].image_url"):
                data = inputs.read_bytes(image["url"], f"content[{index}].image_url", INLINE_IMAGE_MAX_BYTES)
                image["url"] = encode_data_url(data, "image/png" if data[:4] == b"\x89PNG" else "image/jpeg")
        return body

    def _create(self, job: RenderJob, state: UpstreamCheckpoint, inputs: InputResolver, is_cancelled: CancelCheck
                ) -> tuple[UpstreamCheckpoint, UpstreamKey]:
        body = self.upstream_body(job, inputs)
        # What the task started with (a final's draft) stays in every checkpoint.
        kept = state.kept
        delay = 1.0
        while True:
            usable = [k for k in self.keys if k.name not in self.set_aside]
            if not usable:
                raise UpstreamFailed(UPSTREAM_UNAUTHORIZED, "Every upstream key was refused (401/403): the "
                                     "operator must check them (dailies upstream list).")
            refusals = [self._refused(k, body["model"]) for k in usable]
            if all(refusals):
                code, message = next(r for r in refusals if r)
                raise UpstreamFailed(code, f"The upstream refused this model for every key: {message}")
            usable = [k for k, refused in zip(usable, refusals, strict=True) if not refused]
            key = next((k for k in usable if self._ready(k)), None)
            if key is None:  # every key is rate-limited: wait for the first to be free
                self._wait(min(self.cooling[k.name] for k in usable) - self._monotonic(), is_cancelled)
                continue
            wait = self.hooks.admit(key.name, body["model"])
            if wait > 0:  # this key's minute is used up here: wait in our queue, never send a 429 on
                self.cooling[key.name] = self._monotonic() + wait
                continue
            job.checkpoint(kept.but(phase=CREATING, key=key.name, sent_at=self._clock()).to_dict())
            started = self._monotonic()
            try:
                response = self.http.post(self.base_url + TASKS_PATH, json=body, headers=self._headers(key))
            except (httpx.ConnectError, httpx.ConnectTimeout) as exc:
                self.hooks.observe("create", "not_sent", self._monotonic() - started)
                log.warning("upstream create of %s not sent (%s); retrying", job.task_id, type(exc).__name__)
                job.checkpoint(kept.to_dict())
            except httpx.TransportError as exc:
                self.hooks.observe("create", "unknown", self._monotonic() - started)
                # Sent, answer lost: the state stays `creating`, and the next look fails it, never resends.
                raise UpstreamFailed(OUTCOME_UNKNOWN, f"The upstream create was sent but its answer was lost "
                                     f"({type(exc).__name__}); it is not sent again.") from exc
            else:
                self.hooks.observe("create", str(response.status_code), self._monotonic() - started)
                self.hooks.answered(key.name, body["model"])
                if response.status_code == 200:
                    upstream_id = _created_id(response)
                    if upstream_id is None:
                        # Answered "done" in words we cannot read (a proxy's page, a cut body): the
                        # task may exist upstream, and without its id it can be neither followed nor
                        # sent again safely. The state stays `creating`: held, then counted.
                        log.warning("upstream create of %s answered 200 without a readable task id (%s, %d "
                                    "bytes)", job.task_id, response.headers.get("content-type"),
                                    len(response.content))
                        raise UpstreamFailed(OUTCOME_UNKNOWN, "The upstream answered the create without a "
                                             "task id that could be read; the task may have been created "
                                             "there, so it is not sent again.")
                    running = kept.but(phase=RUNNING, key=key.name, upstream_id=upstream_id)
                    try:
                        job.checkpoint(running.to_dict())
                    except RenderCancelled:
                        # The task ended here while the create was on its way (it expired): the
                        # upstream has it now. Its id must not be lost with this render, or it would
                        # run and be billed with nobody to cancel or count it. It is younger than
                        # the task's end, so its own time tells the sweep whether a 404 may be lag.
                        self.hooks.orphaned(job.task_id, running.but(created_at=self._clock()))
                        raise
                    log.info("task %s created upstream as %s (key %s)", job.task_id, upstream_id, key.name)
                    return running, key
                job.checkpoint(kept.to_dict())  # answered: nothing was created
                if response.status_code == 403 and _error_of(response)[0] not in ACCOUNT_REFUSALS:
                    # Refused for this model or resource only (its service not activated on this key's
                    # account, say): another key may have it, and this key still serves other models.
                    code, message = _error_of(response)
                    log.warning("upstream key %s refused model %s (403 %s): not used for it for %.0f s",
                                key.name, body["model"], code, MODEL_REFUSAL_S)
                    self.refused_for_model[(key.name, body["model"])] = (
                        self._monotonic() + MODEL_REFUSAL_S, code, message)
                    continue
                if response.status_code in (401, 403):
                    log.warning("upstream key %s refused (%d): set aside", key.name, response.status_code)
                    self.set_aside.add(key.name)
                    code, message = _error_of(response)
                    try:
                        self.hooks.on_set_aside(key.name, f"HTTP {response.status_code} {code}")
                    except Exception:  # recording it is for the operator's list; the task goes on
                        log.exception("recording that upstream key %s was set aside failed", key.name)
                    continue
                if response.status_code != 429 and response.status_code < 500:
                    code, message = _error_of(response)
                    raise UpstreamFailed(code, f"The upstream refused the task: {message}")
                if response.status_code >= 500 and not _upstream_error(response):
                    # A 502/504 from a proxy or load balancer in between, without the upstream's own
                    # error: the create may have arrived. As unknown as a lost answer: never resent.
                    raise UpstreamFailed(OUTCOME_UNKNOWN, f"The upstream create was answered HTTP "
                                         f"{response.status_code} by something in between; it may have "
                                         "arrived, so it is not sent again.")
                if response.status_code == 429:
                    # A rate-limited key yields to the next by priority until its wait is over.
                    self.cooling[key.name] = self._monotonic() + (_retry_after(response, self._clock()) or delay)
                    if any(self._ready(k) for k in usable):
                        continue
                delay = _retry_after(response, self._clock()) or delay
                log.info("upstream create of %s answered %d; retrying in %.1f s", job.task_id,
                         response.status_code, delay)
            self._wait(delay, is_cancelled)
            delay = min(delay * 2, CREATE_BACKOFF_MAX_S)

    # ---------- cancel ----------

    def cancel_queued(self, state: UpstreamCheckpoint | Mapping[str, Any]) -> bool:
        """Cancel the upstream task of a checkpoint (or its stored JSON object) if it still waits in
        the upstream's queue; True only when the upstream then shows it `cancelled`. The upstream's
        DELETE of a finished task deletes its record and answers 200 too (and that task is billed), so
        DELETE is sent only to a task the upstream shows `queued`, and its 200 is believed only once the
        task reads `cancelled`. Any doubt (no answer, another status) is False: the task goes on and is
        settled when it ends."""
        if not isinstance(state, UpstreamCheckpoint):
            state = UpstreamCheckpoint.from_dict(state)
        upstream_id = state.upstream_id
        if upstream_id is None or state.upstream_succeeded:
            return False
        try:
            key = self._key(state.key)
            if (self._get(upstream_id, key) or {}).get("status") != TaskStatus.QUEUED:
                return False
            started = self._monotonic()
            response = self.http.delete(f"{self.base_url}{TASKS_PATH}/{upstream_id}", headers=self._headers(key))
            self.hooks.observe("delete", str(response.status_code), self._monotonic() - started)
            if response.status_code != 200:
                return False
            status = (self._get(upstream_id, key) or {}).get("status")
        except (UpstreamFailed, httpx.TransportError, ValueError) as exc:
            log.info("upstream task %s not cancelled: %s", upstream_id, exc)
            return False
        if status != TaskStatus.CANCELLED:
            log.error("upstream task %s answered DELETE but reads %s, not cancelled", upstream_id, status)
        return status == TaskStatus.CANCELLED

    def bills(self, state: UpstreamCheckpoint, ended_at: float | None) -> bool | None:
        """Whether the upstream bills the task of a checkpoint that ended here (at `ended_at`) without
        its result: False when the upstream ended it unbilled (failed, expired, cancelled there), it is
        cancelled now while it still waits there, or the upstream says it has no such task (a 404 past
        the lag of its index); True when it ran or runs there (a run is billed once it succeeds: its
        estimate is counted), or when nothing can be asked any more (its key removed); None while the
        upstream does not answer, or its 404 may still be that lag (ask again later)."""
        if state.upstream_succeeded:
            return True
        if state.upstream_ended:
            return False
        upstream_id = state.upstream_id
        if upstream_id is None:
            return None
        try:
            record = self._get(upstream_id, self._key(state.key))
        except UpstreamNotFound:
            # Its create was answered before the task ended here (an orphan's, after: its own time).
            since = state.created_at or ended_at
            if not state.upstream_missing and since is not None and self._clock() - since < NOT_FOUND_GRACE_S:
                return None  # maybe not in the upstream's index yet: asked again next sweep
            # A task the upstream says it does not have did not run there, as far as anyone can tell.
            log.warning("the upstream has no task %s: its reservation is released", upstream_id)
            return False
        except UpstreamFailed as exc:
            log.warning("upstream task %s cannot be read (%s): counted as billed", upstream_id, exc)
            return True
        if record is None:
            return None
        status = record.get("status")
        if status in (TaskStatus.FAILED, TaskStatus.EXPIRED, TaskStatus.CANCELLED):
            return False
        if status == TaskStatus.QUEUED:
            return not self.cancel_queued(state)
        return True

    # ---------- follow ----------

    def _follow(self, upstream_id: str, key: UpstreamKey, tier: str, is_cancelled: CancelCheck,
                progress: ProgressCallback) -> dict[str, Any]:
        """Wait for the upstream task to end: looked at soon, then less often as it ages. Every
        task this process follows with one key is read by one LIST (`filter.task_ids`) at most
        every `list_interval` (BytePlus allows one LIST a second per account), whichever render
        looks first; a task the LIST does not show is read with a GET."""
        interval = self.poll_first
        woken = threading.Event()
        missing_since: float | None = None  # the first of the 404s in a row, and how many
        missing_reads = 0
        with self._lock:
            self._following[upstream_id] = (key.name, tier)
            self._woken[upstream_id] = woken
        try:
            while True:
                try:
                    if woken.is_set():  # the upstream called back: read this task now, with a GET
                        woken.clear()
                        record = self._get(upstream_id, key)
                    else:
                        record = self._look(upstream_id, key, tier)
                except UpstreamNotFound:
                    now = self._monotonic()
                    missing_since = now if missing_since is None else missing_since
                    missing_reads += 1
                    if missing_reads >= NOT_FOUND_READS and now - missing_since >= NOT_FOUND_GRACE_S:
                        raise UpstreamNotFound(NOT_FOUND, f"The upstream has no task {upstream_id}: it "
                                               f"answered 404 {missing_reads} times over "
                                               f"{now - missing_since:.0f} s.") from None
                    record = None
                else:
                    if record is not None:
                        missing_since, missing_reads = None, 0
                status = record.get("status") if record else None
                if record is not None and status == TaskStatus.SUCCEEDED:
                    progress(1.0)
                    return record
                if record is not None and status in (TaskStatus.FAILED, TaskStatus.EXPIRED, TaskStatus.CANCELLED):
                    told = record.get("error")
                    error = told if isinstance(told, dict) else {}
                    raise UpstreamEnded(error.get("code") or f"Upstream{str(status).title()}",
                                        error.get("message") or f"The upstream task {status}.")
                self._wait(interval, is_cancelled, woken)
                interval = min(interval * 1.5, self.poll_max)
        finally:
            with self._lock:
                self._following.pop(upstream_id, None)
                self._woken.pop(upstream_id, None)
                self._latest.pop(upstream_id, None)
                self._unseen.discard(upstream_id)
                self._id_listed_at.pop(upstream_id, None)

    def _look(self, upstream_id: str, key: UpstreamKey, tier: str) -> dict[str, Any] | None:
        """The latest record of an upstream task, from a LIST of every task this process follows
        with the key (made now if the last is older than `list_interval`); a GET only for a task
        the last LIST did not show. None when nothing newer could be read."""
        never = float("-inf")
        ids: list[str] = []
        listed_tier = tier
        with self._lock:  # only to choose: the LIST itself is sent with the lock free
            now = self._monotonic()
            if now - self._listed_at.get(key.name, never) >= self.list_interval:
                # Taken now, so no other render of this key lists while this LIST is on its way.
                self._listed_at[key.name] = now
                groups = {g for g in self._following.values() if g[0] == key.name} or {(key.name, tier)}
                group = min(groups, key=lambda g: (self._group_listed_at.get(g, never), g != (key.name, tier)))
                self._group_listed_at[group] = now
                ids = sorted((i for i, g in self._following.items() if g == group),
                             key=lambda i: self._id_listed_at.get(i, never))[:LIST_MAX_IDS]
                self._id_listed_at.update(dict.fromkeys(ids, now))
                listed_tier = group[1]
        if ids:
            listed = self._list(ids, key, listed_tier)
            if listed is not None:
                with self._lock:
                    # Only tasks still followed: one whose render ended meanwhile is kept no more.
                    self._latest.update((i, r) for i, r in listed.items() if i in self._following)
                    self._unseen.update(i for i in ids if i not in listed and i in self._following)
        with self._lock:
            record = self._latest.get(upstream_id)
            unseen = upstream_id in self._unseen
            self._unseen.discard(upstream_id)
        if record is not None:
            return record
        return self._get(upstream_id, key) if unseen else None

    def _list(self, ids: list[str], key: UpstreamKey, tier: str) -> dict[str, dict[str, Any]] | None:
        params: list[tuple[str, str | int | float | bool | None]] = [("filter.task_ids", i) for i in ids]
        params += [("page_size", str(len(ids))), ("filter.service_tier", tier)]
        started = self._monotonic()
        try:
            response = self.http.get(self.base_url + TASKS_PATH, params=params, headers=self._headers(key))
        except httpx.TransportError:
            self.hooks.observe("list", "transport_error", self._monotonic() - started)
            return None
        self.hooks.observe("list", str(response.status_code), self._monotonic() - started)
        if response.status_code != 200:
            return None
        body = _json_object(response)
        # A LIST of nothing may say `"items": null` (a Go service's empty list).
        items = body.get("items") if body is not None else None
        if body is None or not isinstance(items, list | None) or not all(isinstance(i, dict) for i in items or []):
            # A 200 we cannot read (a proxy's page, a cut body) says nothing of the tasks: a fault
            # of the way there like a 5xx, never a reason to end them. They are looked at again.
            log.warning("upstream LIST answered 200 with a body that cannot be read (%s, %d bytes); "
                        "asked again", response.headers.get("content-type"), len(response.content))
            return None
        return {item["id"]: item for item in items or [] if item.get("id") in ids}

    def _get(self, upstream_id: str, key: UpstreamKey) -> dict[str, Any] | None:
        started = self._monotonic()
        try:
            response = self.http.get(f"{self.base_url}{TASKS_PATH}/{upstream_id}", headers=self._headers(key))
        except httpx.TransportError as exc:
            self.hooks.observe("get", "transport_error", self._monotonic() - started)
            log.info("reading upstream task %s failed (%s); trying again", upstream_id, type(exc).__name__)
            return None
        self.hooks.observe("get", str(response.status_code), self._monotonic() - started)
        if response.status_code == 404:
            raise UpstreamNotFound(NOT_FOUND, f"The upstream has no task {upstream_id} (HTTP 404).")
        if response.status_code != 200:
            return None
        record = _json_object(response)
        if record is None:  # as for a LIST: a fault of the way there, the task is read again
            log.warning("upstream GET of %s answered 200 with a body that cannot be read (%s, %d bytes); "
                        "asked again", upstream_id, response.headers.get("content-type"), len(response.content))
        return record

    def _wait(self, seconds: float, is_cancelled: CancelCheck, woken: threading.Event | None = None) -> None:
        """Sleep, a little at a time, so a stop, a lost task or an upstream callback is noticed
        within 0.2 s."""
        deadline = self._monotonic() + seconds * random.uniform(0.9, 1.1)
        while True:
            if is_cancelled():
                raise RenderCancelled()
            left = deadline - self._monotonic()
            if left <= 0 or (woken is not None and woken.is_set()):
                return
            self._sleep(min(0.2, left))

    # ---------- archive ----------

    def _archive(self, record: dict[str, Any], job: RenderJob, key: UpstreamKey,
                 inputs: InputResolver | None = None) -> RenderResult:
        """Download the results before the member's task succeeds (the upstream's URLs die in 24 h),
        check them, and describe them with the upstream record's numbers."""
        told = record.get("content")
        content: dict[str, Any] = told if isinstance(told, dict) else {}
        video = job.output_dir / "upstream-video.mp4"
        self._download(content.get("video_url"), video, "video", inputs)
        head = video.read_bytes()[:12]
        if len(head) < 8 or head[4:8] != b"ftyp":
            raise UpstreamFailed(UPSTREAM_RESULT_INVALID, "The upstream's video is not an MP4 file.")
        last_frame = None
        if content.get("last_frame_url"):
            last_frame = job.output_dir / "upstream-last-frame.png"
            self._download(content["last_frame_url"], last_frame, "last frame", inputs)
        try:
            width, height, frame_count = _video_size(video)
        except _Undecodable as exc:
            # PyAV's message names our scratch file: the member is told of the upstream's video only.
            log.warning("the upstream's video of %s cannot be decoded: %s", job.task_id, exc.__cause__)
            raise UpstreamFailed(UPSTREAM_RESULT_INVALID, "The upstream's video is an MP4 file that cannot be "
                                 "decoded (damaged, cut short, or without a video stream).") from None
        tools_used = record.get("tools") or []
        return RenderResult(
            video_path=video, last_frame_path=last_frame, width=width, height=height,
            resolution=record.get("resolution") or job.request.resolution or "720p",
            ratio=record.get("ratio") or "16:9", duration=record.get("duration") if not record.get("frames") else None,
            frames=record.get("frames"), frame_count=frame_count, fps=int(record.get("framespersecond") or 24),
            seed=int(seed) if (seed := record.get("seed")) is not None else job.seed,
            generate_audio=_audio_of(record, job),
            completion_tokens=_billed_tokens(record, job, width, height, frame_count),
            tools_used=tools_used,
            web_search_calls=int(((record.get("usage") or {}).get("tool_usage") or {}).get("web_search") or 0),
        )

    def _download(self, url: str | None, target: Path, what: str, inputs: InputResolver | None) -> None:
        if not url:
            raise UpstreamFailed(UPSTREAM_RESULT_INVALID, f"The upstream task succeeded without a {what} URL.")
        for attempt in range(3):
            try:
                self._fetch(url, target, what, inputs)
                return
            except (httpx.TransportError, _NotNow) as exc:
                if attempt == 2:
                    # The upstream task succeeded (and is billed): never fail the member's task for a
                    # download that may work later; it goes back to the queue and continues from here.
                    why = str(exc) if isinstance(exc, _NotNow) else type(exc).__name__
                    raise RenderPostponed(f"the upstream's {what} could not be downloaded ({why})") from exc
                self._sleep(1.0 + attempt)

    def _fetch(self, url: str, target: Path, what: str, inputs: InputResolver | None) -> None:
        """One download of a result, through its redirects. Its URL is the upstream's own answer,
        trusted as the upstream is (the operator chose it, maybe on the team's own network); where a
        redirect leads is the file server's word, checked as a member's input URL would be."""
        current = url
        for hop in range(DOWNLOAD_REDIRECTS_MAX + 1):
            if hop == 0:
                client, request = self.http, netguard.Pinned(current)
            else:
                client, request = self._redirects, _redirect_target(current, what, inputs)
            with client.stream("GET", request.url, headers=request.headers,
                               extensions=request.extensions) as response:
                if response.is_redirect:
                    try:
                        current = str(httpx.URL(current).join(response.headers["location"]))
                    except httpx.InvalidURL as exc:
                        raise UpstreamFailed(UPSTREAM_RESULT_INVALID, f"The upstream's {what} URL redirected "
                                             "to a URL that cannot be used.") from exc
                    continue
                if response.status_code != 200:
                    if response.status_code in DOWNLOAD_RETRYABLE or response.status_code >= 500:
                        raise _NotNow(f"HTTP {response.status_code}")
                    raise UpstreamFailed(UPSTREAM_RESULT_INVALID, f"The upstream's {what} could not be "
                                         f"downloaded (HTTP {response.status_code}).")
                with open(target, "wb") as out:
                    for chunk in response.iter_bytes():
                        out.write(chunk)
                return
        raise UpstreamFailed(UPSTREAM_RESULT_INVALID, f"The upstream's {what} URL redirected more than "
                             f"{DOWNLOAD_REDIRECTS_MAX} times.")


def _redirect_target(url: str, what: str, inputs: InputResolver | None) -> netguard.Pinned:
    """Where a result's redirect may be followed: http(s), to addresses the service may fetch from
    (loopback and private ranges as its input URLs allow), and to the very address checked."""
    if httpx.URL(url).scheme not in ("http", "https"):
        raise UpstreamFailed(UPSTREAM_RESULT_INVALID, f"The upstream's {what} URL redirected to a URL that is "
                             "not http(s).")
    try:
        return netguard.pinned(url, inputs is not None and inputs.allow_loopback,
                               inputs is not None and inputs.allow_private)
    except netguard.HostLookupError as exc:
        if isinstance(exc.__cause__, OSError):  # the name does not resolve now: maybe later
            raise _NotNow("a redirect's host does not resolve") from exc
        raise UpstreamFailed(UPSTREAM_RESULT_INVALID, f"The upstream's {what} URL redirected to a URL "
                             "that cannot be used.") from exc
    except netguard.BlockedAddress as exc:
        log.warning("the upstream's %s redirected to a refused address: not followed (%s)", what, exc)
        raise UpstreamFailed(UPSTREAM_RESULT_INVALID, f"The upstream's {what} URL redirected to a private or "
                             "local address, which this service does not fetch from.") from exc


class _NotNow(Exception):
    """The result's server answered "not now" (busy, rate-limited, a 5xx): worth asking again."""


def _billed_tokens(record: dict[str, Any], job: RenderJob, width: int, height: int, frame_count: int) -> int:
    """The tokens the upstream bills for a succeeded task, which its cost is settled at: its usage's
    `completion_tokens`, else `total_tokens` (the spec: equal), else, for a record that reports no
    usage at all, the token formula over the video it delivered (never 0: the task was billed)."""
    usage = record.get("usage") or {}
    for name in ("completion_tokens", "total_tokens"):
        if isinstance(usage.get(name), int) and usage[name] >= 0:
            return usage[name]
    tokens = estimate_tokens(width, height, frames=frame_count, draft=job.draft)
    log.warning("upstream task %s reported no usage: settled at %d tokens, the formula over its video",
                record.get("id"), tokens)
    return tokens


def _audio_of(record: dict[str, Any], job: RenderJob) -> bool:
    """Whether the upstream's video has sound (audio is priced higher): the record's word, else what
    the member asked of a model that can make sound, so a record that leaves it out is not settled
    at the silent price."""
    if isinstance(record.get("generate_audio"), bool):
        return record["generate_audio"]
    model = find_model(job.request.model)
    return bool(effective(job.request, "generate_audio")) and (model is None or model.capabilities.generate_audio)


def inputs_own_result(inputs: InputResolver, url: str, where: str) -> bool:
    """Whether a URL is one of this service's own results (only the service's resolver knows)."""
    return bool(url) and isinstance(inputs, ServiceInputResolver) and inputs.own_result(url, where) is not None


class _Undecodable(Exception):
    """A file that starts like an MP4 but cannot be read as a video."""


def _video_size(path: Path) -> tuple[int, int, int]:
    """Width, height and frame count of the upstream's video, opened as media nobody vouches for."""
    import av

    from dailies.spec.media import MediaRefused, open_untrusted

    try:
        with open_untrusted(path, "video") as container:
            stream = container.streams.video[0]
            frames = stream.frames or 0
            return stream.codec_context.width, stream.codec_context.height, frames
    except (av.error.FFmpegError, MediaRefused, IndexError) as exc:  # IndexError: no video stream
        raise _Undecodable() from exc


def _json_object(response: httpx.Response) -> dict[str, Any] | None:
    """The answer's body if it is a JSON object, else None (not JSON, cut short, an array, null)."""
    try:
        body = response.json()
    except ValueError:  # JSONDecodeError, and UnicodeDecodeError for bytes that are not text
        return None
    return body if isinstance(body, dict) else None


def _created_id(response: httpx.Response) -> str | None:
    """The upstream task id a create's 200 carries, or None when it cannot be read."""
    upstream_id = (_json_object(response) or {}).get("id")
    return upstream_id if isinstance(upstream_id, str) and upstream_id else None


def _upstream_error(response: httpx.Response) -> bool:
    """Whether an answer carries the upstream's own error body (so the upstream itself answered)."""
    try:
        error = response.json().get("error")
    except (ValueError, AttributeError):
        return False
    return isinstance(error, dict) and bool(error.get("code"))


def _error_of(response: httpx.Response) -> tuple[str, str]:
    error = (_json_object(response) or {}).get("error")
    error = error if isinstance(error, dict) else {}
    return (error.get("code") or f"UpstreamHTTP{response.status_code}",
            error.get("message") or f"HTTP {response.status_code}")


def _retry_after(response: httpx.Response, now: float) -> float | None:
    """The upstream's wait, at most CREATE_BACKOFF_MAX_S; None (back off as usual) for no usable header.
    A bare float() took NaN, which cooled a key for good, and a negative value, which retried at once."""
    seconds = parse_retry_after(response.headers, now)
    return None if seconds is None else min(seconds, CREATE_BACKOFF_MAX_S)
