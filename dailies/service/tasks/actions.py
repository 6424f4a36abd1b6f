"""What the routes ask of the service: create, read, list and delete tasks, with every rule of
the contract applied. Routes stay thin; this module holds the decisions."""

from __future__ import annotations

import hashlib
import json
import logging
import secrets
from collections.abc import Callable
from dataclasses import dataclass
from typing import Protocol

from sqlalchemy import Connection

from dailies.generator.plan import plan_content
from dailies.generator.protocol import RenderedOutput
from dailies.service.access import rate_limits
from dailies.service.billing import budgets
from dailies.service.callers import Caller
from dailies.service.db.tables import TIER_RANK
from dailies.service.errors import ApiError, TryAgain, from_problems, shown, task_not_found
from dailies.service.runtime.breakers import Health
from dailies.service.runtime.faults import Dependency, describe, storage_unavailable
from dailies.service.settings import Settings
from dailies.service.storage import deletions as file_deletions
from dailies.service.storage.own_results import is_own_result_url
from dailies.service.storage.results import ResultStorage
from dailies.service.tasks.records import build_record
from dailies.service.tasks.rows import TaskRow
from dailies.service.tasks.store import KeyReused, QuotaReached, TaskStore, new_task_id
from dailies.spec import limits as L
from dailies.spec.catalog import Model, find_model
from dailies.spec.drafts import FIELDS_A_FINAL_SETS
from dailies.spec.lifetimes import execution_deadline, oldest_kept
from dailies.spec.media import check_inline_material, decode_data_url, is_data_url, read_image_info
from dailies.spec.models import CreateTaskRequest, ListTasksQuery, effective
from dailies.spec.pixels import RATIO_DEFAULT
from dailies.spec.prices import PRICES, Price, cost
from dailies.spec.problems import Problem
from dailies.spec.statuses import DELETABLE, TaskStatus
from dailies.spec.urls import check_media_hosts
from dailies.spec.validation import check_create_body, drop_nulls

log = logging.getLogger("dailies.tasks")
# How long a create waits for the callback URL's host to resolve (the resolver's own retries against a
# name server that does not answer take tens of seconds, on a request thread).
CALLBACK_LOOKUP_S = 5.0


@dataclass
class ResolvedModel:
    model: Model
    name: str  # what the request named: a model id or an endpoint id
    # The catalog id the name stands for, in the region's family the request used (a BytePlus id
    # for a BytePlus-style request): what the record's `model` says and what is rendered.
    model_id: str


class Forwarding(Protocol):
    """What a gateway adds to the task rules (gateway/forwarded.py); a service that renders its
    tasks itself has none."""

    def handed_over(self, row: TaskRow) -> bool:
        """Whether the task was created upstream."""
        ...

    def cancel_upstream(self, row: TaskRow) -> bool:
        """Cancel it upstream if it still waits there; True once the upstream shows it cancelled."""
        ...

    def cancel_running(self, project: str, row: TaskRow) -> bool:
        """A task running here but still queued upstream: cancelled there and here; True if done."""
        ...

    def final_state(self, draft_row: TaskRow) -> str:
        """A final's first checkpoint, naming its draft's upstream task (400 without one)."""
        ...


class TaskService:
    def __init__(self, settings: Settings, store: TaskStore, storage: ResultStorage,
                 prices: tuple[Price, ...] = PRICES, forwarding: Forwarding | None = None,
                 billed_model: Callable[[str], str] = lambda model_id: model_id) -> None:
        self.settings = settings
        self.store = store
        self.storage = storage
        self.prices = prices
        self.health: Health | None = None  # set by Services: a DELETE's storage errors are reported there
        self.forwarding = forwarding
        # The model id a task is billed as (a gateway's: the upstream region's id, priced in its
        # currency), which its estimate and its cost are priced at.
        self.billed_model = billed_model

    def now(self) -> float:
        return self.settings.clock()

    # ---------- limits ----------

    def admit(self, caller: Caller, kind: str) -> rate_limits.Allowance | None:
        """Count one request of `kind` (create, read) against the caller's key's per-minute limit;
        raises `RateLimited` (429) when it is used up, None when the key has no such limit."""
        limit = rate_limits.limit_of(caller.options, kind)
        if limit is None:
            return None
        with self.store.write.begin() as conn:
            return rate_limits.take(conn, caller.key_id, kind, limit, self.now())

    # ---------- create ----------

    def resolve_model(self, name: object) -> ResolvedModel | None:
        if not isinstance(name, str) or not name:
            return None  # the model check reports the type, or that it is empty
        model_id = self.settings.endpoints.get(name, name)
        model = find_model(model_id)
        if model is None:
            raise ApiError(404, "InvalidEndpointOrModel.NotFound",
                           f"The model or endpoint {shown(name)} does not exist or you do not have access to it.",
                           "model")
        return ResolvedModel(model, name, model_id)

    def create(self, project: str | Caller, body: object, idempotency_key: str | None = None) -> TaskRow:
        """Create a task for a caller (or a bare project name: no member, no limits)."""
        caller = project if isinstance(project, Caller) else Caller(project, "")
        project = caller.project
        resolved = self.resolve_model(body.get("model")) if isinstance(body, dict) else None
        checked = check_create_body(body, resolved.model if resolved else None)
        if checked.problems or checked.request is None:
            raise from_problems(checked.problems)
        request = checked.request
        assert resolved is not None
        inline = check_inline_material(request.content)
        if inline:
            raise from_problems(inline)
        self._check_media_hosts(request)
        self._check_callback_url(request)
        draft_row = self._draft_of(project, request, resolved)
        to_render = self._final_from_draft(request, draft_row) if draft_row is not None else request
        now = self.now()
        seed = self._seed_for(to_render, draft_row)
        tier = effective(request, "service_tier")
        expires_after = effective(request, "execution_expires_after")
        values = {
            "id": new_task_id(now),
            "project": project,
            "model": resolved.model_id,
            "endpoint": resolved.name,
            "status": TaskStatus.QUEUED,
            "service_tier": tier,
            "tier_rank": TIER_RANK[tier],
            "priority": request.priority,
            # Rendered with the catalog id, not an endpoint id: the renderer sizes by generation.
            "request": json.dumps(to_render.model_copy(update={"model": resolved.model_id}).to_json_dict(),
                                  separators=(",", ":")),
            "seed": seed,
            "draft": bool(request.draft),
            "draft_task_id": draft_row.id if draft_row is not None else None,
            "safety_identifier": request.safety_identifier,
            "callback_url": request.callback_url,
            "execution_expires_after": expires_after,
            "deadline_at": execution_deadline(now, expires_after),
            "created_at": int(now),
            "updated_at": int(now),
            "attempts": 0,
            "generator_state": (self.forwarding.final_state(draft_row)
                                if draft_row is not None and self.forwarding is not None else None),
        }
        # The input videos' length is known only once they are read: reserve for the longest the spec
        # allows (2.0 bills their frames too), so concurrent creates cannot pass a budget; the task
        # settles at what it really cost.
        video_in = any(item.type == "video_url" for item in to_render.content)
        reservation = budgets.Reservation.of(cost(
            to_render, prices=self.prices, model=self.billed_model(resolved.model_id),
            image_size=_adaptive_image_size(to_render),
            input_video_seconds=L.REFERENCE_VIDEOS_LONGEST_S if video_in else None))

        def reserve(conn: Connection, row: TaskRow) -> None:
            refusal = budgets.reserve(conn, task_id=row.id, project=project, member=caller.member,
                                      model=resolved.model_id, reservation=reservation, now=now)
            if refusal is not None:
                raise refusal  # the budget's answer; the insert rolls back with it

        try:
            inserted = self.store.insert(
                values, quota=L.QUEUED_TASKS_PER_PROJECT_MAX, idempotency_key=idempotency_key,
                body_hash=_body_hash(body) if idempotency_key else None, reserve=reserve,
            )
        except QuotaReached:
            raise ApiError(429, "QuotaExceeded",
                           f"The project already has {L.QUEUED_TASKS_PER_PROJECT_MAX} queued tasks; "
                           "wait for some to start or cancel some.", "") from None
        except KeyReused as reused:
            if reused.task_id is None:
                raise ApiError(409, "IdempotencyKeyReused",
                               "This Idempotency-Key was used in the last 24 hours with a different body.",
                               "Idempotency-Key") from None
            raise ApiError(409, "IdempotencyKeyReused",
                           f"This Idempotency-Key created the task {reused.task_id}, which has been deleted "
                           "since; send a new key to create another.", "Idempotency-Key") from None
        return inserted.task

    def _check_media_hosts(self, request: CreateTaskRequest) -> None:
        """Media URLs whose host is, by its text, a place the service must not fetch from. Names
        are not resolved here (the fetch does, and refuses private addresses then); our own
        result URLs pass whatever their host, since they are read from storage."""
        problems = check_media_hosts(request.content, allow_loopback=self.settings.allow_loopback_inputs,
                                     trusted=self._is_own_result)
        if problems:
            raise from_problems(problems)

    def _is_own_result(self, url: str) -> bool:
        return is_own_result_url(url, self.storage)

    def _check_callback_url(self, request: CreateTaskRequest) -> None:
        """Where the callback URL resolves to; its scheme and shape were checked with the other
        rules of the contract (`dailies.spec.urls`)."""
        if request.callback_url is None:
            return
        from dailies.netguard import BlockedAddress, HostLookupTimeout, check_public_host

        url = request.callback_url
        try:
            check_public_host(url, allow_loopback=self.settings.allow_loopback_callbacks,
                              allow_private=self.settings.allow_private_callbacks,
                              lookup_timeout=CALLBACK_LOOKUP_S)
        except HostLookupTimeout as exc:
            # Nothing is known of the host: not the client's mistake, and a create holding a request
            # thread for the resolver's retries would starve the others. Asked to come back.
            raise TryAgain(f"callback_url cannot be checked now: {exc}; retry shortly.", "callback_url") from exc
        except BlockedAddress as exc:
            raise ApiError(400, "InvalidParameter", f"callback_url is refused: {exc}", "callback_url") from exc
        except ValueError as exc:
            raise ApiError(400, "InvalidParameter", f"callback_url is not usable: {exc}", "callback_url") from exc

    def _draft_of(self, project: str, request: CreateTaskRequest, resolved: ResolvedModel) -> TaskRow | None:
        items = [(i, it) for i, it in enumerate(request.content) if it.type == "draft_task"]
        if not items:
            return None
        index, item = items[0]
        where = f"content[{index}].draft_task.id"
        assert item.draft_task is not None  # the spec's models require it on a draft_task item
        row = self.store.get(project, item.draft_task.id)
        if row is None:
            # 404 as for any task id: a draft of another project answers exactly as a missing one.
            raise ApiError(404, "NotFound.Task",
                           f"{where}: draft task {shown(item.draft_task.id)} was not found.", where)
        if not row.draft:
            raise from_problems([Problem(where, f"task {row.id} is not a draft")])
        if row.status != TaskStatus.SUCCEEDED:
            raise from_problems([Problem(where, f"draft task {row.id} is {row.status}; it must have succeeded")])
        if row.created_at < oldest_kept(self.now()):
            raise from_problems([Problem(where, f"draft task {row.id} is older than 7 days")])
        if find_model(row.model) is not resolved.model:
            raise from_problems([Problem("model", f"the draft was made with {row.model}; the final must use it too")])
        return row

    @staticmethod
    def _final_from_draft(request: CreateTaskRequest, draft_row: TaskRow) -> CreateTaskRequest:
        """The request to render for a final: the draft's inputs and choices, with what the
        final may set again."""
        draft_request = json.loads(draft_row.request)
        merged = {k: v for k, v in draft_request.items() if k not in FIELDS_A_FINAL_SETS and k != "draft"}
        merged["model"] = request.model
        merged["seed"] = draft_row.seed
        # Only a succeeded draft can be finalised, so it has run: take what it actually used
        # (`adaptive` resolved to a fixed ratio, the duration the model picked for -1).
        if draft_row.result:
            used = RenderedOutput.from_json(draft_row.result)
            merged["seed"], merged["ratio"] = used.seed, used.ratio
            if used.duration is not None:
                merged["duration"] = used.duration
        for field in FIELDS_A_FINAL_SETS:
            value = getattr(request, field)
            if value is not None:
                merged[field] = value
        return CreateTaskRequest.model_validate(merged)

    @staticmethod
    def _seed_for(request: CreateTaskRequest, draft_row: TaskRow | None) -> int:
        if draft_row is not None:
            return draft_row.seed
        seed = request.seed
        if seed is None or seed == -1:
            return secrets.randbelow(L.SEED_MAX + 1)
        return seed

    # ---------- read ----------

    def record(self, row: TaskRow, base_url: str) -> dict:
        return build_record(row, self.storage, base_url)

    def get(self, project: str, task_id: str) -> TaskRow:
        row = self.store.get(project, task_id)
        if row is None:
            raise task_not_found(task_id)
        return row

    def list(self, project: str, query: ListTasksQuery) -> tuple[int, list[TaskRow]]:
        return self.store.list(project, query, int(self.now()))

    # ---------- delete ----------

    def delete(self, project: str, task_id: str) -> None:
        """queued -> cancelled; terminal -> record deleted; running or cancelled -> 409."""
        cancelled, row = self._cancel_if_waiting(project, self.get(project, task_id))
        if cancelled:
            return
        if row.status in DELETABLE:
            deleted = self.store.delete_terminal(project, task_id)
            if deleted is not None:
                delete_files(self.store, self.storage, [task_id], self.now(), quick=True, health=self.health)
                return
            row = self.get(project, task_id)
        raise _not_cancellable(row)

    def cancel(self, project: str, task_id: str) -> None:
        """Cancel a task that has not started (a gateway's: or still waits in the upstream's queue),
        never delete anything: a finished task is a 409, so a cancel sent as its task ends cannot delete
        its result the way the spec's DELETE does. A task cancelled already is answered as done (a
        retried cancel whose first answer was lost)."""
        cancelled, row = self._cancel_if_waiting(project, self.get(project, task_id))
        if cancelled or row.status == TaskStatus.CANCELLED:
            return
        if row.status in DELETABLE:
            raise ApiError(409, "InvalidAction.TaskFinished",
                           f"The task {task_id} has {row.status}: there is nothing to cancel.", "id")
        raise _not_cancellable(row)

    def _cancel_if_waiting(self, project: str, row: TaskRow) -> tuple[bool, TaskRow]:
        """Cancel `row` if it waits (queued here, or a gateway's task still queued upstream): (whether
        it was cancelled, the row as it is now)."""
        task_id = row.id
        forwarding = self.forwarding
        if row.status == TaskStatus.QUEUED and forwarding is not None and forwarding.handed_over(row):
            # Queued here again after it was handed over (a worker stopped, a download postponed): the
            # upstream has it, and cancelling it here alone would leave it running (and billed) there.
            if not forwarding.cancel_upstream(row):
                raise ApiError(409, "InvalidAction.RunningTaskDeletion",
                               f"The task {task_id} has started at the provider and cannot be cancelled.", "id")
        if row.status == TaskStatus.QUEUED:
            if self.store.cancel(project, task_id, self.now()) is not None:
                return True, row
            row = self.get(project, task_id)  # it started or ended meanwhile
        if row.status == TaskStatus.RUNNING and forwarding is not None:
            # A gateway's task is "running" here from the moment it is handed over, but it may still
            # wait in the upstream's queue, where it can be cancelled like a task queued here.
            if forwarding.cancel_running(project, row):
                return True, row
            row = self.get(project, task_id)
        return False, row


def _not_cancellable(row: TaskRow) -> ApiError:
    if row.status == TaskStatus.RUNNING:
        return ApiError(409, "InvalidAction.RunningTaskDeletion",
                        f"The task {row.id} is running and cannot be cancelled or deleted.", "id")
    return ApiError(409, "InvalidAction.CancelledTaskDeletion",
                    f"The task {row.id} was cancelled; its record is kept until it is purged.", "id")

def delete_files(store, storage, task_ids: list[str], now: float, quick: bool = False,
                 health: Health | None = None) -> None:
    """Delete the files of records just deleted; those the storage does not take now are remembered
    and deleted by a later sweep (the record's delete stands, and is answered as done). `quick` on a
    request's path (ResultStorage.delete); a storage that does not answer is reported to `health`
    (its breaker, and dailies_dependency_errors_total)."""
    try:
        storage.delete(task_ids, quick=quick)
    except Exception as exc:
        if health is not None and storage_unavailable(exc):
            health.failed(Dependency.STORAGE, exc)
        log.warning("files of %d deleted task(s) not deleted yet (%s): a sweep tries again", len(task_ids),
                    describe(exc))
        try:
            with store.write.begin() as conn:
                file_deletions.remember(conn, task_ids, now)
        except Exception as again:  # the database too: a bucket lifecycle rule is the last resort
            log.error("files of deleted task(s) %s could not be remembered either: %s", task_ids, describe(again))


def _adaptive_image_size(request: CreateTaskRequest) -> tuple[int, int] | None:
    """The size of the image `adaptive` follows when it is inline (checked already: its header is
    read again, a fraction of a millisecond), so the estimate sizes the video as the render will; None
    for a URL or an asset, which the estimate prices at the dearest ratio."""
    if (request.ratio or RATIO_DEFAULT) != "adaptive":
        return None
    try:
        image = plan_content(request).ratio_image
    except ValueError:
        return None
    if image is None or not is_data_url(image.url):
        return None
    info = read_image_info(decode_data_url(image.url)[1])
    return info.width, info.height


def _body_hash(body: object) -> str:
    """What an Idempotency-Key's replay is compared by: the body without its nulls (null means "not
    given", so a retry through a client that sends every optional field as null is the same body).
    A body without nulls hashes as it always did."""
    if isinstance(body, dict):
        body = drop_nulls(body)
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()
