"""Pydantic v2 models for every table of the specification (sections 2.1, 2.2, 2.4, 2.5, 2.6, 7).

Request models are closed and strict, as JSON types are: an unknown field is an error naming it,
`"yes"` is not a boolean, `5.5` and `true` are not integers. JSON `null` means "not given"
(clients such as the official SDK send every optional field). Response models are open: a newer
server may add fields, and an old client must not break on them.

Ranges and enumerations come from `limits`; rules that look at more than one field live in `rules`.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from . import limits as L
from .statuses import TERMINAL, FilterStatus

ContentType = Literal["text", "image_url", "video_url", "audio_url", "draft_task"]
Role = Literal["first_frame", "last_frame", "reference_image", "reference_video", "reference_audio"]
ServiceTier = Literal["default", "flex"]
Resolution = Literal["480p", "720p", "1080p", "4k"]
Ratio = Literal["16:9", "4:3", "1:1", "3:4", "9:16", "21:9", "adaptive"]
ToolType = Literal["web_search"]


class _Closed(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)


class _Open(BaseModel):
    model_config = ConfigDict(extra="allow")


# ---------- 2.2 content items ----------


class MediaUrl(_Closed):
    url: str = Field(min_length=1, description="Public URL, Base64 data URL, or asset://<ASSET_ID>.")


class DraftTaskRef(_Closed):
    id: str = Field(min_length=1, description="ID of a generation 1.5 Pro draft task.")


class ContentItem(_Closed):
    """One element of `content`. Which of the payload fields must be present depends on `type`;
    the rules module checks that, so every problem is reported at once with its path."""

    type: ContentType
    text: str | None = None
    image_url: MediaUrl | None = None
    video_url: MediaUrl | None = None
    audio_url: MediaUrl | None = None
    role: Role | None = None
    draft_task: DraftTaskRef | None = None


class Tool(_Closed):
    type: ToolType


# ---------- 2.1 creation request ----------


class CreateTaskRequest(_Closed):
    """Body of `POST /api/v3/contents/generations/tasks`. Fields left as None were not given;
    their defaults are in the `*_DEFAULT` constants and applied by `effective_*` helpers."""

    model: str = Field(min_length=1)
    content: list[ContentItem] = Field(min_length=1)
    callback_url: str | None = Field(default=None, min_length=1)
    return_last_frame: bool | None = None
    service_tier: ServiceTier | None = None
    execution_expires_after: Annotated[
        int | None, Field(ge=L.EXECUTION_EXPIRES_MIN, le=L.EXECUTION_EXPIRES_MAX)
    ] = None
    generate_audio: bool | None = None
    draft: bool | None = None
    tools: list[Tool] | None = None
    safety_identifier: str | None = Field(
        default=None, max_length=L.SAFETY_IDENTIFIER_MAX_CHARS, pattern=r"^[\x00-\x7f]*$"
    )
    priority: Annotated[int | None, Field(ge=L.PRIORITY_MIN, le=L.PRIORITY_MAX)] = None
    resolution: Resolution | None = None
    ratio: Ratio | None = None
    duration: int | None = None
    frames: int | None = None
    seed: Annotated[int | None, Field(ge=L.SEED_MIN, le=L.SEED_MAX)] = None
    camera_fixed: bool | None = None
    watermark: bool | None = None

    def to_json_dict(self) -> dict[str, Any]:
        """The request as the JSON body a client sends: unset fields left out."""
        return self.model_dump(mode="json", exclude_none=True)


# Parameters the official SDK sends (as null when unset) that the spec does not define. They are
# accepted only as null, so the SDK works unchanged while the schema stays closed.
SDK_ONLY_FIELDS: tuple[str, ...] = ("output_format", "omni_reference_task_type")

DEFAULTS: dict[str, Any] = {
    "return_last_frame": False,
    "service_tier": "default",
    "execution_expires_after": L.EXECUTION_EXPIRES_DEFAULT,
    "generate_audio": True,
    "draft": False,
    "duration": L.DURATION_DEFAULT,
    "seed": L.SEED_DEFAULT,
    "camera_fixed": False,
    "watermark": False,
}


def effective(request: CreateTaskRequest, field: str) -> Any:
    """A request field's value, or the spec's default when it was not given."""
    value = getattr(request, field)
    return DEFAULTS.get(field) if value is None else value


# ---------- 2.4 creation response ----------


class CreateTaskResponse(_Open):
    id: str
    safety_identifier: str | None = None


# ---------- 2.5 task record ----------


class TaskError(_Open):
    code: str
    message: str


class TaskContent(_Open):
    video_url: str | None = None
    last_frame_url: str | None = None


class ToolUsage(_Open):
    web_search: int | None = None


class Usage(_Open):
    completion_tokens: int | None = None
    total_tokens: int | None = None
    tool_usage: ToolUsage | None = None


class TaskRecord(_Open):
    id: str
    model: str | None = None
    # A plain string, not `statuses.TaskStatus`: a newer server may add a status and old clients must not break.
    status: str
    error: TaskError | None = None
    created_at: int | None = None
    updated_at: int | None = None
    content: TaskContent | None = None
    seed: int | None = None
    resolution: str | None = None
    ratio: str | None = None
    duration: int | None = None
    frames: int | None = None
    framespersecond: int | None = None
    generate_audio: bool | None = None
    tools: list[dict[str, Any]] | None = None
    safety_identifier: str | None = None
    priority: int | None = None
    draft: bool | None = None
    draft_task_id: str | None = None
    service_tier: str | None = None
    execution_expires_after: int | None = None
    usage: Usage | None = None

    @property
    def is_terminal(self) -> bool:
        return self.status in TERMINAL


# ---------- 2.6 list response and 4.2 query ----------


class ListTasksResponse(_Open):
    total: int
    items: list[TaskRecord]


class ListTasksQuery(_Closed):
    """Query of `GET /api/v3/contents/generations/tasks`; field names as in the query string."""

    model_config = ConfigDict(extra="forbid", strict=False, frozen=True, populate_by_name=True)

    page_num: int = Field(default=L.PAGE_NUM_DEFAULT, ge=L.PAGE_NUM_MIN, le=L.PAGE_NUM_MAX)
    page_size: int = Field(default=L.PAGE_SIZE_DEFAULT, ge=L.PAGE_SIZE_MIN, le=L.PAGE_SIZE_MAX)
    status: FilterStatus | None = Field(default=None, alias="filter.status")
    task_ids: list[Annotated[str, Field(max_length=L.TASK_ID_MAX_CHARS)]] | None = Field(
        default=None, alias="filter.task_ids", max_length=L.TASK_IDS_FILTER_MAX)
    model: str | None = Field(default=None, alias="filter.model")
    service_tier: ServiceTier = Field(default="default", alias="filter.service_tier")

    def to_params(self) -> list[tuple[str, str | int]]:
        """Query parameters, task ids repeated (`filter.task_ids=a&filter.task_ids=b`)."""
        params: list[tuple[str, str | int]] = [
            ("page_num", self.page_num),
            ("page_size", self.page_size),
            ("filter.service_tier", self.service_tier),
        ]
        if self.status:
            params.append(("filter.status", self.status))
        if self.model:
            params.append(("filter.model", self.model))
        for task_id in self.task_ids or ():
            params.append(("filter.task_ids", task_id))
        return params


# ---------- beyond the specification: a task's callback delivery log ----------


class CallbackAttempt(_Open):
    """One delivery of a task's callback (`GET /dailies/v1/tasks/{id}/callbacks`, Dailies only): an
    attempt made, or, with `pending`, the next one due at `at`."""

    webhook_id: str | None = None
    status: str | None = None  # the task status the callback reports
    attempt: int
    at: float | None = None
    status_code: int | None = None  # the receiver's answer; None when it did not answer
    latency_ms: float | None = None
    error: str | None = None
    pending: bool = False


class CallbackLog(_Open):
    """A task's callback deliveries, oldest first."""

    items: list[CallbackAttempt]


class SpendItem(_Open):
    """Spend of one day (UTC), member, model, currency and state (settled or reserved) of a project,
    from a Dailies service's ledger (`GET /dailies/v1/spend`, beyond the specification)."""

    day: str
    member: str = ""
    model: str
    currency: str | None = None  # None: the model has no known price
    state: str
    tasks: int
    tokens: int
    amount: Decimal


class SpendBudget(_Open):
    member: str | None = None  # None: the whole project
    period: str  # "2026-11" or "total"
    currency: str
    amount: Decimal
    spent: Decimal
    reserved: Decimal
    left: Decimal


class SpendReport(_Open):
    items: list[SpendItem]
    budgets: list[SpendBudget] = []


class UpstreamKeyHealth(_Open):
    name: str
    healthy: bool


class Upstream(_Open):
    url: str
    region: str | None = None  # "volcengine" | "byteplus" | None (another Dailies, a proxy)
    keys: list[UpstreamKeyHealth] = []
    concurrency: int | None = None


class Identity(_Open):
    """Who a key is on a Dailies service (`GET /dailies/v1/me`, beyond the specification): its project
    and member name, never the key."""

    project: str
    member: str | None = None


class Members(_Open):
    """The named members of the key's project (`GET /dailies/v1/members`, beyond the specification): the
    member names of its keys, for `@name` in comments; never a key."""

    project: str
    members: list[str] = []


class NotificationTarget(_Open):
    """Where a project's notifications go (`/dailies/v1/notifications/targets`, beyond the specification):
    the project's channel (no owner) or one person's own, taking the event kinds listed."""

    id: str
    kind: str  # webhook | slack | mattermost | email
    address: str
    events: list[str] = []
    owner: str | None = None


class NotificationTargets(_Open):
    """A project's notification targets, and what this service offers: e-mail or not, the kinds."""

    targets: list[NotificationTarget] = []
    email: bool = False
    events: list[str] = []
    kinds: list[str] = []


class LiveVersion(_Open):
    """One version of a live session, with its result's URL when it was read (signed, as a get answers)."""

    task_id: str
    label: str = ""
    video_url: str | None = None
    duration: float | None = None
    fps: float | None = None
    status: str | None = None


class LiveSession(_Open):
    """A live review session (`/dailies/v1/live`, beyond the specification): who presents, the versions,
    the presenter's player's state and how many changes it has had (`seq`). The tokens only when started."""

    id: str
    title: str = ""
    versions: list[LiveVersion] = []
    presenter: str = ""
    state: dict[str, Any] | None = None
    seq: int = 0
    ended: bool = False
    follow_url: str | None = None
    state_url: str | None = None
    server_time: float | None = None
    control_token: str | None = None
    follow_token: str | None = None


class ServiceInfo(_Open):
    """What a Dailies service is (`GET /dailies/v1/service`, beyond the specification)."""

    mode: str  # "preview" (the local renderer) | "gateway"
    upstream: Upstream | None = None



class InlineMedium(_Open):
    """What an inline (`data:` URL) input was: its media type, size in bytes and, for an image, its
    width and height as stored."""

    media_type: str | None = None
    bytes: int | None = None
    width: int | None = None
    height: int | None = None


class StoredMediaUrl(_Open):
    """An input as `GET /dailies/v1/tasks/{id}/request` gives it: the URL as sent, or for an inline
    image a small JPEG thumbnail data URL; None for an inline video or audio (`inline` says what it was)."""

    url: str | None = None
    inline: InlineMedium | None = None


class StoredContentItem(_Open):
    type: str
    text: str | None = None
    image_url: StoredMediaUrl | None = None
    video_url: StoredMediaUrl | None = None
    audio_url: StoredMediaUrl | None = None
    role: str | None = None
    draft_task: DraftTaskRef | None = None


class TaskRequest(_Open):
    """A task's stored request, its prompt and inputs (`GET /dailies/v1/tasks/{id}/request`, beyond the
    specification): inline images as thumbnails, never the data; no `callback_url`. The request's other
    parameters as it set them (text commands included) are fields too, `None` when it did not set them."""

    id: str
    model: str
    created_by: str | None = None  # the member name of the key that created it
    created_at: int
    prompt: str | None = None  # the text item's text, `--` commands included
    content: list[StoredContentItem]
    draft_task_id: str | None = None  # a final: the draft whose inputs it holds
    resolution: str | None = None
    ratio: str | None = None
    duration: int | None = None
    frames: int | None = None
    seed: int | None = None
    camera_fixed: bool | None = None
    watermark: bool | None = None
    generate_audio: bool | None = None
    return_last_frame: bool | None = None
    service_tier: str | None = None
    execution_expires_after: int | None = None
    draft: bool | None = None
    tools: list[dict[str, Any]] | None = None
    safety_identifier: str | None = None
    priority: int | None = None


# ---------- 7 errors ----------


class ErrorDetail(_Open):
    message: str
    type: str
    param: str | None = None
    code: str


class ErrorResponse(_Open):
    error: ErrorDetail
