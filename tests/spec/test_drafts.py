"""What a final takes from its draft and what it sets again: every request field is one or the
other, or no final's at all."""

from __future__ import annotations

from dailies.spec.drafts import FIELDS_A_FINAL_SETS, FIELDS_TAKEN_FROM_DRAFT
from dailies.spec.models import CreateTaskRequest
from dailies.spec.rules import check_request

V15 = "doubao-seedance-1-5-pro-251215"
FINAL = [{"type": "draft_task", "draft_task": {"id": "cgt-20250101000000-abcde"}}]
# The content itself, and what a final cannot be given: it is no draft, and priority and tools are
# generation 2.0's, which makes no drafts.
NOT_A_FINALS = {"model", "content", "draft", "priority", "tools"}


def test_every_request_field_is_taken_set_or_not_a_finals() -> None:
    taken, sets = set(FIELDS_TAKEN_FROM_DRAFT), set(FIELDS_A_FINAL_SETS)
    assert not taken & sets and not (taken | sets) & NOT_A_FINALS
    assert taken | sets | NOT_A_FINALS == set(CreateTaskRequest.model_fields)


def test_a_final_may_set_what_it_sets() -> None:
    values = {"resolution": "1080p", "watermark": True, "service_tier": "flex", "return_last_frame": True,
              "callback_url": "https://example.com/hook", "execution_expires_after": 7200,
              "safety_identifier": "user-1"}
    assert set(values) == set(FIELDS_A_FINAL_SETS)
    assert check_request(CreateTaskRequest(model=V15, content=FINAL, **values)) == []
