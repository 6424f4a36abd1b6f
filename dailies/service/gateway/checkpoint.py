"""What a gateway's render saves with its task (`tasks.generator_state`, `RenderJob.state`): the one
type every module reads it through.

Stored as the JSON object earlier versions wrote, key for key (a task in flight across an upgrade
goes on from it, and a task checkpointed by this version can still be read by the one before): a
field is written only when it is set, and keys this version does not know are ignored.
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from dailies.service.billing.budgets import UpstreamBill

CREATING = "creating"  # the create is about to be sent, or was sent and not answered
RUNNING = "running"  # the upstream answered with its task's id
_FLAGS = frozenset({"upstream_ended", "upstream_missing", "upstream_succeeded"})
_TIMES = frozenset({"sent_at", "created_at"})


@dataclass(frozen=True, kw_only=True)
class UpstreamCheckpoint:
    # A final: the upstream task of its draft, which the upstream finalises (set at create here).
    draft_upstream_id: str | None = None
    phase: str | None = None
    key: str | None = None  # the upstream key's name the task was created with
    sent_at: float | None = None  # when the create was let go (wall clock)
    upstream_id: str | None = None
    # The upstream ended the task unbilled (failed, expired, cancelled there).
    upstream_ended: bool = False
    # The upstream answered 404 for it long enough to be believed.
    upstream_missing: bool = False
    # The upstream made (and billed) it: its result may still fail to be taken here.
    upstream_succeeded: bool = False
    # An orphan's (a create answered after the task ended here): when that answer came.
    created_at: float | None = None

    # ---------- the stored form ----------

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None) -> UpstreamCheckpoint:
        """A checkpoint from its JSON object, as any version wrote it: a value of the wrong type is
        read as absent (never an error: the task must go on or be settled)."""
        if not isinstance(data, Mapping):
            return cls()
        values: dict[str, Any] = {}
        for f in fields(cls):
            value = data.get(f.name)
            if f.name in _FLAGS:
                values[f.name] = bool(value)
            elif f.name in _TIMES:
                number = isinstance(value, int | float) and not isinstance(value, bool)
                values[f.name] = value if number else None
            else:
                values[f.name] = value if isinstance(value, str) and value else None
        return cls(**values)

    @classmethod
    def from_json(cls, text: str | None) -> UpstreamCheckpoint:
        if not text:
            return cls()
        try:
            return cls.from_dict(json.loads(text))
        except ValueError:
            return cls()

    def to_dict(self) -> dict[str, Any]:
        """The JSON object, with only what is set (as earlier versions wrote it)."""
        out: dict[str, Any] = {}
        for f in fields(self):
            value = getattr(self, f.name)
            if value is not None and value is not False:
                out[f.name] = value
        return out

    def to_json(self) -> str:
        return json.dumps(self.to_dict())

    def but(self, **changes: Any) -> UpstreamCheckpoint:
        return dataclasses.replace(self, **changes)

    # ---------- what it says ----------

    @property
    def handed_over(self) -> bool:
        """Created upstream: the upstream's id is known."""
        return self.upstream_id is not None

    @property
    def outcome_unknown(self) -> bool:
        """A create was sent and its answer never recorded: it is never sent again."""
        return self.upstream_id is None and self.phase == CREATING

    @property
    def kept(self) -> UpstreamCheckpoint:
        """What a task starts with and keeps in every checkpoint (a final's draft)."""
        return UpstreamCheckpoint(draft_upstream_id=self.draft_upstream_id)

    @property
    def bill(self) -> UpstreamBill:
        """What the upstream may bill for the task, as the ledger reads it (budgets.py decides)."""
        if self.upstream_succeeded:
            return UpstreamBill.MADE
        if self.upstream_ended:
            return UpstreamBill.NONE
        if self.upstream_id is not None:
            return UpstreamBill.HANDED
        if self.phase == CREATING:
            return UpstreamBill.UNANSWERED
        return UpstreamBill.NONE
