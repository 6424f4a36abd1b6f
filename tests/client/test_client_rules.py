"""The catalog's rules at create: a model id the catalog knows is judged before anything is sent;
endpoint ids and unknown ids go to the service unchecked (httpx.MockTransport, sync and async)."""

from __future__ import annotations

import json

import httpx
import pytest

from dailies.client import RequestRuleError, RequestValidationError
from dailies.spec.models import CreateTaskRequest

from .client_fakes import ScriptedServer

TASK_ID = "cgt-20250101000000-abcde"
TEXT = [{"type": "text", "text": "a kite over the dunes"}]
# Seedance 2.0 fast (BytePlus id) takes neither flex, 1080p nor a seed.
BAD_2_0_FAST = {"model": "dreamina-seedance-2-0-fast-260128", "content": TEXT,
                "service_tier": "flex", "resolution": "1080p", "seed": 5}
# Seedance 1.0 Pro fast (BytePlus id) takes no last frame, and no 4k (here as a text command).
BAD_1_0_FAST = {"model": "seedance-1-0-pro-fast-251015", "content": [
    {"type": "text", "text": "a fox in the snow --rs 4k"},
    {"type": "image_url", "image_url": {"url": "https://example.com/first.png"}, "role": "first_frame"},
    {"type": "image_url", "image_url": {"url": "https://example.com/last.png"}, "role": "last_frame"},
]}


def created(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, json={"id": TASK_ID})


def test_a_byteplus_id_with_a_bad_combination_is_refused_before_any_request(make_client):
    server = ScriptedServer(created)
    with pytest.raises(RequestRuleError) as caught:
        make_client(server).tasks.create(BAD_2_0_FAST)
    assert server.calls == 0
    error = caught.value
    assert isinstance(error, RequestValidationError)  # one `except` catches every local refusal
    assert [p.path for p in error.problems] == ["service_tier", "resolution", "seed"]
    assert [e["param"] for e in error.errors] == ["service_tier", "resolution", "seed"]
    assert [e["loc"] for e in error.errors] == [("service_tier",), ("resolution",), ("seed",)]
    text = str(error)
    assert "dreamina-seedance-2-0-fast-260128" in text
    assert all(f"{field}: " in text for field in ("service_tier", "resolution", "seed"))


def test_every_problem_is_listed_with_its_field_path_text_commands_included(make_client):
    server = ScriptedServer(created)
    with pytest.raises(RequestRuleError) as caught:
        make_client(server).tasks.create(BAD_1_0_FAST)
    assert server.calls == 0
    by_path = {p.path: p for p in caught.value.problems}
    assert set(by_path) == {"content[2].role", "content[0].text"}
    assert "last frame" in by_path["content[2].role"].message
    assert "4k" in by_path["content[0].text"].message
    assert ("content", 2, "role") in [e["loc"] for e in caught.value.errors]


def test_a_request_model_is_judged_like_a_mapping(make_client):
    server = ScriptedServer(created)
    with pytest.raises(RequestRuleError):
        make_client(server).tasks.create(CreateTaskRequest.model_validate(BAD_2_0_FAST))
    assert server.calls == 0


def test_a_valid_byteplus_id_is_sent_as_written(make_client):
    body = {"model": "seedance-1-0-pro-fast-251015",
            "content": [{"type": "text", "text": "a fox in the snow --rs 480p --dur 3 --seed 5"}]}
    server = ScriptedServer(created)
    assert make_client(server).tasks.create(body).id == TASK_ID
    # Text commands stay in the prompt: the service reads them, the client only judged them.
    assert json.loads(server.requests[0].content) == body


@pytest.mark.parametrize("model", ["ep-20250101000000-abcde", "ep-local-seedance-2-0-260128",
                                   "seedance-3-0-pro-270101", "doubao-nope"])
def test_endpoint_and_unknown_ids_go_to_the_service_unchecked(make_client, model):
    body = {**BAD_2_0_FAST, "model": model}
    server = ScriptedServer(created)
    assert make_client(server).tasks.create(body).id == TASK_ID
    assert json.loads(server.requests[0].content) == body


def test_check_rules_false_sends_a_catalog_id_with_only_the_schema_checked(make_client):
    server = ScriptedServer(created)
    assert make_client(server).tasks.create(BAD_2_0_FAST, check_rules=False).id == TASK_ID
    assert json.loads(server.requests[0].content) == BAD_2_0_FAST
    with pytest.raises(RequestValidationError) as caught:  # the schema is still the schema
        make_client(server).tasks.create({**BAD_2_0_FAST, "colour": "red"}, check_rules=False)
    assert not isinstance(caught.value, RequestRuleError)
    assert server.calls == 1


@pytest.mark.anyio
async def test_the_async_client_applies_the_same_rules(make_async_client):
    server = ScriptedServer(created)
    async with make_async_client(server) as client:
        with pytest.raises(RequestRuleError) as caught:
            await client.tasks.create(BAD_1_0_FAST)
        assert server.calls == 0
        assert {p.path for p in caught.value.problems} == {"content[2].role", "content[0].text"}
        valid = {**BAD_2_0_FAST, "service_tier": "default", "resolution": "720p", "seed": None}
        assert (await client.tasks.create(valid)).id == TASK_ID
        assert (await client.tasks.create({**BAD_2_0_FAST, "model": "ep-20250101000000-abcde"})).id == TASK_ID
        assert (await client.tasks.create({**BAD_2_0_FAST, "model": "doubao-nope"})).id == TASK_ID
        assert (await client.tasks.create(BAD_2_0_FAST, check_rules=False)).id == TASK_ID
    assert server.calls == 4
    assert json.loads(server.requests[0].content) == {k: v for k, v in valid.items() if v is not None}


def test_nulls_in_a_body_mean_not_given_as_the_service_reads_them():
    """The official SDK's habit: every optional field sent, null when unset (output_format among them)."""
    from dailies.client._base import coerce_create_request

    request = coerce_create_request({"model": "seedance-1-0-pro-250528", "content": [{"type": "text", "text": "a cat"}],
                                     "output_format": None, "seed": None, "callback_url": None})
    assert request.seed is None and request.callback_url is None


def test_a_body_the_schema_refuses_names_its_fields_as_the_service_does(make_client):
    """Refused locally, a field was named the way pydantic writes it (`content.1.role: Input should be
    ...`) where the service's `param` and message say `content[1].role: 'hero' is not allowed; ...`:
    a tool matching either to its form fields could not use both. One rule words both now."""
    from dailies.spec.validation import check_create_body

    body = {"model": "doubao-seedance-2-0-260128", "content": [
        {"type": "text", "text": "x"},
        {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}, "role": "hero"}],
        "tools": [{"type": "nope"}]}
    server = ScriptedServer(created)
    with pytest.raises(RequestValidationError) as refused:
        make_client(server).tasks.create(body)
    assert server.calls == 0
    said = str(refused.value)
    for problem in check_create_body(body).problems:  # the service's own words for this body
        assert str(problem) in said
    assert "content[1].role" in said and "tools[0].type" in said and "content.1" not in said
