"""The service's tables: one place for every table of every room (SQLAlchemy Core), so that the schema,
its migrations and every query read one definition. The counters' table and triggers are DDL of their
own (counters.py); what each table is for is said beside it."""

from __future__ import annotations

from enum import StrEnum
from typing import Any

from sqlalchemy import BigInteger, Boolean, Column, Float, Index, Integer, MetaData, String, Table, Text
from sqlalchemy.types import TypeEngine

metadata = MetaData()

# Row counters: 64-bit on PostgreSQL; on SQLite an `INTEGER PRIMARY KEY` (the rowid) is already
# 64-bit and only that exact type name autoincrements.
Serial = BigInteger().with_variant(Integer, "sqlite")
# Unix seconds outlive 2038 in 64 bits; seeds reach 2**32 - 1, past PostgreSQL's INTEGER.
Epoch = BigInteger

# The scheduler's first key: the online tier before flex (offline, cheaper, may wait hours).
TIER_RANK = {"default": 0, "flex": 1}
DEFAULT_TIER_RANK = TIER_RANK["default"]


def _one_value_per_key(name: str, key: str, value: str, value_type: type[TypeEngine[Any]]) -> Table:
    """A table of one required value per string key: the shape four tables below share."""
    return Table(name, metadata, Column(key, String, primary_key=True), Column(value, value_type, nullable=False))


tasks = Table(
    "tasks", metadata,
    Column("seq", Serial, primary_key=True, autoincrement=True),
    Column("id", String, nullable=False, unique=True),
    Column("project", String, nullable=False),
    Column("model", String, nullable=False),  # the model id, as the record shows it
    Column("endpoint", String, nullable=False),  # what the request named; filter.model matches it
    Column("status", String, nullable=False),
    Column("service_tier", String, nullable=False),
    Column("tier_rank", Integer, nullable=False),  # TIER_RANK: the scheduler's first key
    Column("priority", Integer),
    Column("request", Text, nullable=False),  # the request to render, as JSON
    Column("seed", BigInteger, nullable=False),  # the seed used: drawn at creation when -1 or not given
    Column("draft", Boolean, nullable=False, default=False),
    Column("draft_task_id", String),
    Column("safety_identifier", String),
    Column("callback_url", String),
    Column("execution_expires_after", Integer, nullable=False),
    Column("deadline_at", Epoch, nullable=False),
    Column("created_at", Epoch, nullable=False),
    Column("updated_at", Epoch, nullable=False),
    Column("started_at", Epoch),
    Column("finished_at", Epoch),
    Column("worker_id", String),
    Column("heartbeat_at", Float),
    Column("attempts", Integer, nullable=False, default=0),
    Column("error_code", String),
    Column("error_message", Text),
    Column("result", Text),  # what the render actually used, as JSON
    Column("video_file", String),
    Column("last_frame_file", String),
    Column("generator_state", Text),  # what the generator checkpointed (RenderJob.state), as JSON
    Index("ix_tasks_list", "project", "service_tier", "created_at"),
    Index("ix_tasks_list_status", "project", "service_tier", "status", "created_at"),
    Index("ix_tasks_list_endpoint", "project", "service_tier", "endpoint", "created_at"),
    # The create path's quota check counts a project's queued tasks; the list indexes put the
    # tier between project and status, so without this one it reads all of the project's tasks.
    Index("ix_tasks_project_status", "project", "status"),
    Index("ix_tasks_queue", "status", "tier_rank", "endpoint", "created_at"),
    Index("ix_tasks_deadline", "status", "deadline_at"),
    Index("ix_tasks_created", "created_at"),
)

idempotency = Table(
    "idempotency", metadata,
    Column("project", String, primary_key=True),
    Column("key", String, primary_key=True),
    Column("body_hash", String, nullable=False),
    Column("task_id", String, nullable=False),
    Column("created_at", Epoch, nullable=False),
)

class DeliveryState(StrEnum):
    """A callback event's `state`: waiting for a (next) attempt, received, or given up."""

    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"


# One row per callback event (a task's status change to be POSTed), written in the same
# transaction as the change itself, so no event is lost to a crash.
callback_events = Table(
    "callback_events", metadata,
    Column("seq", Serial, primary_key=True, autoincrement=True),
    Column("webhook_id", String, nullable=False, unique=True),
    Column("task_id", String, nullable=False),
    Column("project", String, nullable=False),
    Column("url", String, nullable=False),  # the receiver (a notification's: its target's address)
    Column("status", String, nullable=False),  # the task status it reports
    Column("body", Text, nullable=False),  # the JSON to POST, made when the status changed
    Column("state", String, nullable=False),  # DeliveryState
    Column("attempts", Integer, nullable=False, default=0),
    Column("max_attempts", Integer, nullable=False),
    Column("next_attempt_at", Float, nullable=False),  # unix seconds: now, or after a failure's backoff
    Column("created_at", Float, nullable=False),
    Column("claimed_by", String),  # the node delivering it now, until claimed_at goes stale
    Column("claimed_at", Float),
    # None for a task's callback; a notification's target kind (notifications.py), whose events are
    # queued under the target's id in `task_id` (in order per target, folded while they wait).
    Column("channel", String),
    Index("ix_callback_due", "state", "next_attempt_at"),
    Index("ix_callback_task", "task_id", "seq"),
)

callback_attempts = Table(
    "callback_attempts", metadata,
    Column("seq", Serial, primary_key=True, autoincrement=True),
    Column("webhook_id", String, nullable=False),
    Column("task_id", String, nullable=False),
    Column("status", String, nullable=False),  # the task status the event reported
    Column("attempt", Integer, nullable=False),  # 1 for the first
    Column("at", Float, nullable=False),
    Column("status_code", Integer),  # the receiver's answer; None when none came
    Column("latency_ms", Float),
    Column("error", Text),  # why it failed, when it did
    Index("ix_callback_attempts_task", "task_id", "seq"),
)


# Where a project's notifications go (dailies/spec/notifications.py): a project's channel (owner '')
# or a person's own target, taking the event kinds listed (comma separated).
notification_targets = Table(
    "notification_targets", metadata,
    Column("id", String, primary_key=True),  # nt-…, the key of its queued events
    Column("project", String, nullable=False),
    Column("owner", String, nullable=False),  # '' for the project's channel, else the member it tells
    Column("kind", String, nullable=False),  # webhook | slack | mattermost | email
    Column("address", String, nullable=False),  # an https URL, or an e-mail address
    Column("events", String, nullable=False),
    Column("created_by", String, nullable=False),  # the member who added it
    Column("created_at", Epoch, nullable=False),
    Index("ix_notification_targets_project", "project"),
)

# What was told once and must not be told again (a budget's 80% of a month): inserted with the message.
notification_marks = Table(
    "notification_marks", metadata,
    Column("mark", String, primary_key=True),
    Column("at", Epoch, nullable=False),
)


# A live review session (sessions/live.py): what its presenter's player says now (`state`, `seq` counting
# its changes), who presents, and the tokens that control it (SHA-256 only) and follow it.
live_sessions = Table(
    "live_sessions", metadata,
    Column("id", String, primary_key=True),  # live-…
    Column("project", String, nullable=False),
    Column("title", String, nullable=False),  # what the presenter called it
    Column("versions", Text, nullable=False),  # JSON [{"task_id", "label"}]
    Column("presenter", String, nullable=False),  # the member who controls it now
    Column("control_sha256", String, nullable=False),
    Column("follow_token", String, nullable=False),  # in the session's link, which every member may ask for
    Column("state", Text),  # the presenter's player, as JSON (dailies/spec/live.py)
    Column("seq", Integer, nullable=False),  # counts the state's changes: a follower asks for what is after
    Column("created_by", String, nullable=False),
    Column("created_at", Epoch, nullable=False),
    Column("updated_at", Float, nullable=False),  # unix seconds with their fraction, of the last change
    Column("ended_at", Epoch),
    Index("ix_live_sessions_project", "project", "created_at"),
)


# Secrets and keys that every machine of a team deployment needs, so they live in the database and
# not in one machine's data directory (README, "Team deployment"). On SQLite they stay unused: the
# keys file of the data directory holds them, as it always did.
service_secrets = _one_value_per_key("service_secrets", "name", "value", Text)  # name e.g. "url-signing"
project_secrets = _one_value_per_key("project_secrets", "project", "webhook_secret", Text)

# Keys made by `dailies keys create` on a team database. Only a SHA-256 of each key is kept: a
# copy of the database does not hand out working keys.
api_keys = Table(
    "api_keys", metadata,
    Column("key_sha256", String, primary_key=True),
    Column("project", String, nullable=False),
    Column("masked", String, nullable=False),  # what `dailies keys` may show
    Column("created_at", Epoch, nullable=False),
    Column("name", String),  # the member name (members.py), shown where the key never is
    Column("rpm", Integer),  # creates per minute, None: no limit
    Column("read_rpm", Integer),  # lists and gets per minute
)

# Money in millionths of the currency unit (integers: exact, and the same on SQLite and PostgreSQL).
Micros = BigInteger

# A budget per project ('' member) or per member of a project, per calendar month (UTC) or in total.
budgets = Table(
    "budgets", metadata,
    Column("project", String, primary_key=True),
    Column("member", String, primary_key=True),  # '' for the whole project
    Column("period", String, nullable=False),  # month | total
    Column("currency", String, nullable=False),  # CNY | USD
    Column("amount", Micros, nullable=False),  # the cap
    Column("updated_at", Epoch, nullable=False),
)

# One row per task: what it is expected to cost (reserved at create), then what it cost (settled at
# success) or nothing (released on failure, cancellation, expiry). Kept after the task's record is
# purged: it is the bill. budgets.py holds the statements.
ledger = Table(
    "ledger", metadata,
    Column("task_id", String, primary_key=True),
    Column("project", String, nullable=False),
    Column("member", String, nullable=False),  # '' for a key without a member
    Column("model", String, nullable=False),  # the model id, as the record shows it
    Column("currency", String, nullable=False),  # '' when the model has no known price
    Column("amount", Micros, nullable=False),  # reserved: expected; settled: what it cost
    Column("tokens", BigInteger, nullable=False),  # the usage the amount is priced on
    Column("state", String, nullable=False),  # reserved | settled | released
    Column("month", Integer, nullable=False),  # YYYYMM (UTC) of the create: the period a month budget counts
    Column("created_at", Epoch, nullable=False),
    Column("settled_at", Epoch),
    Column("upstream_key", String),  # a gateway's: the name of the upstream key the task ran on
    Index("ix_ledger_project", "project", "month", "state"),
)

# Requests per key and minute: one row per (key, kind, minute), counted by one guarded upsert
# (rate_limits.py), shared by every API node.
rate_windows = Table(
    "rate_windows", metadata,
    Column("key_id", String, primary_key=True),
    Column("kind", String, primary_key=True),  # create | read
    Column("window", Epoch, primary_key=True),  # unix minute start
    Column("n", Integer, nullable=False),
)

# A gateway's upstream creates, one row each (upstream key name, upstream model id, when it was let
# go): the sliding window of `--upstream-rpm` (upstream_pacing.py), shared by every worker.
upstream_creates = Table(
    "upstream_creates", metadata,
    Column("seq", Serial, primary_key=True, autoincrement=True),
    Column("upstream_key", String, nullable=False),
    Column("model", String, nullable=False),
    Column("at", Float, nullable=False),  # unix seconds, with their fraction
    Index("ix_upstream_creates_pair", "upstream_key", "model", "at"),
)


files_to_delete = _one_value_per_key("files_to_delete", "task_id", "since", Epoch)
# answer: the endpoint's JSON body, under 100 KB
shown_requests = _one_value_per_key("shown_requests", "task_id", "answer", Text)


upstream_keys = Table(
    "upstream_keys", metadata,
    Column("name", String, primary_key=True),
    Column("priority", Integer, nullable=False),  # lower first; a rate-limited key yields to the next
    Column("ciphertext", Text, nullable=False),  # the key, sealed with the service's secret
    Column("masked", String, nullable=False),
    Column("created_at", Epoch, nullable=False),
    Column("set_aside", String),  # why the upstream refused it (401/403), when it did
)
