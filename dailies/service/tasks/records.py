"""The task record of spec 2.5, built from a stored row: the body of GET, of list items and of
callbacks. Fields describe what the render actually used once it has run, and what it will use
before that."""

from __future__ import annotations

import functools
import json
import logging
from typing import Any

from pydantic import ValidationError

from dailies.generator.protocol import RenderedOutput
from dailies.service.storage.results import LAST_FRAME_NAME, VIDEO_NAME, ResultStorage
from dailies.service.tasks.rows import TaskRow
from dailies.spec import limits as L
from dailies.spec.catalog import find_model
from dailies.spec.lifetimes import result_url_expires_at
from dailies.spec.models import CreateTaskRequest, effective
from dailies.spec.pixels import DRAFT_RESOLUTION, RATIO_DEFAULT, RESOLUTION_DEFAULT
from dailies.spec.statuses import TaskStatus

log = logging.getLogger("dailies.records")


def result_expires_at(row: TaskRow) -> int:
    return result_url_expires_at(row.finished_at or row.updated_at)


@functools.lru_cache(maxsize=4096)
def _stored_request(text: str) -> CreateTaskRequest:
    """A stored request, parsed once: a task's request never changes, and lists and polls read the
    same tasks again and again (parsing was a fifth of building a record). Read only, never changed.

    A request stored by an older version that this one's rules refuse (a text command's seed out of
    range) is read without the fields it names, so one such record cannot turn a project's every
    list into a 500."""
    try:
        return CreateTaskRequest.model_validate_json(text)
    except ValidationError as exc:
        stored = json.loads(text)
        refused = {str(error["loc"][0]) for error in exc.errors() if error["loc"]}
        log.warning("a stored request does not validate (%s): read without them", ", ".join(sorted(refused)))
        return CreateTaskRequest.model_validate({k: v for k, v in stored.items() if k not in refused})


def build_record(row: TaskRow, storage: ResultStorage, base_url: str) -> dict[str, Any]:
    request = _stored_request(row.request)
    # What the render used, once it has run (stored by the worker with `RenderedOutput.to_json`).
    used = RenderedOutput.from_json(row.result) if row.result else None
    record: dict[str, Any] = {
        "id": row.id,
        "model": row.model,
        "status": row.status,
        "error": {"code": row.error_code, "message": row.error_message} if row.error_code else None,
        "created_at": row.created_at,
        "updated_at": row.updated_at,
    }
    if row.status == TaskStatus.SUCCEEDED and row.video_file:
        # Valid for 24 h from success, the same URL whoever builds the record and whenever.
        valid_until = result_expires_at(row)
        valid_from = valid_until - L.RESULT_URL_VALIDITY_SECONDS
        content = {"video_url": storage.url(row.id, VIDEO_NAME, valid_from, valid_until, base_url)}
        if row.last_frame_file:
            content["last_frame_url"] = storage.url(row.id, LAST_FRAME_NAME, valid_from, valid_until, base_url)
        record["content"] = content
    if used is not None:
        record["seed"] = used.seed
        record["resolution"] = used.resolution
        record["ratio"] = used.ratio
    else:
        record["seed"] = row.seed
        record["resolution"] = DRAFT_RESOLUTION if row.draft else request.resolution or RESOLUTION_DEFAULT
        record["ratio"] = request.ratio or RATIO_DEFAULT
    # `frames` only when it was asked for; otherwise `duration`, never both (spec 2.5).
    if request.frames is not None:
        record["frames"] = used.frames if used is not None else request.frames
    else:
        record["duration"] = used.duration if used is not None else effective(request, "duration")
    record["framespersecond"] = used.fps if used is not None else L.FRAMES_PER_SECOND
    record["generate_audio"] = used.generate_audio if used is not None else _generate_audio(request, row)
    if request.tools:
        record["tools"] = used.tools_used if used is not None else [t.model_dump() for t in request.tools]
    if row.safety_identifier is not None:
        record["safety_identifier"] = row.safety_identifier
    if row.priority is not None:
        record["priority"] = row.priority
    record["draft"] = bool(row.draft)
    if row.draft_task_id:
        record["draft_task_id"] = row.draft_task_id
    record["service_tier"] = row.service_tier
    record["execution_expires_after"] = row.execution_expires_after
    if row.status == TaskStatus.SUCCEEDED and used is not None:
        usage: dict[str, Any] = {"completion_tokens": used.completion_tokens,
                                 "total_tokens": used.completion_tokens}
        if request.tools:
            usage["tool_usage"] = {"web_search": used.web_search_calls}
        record["usage"] = usage
    return record


def _generate_audio(request: CreateTaskRequest, row: TaskRow) -> bool:
    model = find_model(row.model)
    if model is not None and not model.capabilities.generate_audio:
        return False
    return bool(effective(request, "generate_audio"))
