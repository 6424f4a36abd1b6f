"""Spec 2.1, 2.2, 2.4 to 2.6, 4.2 and 7 as tables: every field with a valid value and a value out of
range on each side, every enumeration with a valid and an invalid value, the strictness of JSON
types, the closed request schema and the open response models."""

from __future__ import annotations

from typing import Any

import pytest
from pydantic import ValidationError

from dailies.spec.models import (
    CreateTaskRequest,
    CreateTaskResponse,
    ErrorResponse,
    ListTasksQuery,
    ListTasksResponse,
    TaskRecord,
)
from dailies.spec.problems import INVALID, MISSING
from dailies.spec.statuses import TERMINAL, TaskStatus
from dailies.spec.validation import check_create_body

from .builders import V10, V15, V20, audio, body, draft_task, image, paths, text, video

OK = None  # expected problem path for an accepted value

# (field, value, model on which the value is fully acceptable, expected problem path or OK).
# Follows the rows of spec 2.1 top to bottom.
FIELD_TABLE = [
    # model: string, required
    ("model", V20, V20, OK),
    ("model", "", V20, "model"),
    ("model", 20, V20, "model"),
    # callback_url: string (URI)
    ("callback_url", "https://example.com/hook", V20, OK),
    ("callback_url", "", V20, "callback_url"),
    ("callback_url", 5, V20, "callback_url"),
    # return_last_frame: boolean
    ("return_last_frame", True, V20, OK),
    ("return_last_frame", False, V20, OK),
    ("return_last_frame", "yes", V20, "return_last_frame"),
    ("return_last_frame", 1, V20, "return_last_frame"),
    # service_tier: default | flex
    ("service_tier", "default", V20, OK),
    ("service_tier", "flex", V15, OK),
    ("service_tier", "offline", V15, "service_tier"),
    ("service_tier", "Default", V20, "service_tier"),
    # execution_expires_after: 3600 <= value <= 259200
    ("execution_expires_after", 3599, V20, "execution_expires_after"),
    ("execution_expires_after", 3600, V20, OK),
    ("execution_expires_after", 172800, V20, OK),
    ("execution_expires_after", 259200, V20, OK),
    ("execution_expires_after", 259201, V20, "execution_expires_after"),
    ("execution_expires_after", "3600", V20, "execution_expires_after"),
    ("execution_expires_after", 3600.5, V20, "execution_expires_after"),
    # generate_audio: boolean
    ("generate_audio", True, V20, OK),
    ("generate_audio", False, V10, OK),
    ("generate_audio", "yes", V20, "generate_audio"),
    ("generate_audio", 0, V20, "generate_audio"),
    # draft: boolean
    ("draft", True, V15, OK),
    ("draft", False, V20, OK),
    ("draft", "false", V15, "draft"),
    # tools: array of objects, type web_search
    ("tools", [{"type": "web_search"}], V20, OK),
    ("tools", [{"type": "image_search"}], V20, "tools[0].type"),
    ("tools", {"type": "web_search"}, V20, "tools"),
    ("tools", ["web_search"], V20, "tools[0]"),
    # safety_identifier: <= 64 ASCII characters
    ("safety_identifier", "u" * 64, V20, OK),
    ("safety_identifier", "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08", V20, OK),
    ("safety_identifier", "u" * 65, V20, "safety_identifier"),
    ("safety_identifier", "user-é", V20, "safety_identifier"),
    ("safety_identifier", "用户", V20, "safety_identifier"),
    ("safety_identifier", 42, V20, "safety_identifier"),
    # priority: 0 <= value <= 9
    ("priority", -1, V20, "priority"),
    ("priority", 0, V20, OK),
    ("priority", 9, V20, OK),
    ("priority", 10, V20, "priority"),
    ("priority", 5.5, V20, "priority"),
    ("priority", True, V20, "priority"),
    ("priority", "5", V20, "priority"),
    # resolution: 480p | 720p | 1080p | 4k
    ("resolution", "480p", V20, OK),
    ("resolution", "720p", V20, OK),
    ("resolution", "1080p", V20, OK),
    ("resolution", "4k", V20, OK),
    ("resolution", "2k", V20, "resolution"),
    ("resolution", "720P", V20, "resolution"),
    ("resolution", 720, V20, "resolution"),
    # ratio: 16:9 | 4:3 | 1:1 | 3:4 | 9:16 | 21:9 | adaptive
    *[("ratio", r, V20, OK) for r in ("16:9", "4:3", "1:1", "3:4", "9:16", "21:9", "adaptive")],
    ("ratio", "2:1", V20, "ratio"),
    ("ratio", "16/9", V20, "ratio"),
    # duration: integer
    ("duration", 5, V20, OK),
    ("duration", "5", V20, "duration"),
    ("duration", 5.5, V20, "duration"),
    ("duration", True, V20, "duration"),
    # frames: integer
    ("frames", 121, V10, OK),
    ("frames", "121", V10, "frames"),
    ("frames", 121.5, V10, "frames"),
    # seed: -1 <= value <= 4294967295
    ("seed", -2, V15, "seed"),
    ("seed", -1, V15, OK),
    ("seed", 4294967295, V15, OK),
    ("seed", 4294967296, V15, "seed"),
    ("seed", "7", V15, "seed"),
    # camera_fixed: boolean
    ("camera_fixed", True, V15, OK),
    ("camera_fixed", "yes", V15, "camera_fixed"),
    # watermark: boolean
    ("watermark", True, V20, OK),
    ("watermark", False, V20, OK),
    ("watermark", "yes", V20, "watermark"),
    ("watermark", 0, V20, "watermark"),
]


def _id(row: tuple[str, Any, str, str | None]) -> str:
    field, value, _, expected = row
    return f"{field}={value!r:.24}-{'ok' if expected is OK else 'bad'}"


@pytest.mark.parametrize(("field", "value", "model", "expected"), FIELD_TABLE, ids=[_id(r) for r in FIELD_TABLE])
def test_request_field(field: str, value: Any, model: str, expected: str | None) -> None:
    given = body(model, **{field: value}) if field != "model" else {"model": value, "content": [text()]}
    checked = check_create_body(given)
    if expected is OK:
        assert checked.ok, [str(p) for p in checked.problems]
        assert checked.request.to_json_dict()[field] == value
    else:
        assert checked.request is None
        assert paths(checked.problems) == [expected]
        assert checked.problems[0].code == INVALID


# Spec 2.2, line by line: every content type and role with a valid and an invalid value.
CONTENT_TABLE = [
    pytest.param(V20, [text()], OK, id="type-text"),
    pytest.param(V20, [text(), image()], OK, id="type-image_url"),
    pytest.param(V20, [text(), video()], OK, id="type-video_url"),
    pytest.param(V20, [text(), image("reference_image"), audio()], OK, id="type-audio_url"),
    pytest.param(V15, [draft_task()], OK, id="type-draft_task"),
    pytest.param(V20, [{"type": "image", "image_url": {"url": "x"}}], "content[0].type", id="type-image-bad"),
    pytest.param(V20, [{"type": "TEXT", "text": "x"}], "content[0].type", id="type-TEXT-bad"),
    pytest.param(V20, [{"text": "x"}], "content[0].type", id="type-missing"),
    pytest.param(V20, [{"type": "text", "text": 5}], "content[0].text", id="text-not-a-string"),
    pytest.param(V20, [text(), image("first_frame")], OK, id="role-first_frame"),
    pytest.param(V20, [text(), image("first_frame"), image("last_frame")], OK, id="role-last_frame"),
    pytest.param(V20, [text(), image("reference_image")], OK, id="role-reference_image"),
    pytest.param(V20, [text(), video("reference_video")], OK, id="role-reference_video"),
    pytest.param(V20, [text(), video(), audio("reference_audio")], OK, id="role-reference_audio"),
    pytest.param(V20, [text(), image("first")], "content[1].role", id="role-first-bad"),
    pytest.param(V20, [text(), image("reference")], "content[1].role", id="role-reference-bad"),
    pytest.param(V20, [text(), image(url="")], "content[1].image_url.url", id="image_url.url-empty"),
    pytest.param(V20, [text(), {"type": "image_url", "image_url": "https://example.com/a.png"}],
                 "content[1].image_url", id="image_url-not-an-object"),
    pytest.param(V20, [text(), {"type": "image_url", "image_url": {}}], "content[1].image_url.url",
                 id="image_url.url-missing"),
    pytest.param(V20, [text(), video(url="")], "content[1].video_url.url", id="video_url.url-empty"),
    pytest.param(V20, [text(), image("reference_image"), audio(url="")], "content[2].audio_url.url",
                 id="audio_url.url-empty"),
    pytest.param(V15, [draft_task("")], "content[0].draft_task.id", id="draft_task.id-empty"),
    pytest.param(V15, [{"type": "draft_task", "draft_task": {"id": 7}}], "content[0].draft_task.id",
                 id="draft_task.id-not-a-string"),
    pytest.param(V20, [text(), "just a string"], "content[1]", id="item-not-an-object"),
]


@pytest.mark.parametrize(("model", "content", "expected"), CONTENT_TABLE)
def test_content_item(model: str, content: list[Any], expected: str | None) -> None:
    checked = check_create_body(body(model, content))
    if expected is OK:
        assert checked.ok, [str(p) for p in checked.problems]
    else:
        assert checked.request is None
        assert expected in paths(checked.problems)


@pytest.mark.parametrize(
    ("given", "path"),
    [
        pytest.param(body(zz=1), "zz", id="top-level"),
        pytest.param(body(prompt="a cat"), "prompt", id="top-level-plausible-name"),
        pytest.param(body(content=[{**text(), "zz": 1}]), "content[0].zz", id="content-item"),
        pytest.param(body(content=[text(), {**image(), "zz": "x"}]), "content[1].zz", id="second-content-item"),
        pytest.param(body(content=[text(), image(url="x") | {"image_url": {"url": "x", "zz": 1}}]),
                     "content[1].image_url.zz", id="inside-image_url"),
        pytest.param(body(V15, [{"type": "draft_task", "draft_task": {"id": "d", "zz": 1}}]),
                     "content[0].draft_task.zz", id="inside-draft_task"),
        pytest.param(body(tools=[{"type": "web_search", "zz": 1}]), "tools[0].zz", id="inside-tool"),
    ],
)
def test_unknown_field_is_rejected_by_name(given: dict[str, Any], path: str) -> None:
    checked = check_create_body(given)
    assert checked.request is None
    assert paths(checked.problems) == [path]
    assert checked.problems[0].code == INVALID
    assert repr(path.rsplit(".", 1)[-1]) in checked.problems[0].message


OPTIONAL_FIELDS = [name for name, f in CreateTaskRequest.model_fields.items() if not f.is_required()]


def test_the_optional_fields_are_those_of_the_spec() -> None:
    assert set(OPTIONAL_FIELDS) == {
        "callback_url", "return_last_frame", "service_tier", "execution_expires_after", "generate_audio",
        "draft", "tools", "safety_identifier", "priority", "resolution", "ratio", "duration", "frames",
        "seed", "camera_fixed", "watermark",
    }


@pytest.mark.parametrize("field", OPTIONAL_FIELDS)
def test_null_means_not_given(field: str) -> None:
    checked = check_create_body(body(V20, **{field: None}))
    assert checked.ok, [str(p) for p in checked.problems]
    assert getattr(checked.request, field) is None
    assert field not in checked.request.to_json_dict()


@pytest.mark.parametrize("field", ["text", "image_url", "video_url", "audio_url", "role", "draft_task"])
def test_null_means_not_given_in_a_content_item(field: str) -> None:
    content = [text(), {**image(), "text": None}] if field == "text" else [{**text(), field: None}]
    checked = check_create_body(body(V20, content))
    assert checked.ok, [str(p) for p in checked.problems]
    assert field not in checked.request.to_json_dict()["content"][-1]


def test_every_optional_field_null_at_once_as_the_sdk_sends_it() -> None:
    checked = check_create_body(body(V20, **dict.fromkeys(OPTIONAL_FIELDS)))
    assert checked.ok
    assert checked.request.to_json_dict() == body(V20)


@pytest.mark.parametrize(
    ("given", "path"),
    [
        pytest.param({"content": [text()]}, "model", id="model-missing"),
        pytest.param({"model": V20}, "content", id="content-missing"),
        pytest.param({"model": None, "content": [text()]}, "model", id="model-null"),
    ],
)
def test_required_field_missing(given: dict[str, Any], path: str) -> None:
    checked = check_create_body(given)
    assert checked.request is None
    assert [(p.path, p.code) for p in checked.problems] == [(path, MISSING)]


def test_both_required_fields_missing_are_both_named() -> None:
    checked = check_create_body({})
    assert sorted(paths(checked.problems)) == ["content", "model"]
    assert {p.code for p in checked.problems} == {MISSING}


def test_empty_content_is_a_problem_of_content() -> None:
    checked = check_create_body(body(V20, []))
    assert checked.request is None
    assert paths(checked.problems) == ["content"]


def test_content_must_be_an_array() -> None:
    checked = check_create_body({"model": V20, "content": "a cat"})
    assert paths(checked.problems) == ["content"]


@pytest.mark.parametrize("given", [[], "body", 3, None, [body()]], ids=repr)
def test_a_body_that_is_not_an_object(given: Any) -> None:
    checked = check_create_body(given)
    assert not checked.ok
    assert paths(checked.problems) == ["body"]


def test_all_type_problems_are_reported_at_once() -> None:
    checked = check_create_body(body(V20, priority="5", seed=1.5, watermark="no", zz=1))
    assert sorted(paths(checked.problems)) == ["priority", "seed", "watermark", "zz"]


def test_a_huge_refused_value_is_not_echoed_whole() -> None:
    data_url = "data:image/png;base64," + "A" * 1_000_000
    checked = check_create_body(body(V20, [text(), {"type": "image_url", "image_url": data_url}]))
    [problem] = checked.problems
    assert problem.path == "content[1].image_url"
    assert len(problem.message) < 200


def test_request_model_is_strict_in_python_too() -> None:
    with pytest.raises(ValidationError):
        CreateTaskRequest(model=V20, content=[text()], priority="5")


def test_to_json_dict_leaves_unset_fields_out() -> None:
    req = CreateTaskRequest.model_validate(body(V20, [text(), image("first_frame")], seed=None, priority=3))
    assert req.to_json_dict() == body(V20, [text(), image("first_frame")], priority=3)


# ---------- 4.2 list query ----------

QUERY_TABLE = [
    ("page_num", 0, False), ("page_num", 1, True), ("page_num", 500, True), ("page_num", 501, False),
    ("page_size", 0, False), ("page_size", 1, True), ("page_size", 500, True), ("page_size", 501, False),
    *[("filter.status", s, True) for s in ("queued", "running", "cancelled", "succeeded", "failed")],
    ("filter.status", "expired", False),
    ("filter.status", "done", False),
    ("filter.service_tier", "default", True),
    ("filter.service_tier", "flex", True),
    ("filter.service_tier", "offline", False),
    ("filter.task_ids", ["cgt-1", "cgt-2"], True),
    ("filter.task_ids", [3], False),
    ("filter.model", "ep-20250101-abc", True),
    ("filter.zz", "x", False),
]


@pytest.mark.parametrize(("name", "value", "ok"), QUERY_TABLE, ids=[f"{n}={v!r}" for n, v, _ in QUERY_TABLE])
def test_list_query(name: str, value: Any, ok: bool) -> None:
    if ok:
        ListTasksQuery.model_validate({name: value})
    else:
        with pytest.raises(ValidationError) as info:
            ListTasksQuery.model_validate({name: value})
        assert [e["loc"][0] for e in info.value.errors()] == [name]


def test_list_query_defaults() -> None:
    q = ListTasksQuery()
    assert (q.page_num, q.page_size, q.service_tier, q.status, q.task_ids, q.model) == (
        1, 20, "default", None, None, None,
    )


def test_list_query_takes_query_string_text() -> None:
    q = ListTasksQuery.model_validate({"page_num": "3", "page_size": "50"})
    assert (q.page_num, q.page_size) == (3, 50)


def test_list_query_params_repeat_task_ids() -> None:
    q = ListTasksQuery.model_validate(
        {"page_size": 5, "filter.task_ids": ["cgt-a", "cgt-b", "cgt-c"], "filter.status": "failed"}
    )
    params = q.to_params()
    assert [v for k, v in params if k == "filter.task_ids"] == ["cgt-a", "cgt-b", "cgt-c"]
    assert ("filter.status", "failed") in params
    assert ("page_size", 5) in params
    assert ("filter.service_tier", "default") in params
    assert not any(k == "filter.model" for k, _ in params)


def test_list_query_params_round_trip() -> None:
    q = ListTasksQuery(page_num=2, status="queued", task_ids=["x"], model="ep-1", service_tier="flex")
    again: dict[str, Any] = {}
    for k, v in q.to_params():
        if k == "filter.task_ids":
            again.setdefault(k, []).append(v)
        else:
            again[k] = v
    assert ListTasksQuery.model_validate(again) == q


# ---------- 2.4, 2.5, 2.6, 7: responses are open ----------

RECORD = {
    "id": "cgt-20250101120000-abcde",
    "model": "doubao-seedance-2-0-260128",
    "status": "succeeded",
    "error": None,
    "created_at": 1735732800,
    "updated_at": 1735732860,
    "content": {"video_url": "https://example.com/v.mp4", "last_frame_url": "https://example.com/l.png"},
    "seed": 42,
    "resolution": "720p",
    "ratio": "16:9",
    "duration": 5,
    "framespersecond": 24,
    "generate_audio": True,
    "tools": [{"type": "web_search"}],
    "safety_identifier": "user-1",
    "priority": 3,
    "draft": False,
    "service_tier": "default",
    "execution_expires_after": 172800,
    "usage": {"completion_tokens": 108900, "total_tokens": 108900, "tool_usage": {"web_search": 0}},
}


def test_task_record_reads_every_field_of_the_spec() -> None:
    record = TaskRecord.model_validate(RECORD)
    assert record.model_dump(exclude_none=True) == {k: v for k, v in RECORD.items() if v is not None}


def test_task_record_tolerates_unknown_fields_everywhere() -> None:
    newer = {
        **RECORD,
        "brand_new": {"x": 1},
        "content": {**RECORD["content"], "thumbnail_url": "https://example.com/t.png"},
        "usage": {**RECORD["usage"], "prompt_tokens": 1, "tool_usage": {"web_search": 2, "image_search": 1}},
        "status": "failed",
        "error": {"code": "InvalidParameter", "message": "content[1].image_url: resource download failed",
                  "detail": "x"},
    }
    record = TaskRecord.model_validate(newer)
    assert record.model_extra == {"brand_new": {"x": 1}}
    assert record.usage.tool_usage.web_search == 2
    assert record.error.code == "InvalidParameter"


def test_task_record_needs_only_id_and_status() -> None:
    record = TaskRecord.model_validate({"id": "cgt-1", "status": "queued"})
    assert not record.is_terminal


@pytest.mark.parametrize("status", list(TaskStatus))
def test_task_record_statuses(status: str) -> None:
    record = TaskRecord.model_validate({"id": "cgt-1", "status": status})
    assert record.is_terminal == (status in TERMINAL)
    assert record.is_terminal == (status not in ("queued", "running"))


def test_task_record_tolerates_a_status_from_a_newer_server() -> None:
    record = TaskRecord.model_validate({"id": "cgt-1", "status": "paused"})
    assert record.status == "paused" and not record.is_terminal


def test_list_response_tolerates_unknown_fields() -> None:
    page = ListTasksResponse.model_validate(
        {"total": 1, "items": [{**RECORD, "zz": 1}], "has_more": False}
    )
    assert page.total == 1 and page.items[0].id == RECORD["id"]
    assert page.model_extra == {"has_more": False}


def test_create_response_tolerates_unknown_fields() -> None:
    created = CreateTaskResponse.model_validate({"id": "cgt-1", "created_at": 1})
    assert created.id == "cgt-1" and created.safety_identifier is None
    echoed = CreateTaskResponse.model_validate({"id": "cgt-1", "safety_identifier": "u"})
    assert echoed.safety_identifier == "u"


def test_error_response_tolerates_unknown_fields() -> None:
    err = ErrorResponse.model_validate(
        {
            "error": {
                "message": "priority: out of range. Request ID: 1",
                "type": "BadRequest",
                "param": "priority",
                "code": "InvalidParameter",
                "request_id": "1",
            },
            "extra": True,
        }
    )
    assert (err.error.code, err.error.param) == ("InvalidParameter", "priority")


def test_error_response_needs_its_error_object() -> None:
    with pytest.raises(ValidationError):
        ErrorResponse.model_validate({"message": "x"})


def test_the_sdks_own_null_parameters_are_taken_as_not_given() -> None:
    # The official SDK sends output_format and omni_reference_task_type as null when unset.
    checked = check_create_body(body(V20, output_format=None, omni_reference_task_type=None))
    assert checked.ok
    assert checked.request.to_json_dict() == body(V20)


def test_an_unknown_field_is_refused_even_as_null() -> None:
    checked = check_create_body(body(V20, [{**text(), "zz": None}], colour=None))
    assert sorted(p.path for p in checked.problems) == ["colour", "content[0].zz"]


def test_the_sdks_own_parameters_are_refused_with_a_value() -> None:
    checked = check_create_body(body(V20, output_format="mp4"))
    assert [p.path for p in checked.problems] == ["output_format"]
    assert "not supported" in checked.problems[0].message
