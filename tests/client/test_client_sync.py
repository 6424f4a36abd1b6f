"""`Client` against httpx.MockTransport: requests, retries, idempotency, wait, paging, download."""

from __future__ import annotations

import json

import httpx
import pytest

from dailies.client import (
    DEFAULT_BASE_URL,
    APIConnectionError,
    APIResponseValidationError,
    APIStatusError,
    APITimeoutError,
    BadRequestError,
    Client,
    ConflictError,
    InternalServerError,
    MissingAPIKeyError,
    NotFoundError,
    PermissionDeniedError,
    RateLimitError,
    RequestValidationError,
    WaitTimeout,
)
from dailies.spec.models import CallbackLog, CreateTaskRequest, CreateTaskResponse, ListTasksResponse, TaskRecord

from .client_fakes import (
    API_KEY,
    BASE_URL,
    OWN_TASKS_URL,
    TASKS_URL,
    ScriptedServer,
    error_body,
    hung,
    record,
    reply,
)

TASK_ID = "cgt-20250101000000-abcde"
CREATE_BODY = {"model": "doubao-seedance-1-5-pro-251215", "content": [{"type": "text", "text": "a red kite"}]}


def created(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, json={"id": TASK_ID})


# ---------- configuration ----------


def test_missing_key_is_refused_at_construction():
    with pytest.raises(MissingAPIKeyError, match="ARK_API_KEY"):
        Client()


def test_an_empty_key_counts_as_missing(monkeypatch):
    monkeypatch.setenv("ARK_API_KEY", "")
    with pytest.raises(MissingAPIKeyError):
        Client()
    with pytest.raises(MissingAPIKeyError):
        Client(api_key="")


def test_env_vars_are_the_fallback(monkeypatch):
    monkeypatch.setenv("ARK_API_KEY", "sk-from-env")
    monkeypatch.setenv("ARK_BASE_URL", "https://ark.cn-beijing.volces.com/api/v3/")
    server = ScriptedServer(reply(200, record(TASK_ID)))
    with Client(transport=httpx.MockTransport(server)) as client:
        assert client.base_url == "https://ark.cn-beijing.volces.com/api/v3"
        client.tasks.get(TASK_ID)
    request = server.requests[0]
    assert request.headers["Authorization"] == "Bearer sk-from-env"
    assert str(request.url) == f"https://ark.cn-beijing.volces.com/api/v3/contents/generations/tasks/{TASK_ID}"


def test_arguments_win_over_env_vars(monkeypatch):
    monkeypatch.setenv("ARK_API_KEY", "sk-from-env")
    monkeypatch.setenv("ARK_BASE_URL", "https://ark.cn-beijing.volces.com/api/v3")
    server = ScriptedServer(reply(200, record(TASK_ID)))
    with Client(api_key="sk-arg", base_url=BASE_URL, transport=httpx.MockTransport(server)) as client:
        client.tasks.get(TASK_ID)
    assert server.requests[0].headers["Authorization"] == "Bearer sk-arg"
    assert server.requests[0].url.host == "127.0.0.1"


def test_default_base_url_is_the_local_service():
    with Client(api_key=API_KEY) as client:
        assert client.base_url == DEFAULT_BASE_URL == "http://127.0.0.1:8000/api/v3"


@pytest.mark.parametrize(
    "base_url",
    [
        "http://127.0.0.1:8000/api/v3",
        "http://127.0.0.1:8000/api/v3/",
        "https://ark.cn-beijing.volces.com/api/v3",
        "https://ark.ap-southeast.bytepluses.com/api/v3/",
    ],
)
def test_base_url_of_the_real_shape_with_or_without_trailing_slash(make_client, base_url):
    server = ScriptedServer(created, reply(200, {"total": 0, "items": []}))
    client = make_client(server, base_url=base_url)
    client.tasks.create(CREATE_BODY)
    client.tasks.list()
    expected = base_url.rstrip("/") + "/contents/generations/tasks"
    assert [str(r.url).split("?")[0] for r in server.requests] == [expected, expected]


@pytest.mark.parametrize("bad", ["ftp://host/api/v3", "127.0.0.1:8000/api/v3", "http:///api/v3",
                                 "http://host/api/v3?x=1", "http://[::1/api/v3"])
def test_a_base_url_that_is_not_http_is_refused(bad):
    with pytest.raises(ValueError, match="base_url"):
        Client(api_key=API_KEY, base_url=bad)


def test_transport_and_http_client_are_exclusive():
    with httpx.Client() as http, pytest.raises(ValueError):
        Client(api_key=API_KEY, transport=httpx.MockTransport(created), http_client=http)


def test_a_callers_http_client_is_used_and_left_open(clock):
    server = ScriptedServer(reply(200, record(TASK_ID)))
    http = httpx.Client(transport=httpx.MockTransport(server))
    with Client(api_key=API_KEY, http_client=http, clock=clock) as client:
        client.tasks.get(TASK_ID)
    assert server.calls == 1
    assert not http.is_closed
    http.close()


def test_close_closes_the_clients_own_http_client():
    client = Client(api_key=API_KEY, transport=httpx.MockTransport(created))
    client.close()
    assert client._http.is_closed


def test_timeout_reaches_the_request(make_client):
    server = ScriptedServer(reply(200, record(TASK_ID)))
    make_client(server, timeout=5.0).tasks.get(TASK_ID)
    assert server.requests[0].extensions["timeout"]["read"] == 5.0


def test_repr_does_not_show_the_key(make_client):
    client = make_client(ScriptedServer(created))
    assert API_KEY not in repr(client) and API_KEY not in repr(client._config)


# ---------- endpoints ----------


def test_create_posts_the_request_json_with_auth_and_idempotency_key(make_client):
    server = ScriptedServer(created)
    response = make_client(server).tasks.create(CREATE_BODY)
    assert response == CreateTaskResponse(id=TASK_ID)
    request = server.requests[0]
    assert request.method == "POST" and str(request.url) == TASKS_URL
    assert request.headers["Authorization"] == f"Bearer {API_KEY}"
    assert request.headers["Content-Type"] == "application/json"
    assert request.headers["User-Agent"].startswith("dailies-client/")
    assert json.loads(request.content) == CREATE_BODY
    assert len(request.headers["Idempotency-Key"]) == 36


def test_create_accepts_a_model_and_sends_no_nulls(make_client):
    server = ScriptedServer(created)
    body = CreateTaskRequest.model_validate({**CREATE_BODY, "seed": 7, "watermark": None})
    make_client(server).tasks.create(body)
    assert json.loads(server.requests[0].content) == {**CREATE_BODY, "seed": 7}


def test_create_validates_a_dict_before_sending(make_client):
    server = ScriptedServer(created)
    with pytest.raises(RequestValidationError) as caught:
        make_client(server).tasks.create({"model": "m", "content": [], "colour": "red"})
    locs = {tuple(e["loc"]) for e in caught.value.errors}
    assert locs == {("content",), ("colour",)}
    assert "content" in str(caught.value) and "colour" in str(caught.value)
    assert server.calls == 0


def test_create_refuses_other_types(make_client):
    with pytest.raises(TypeError):
        make_client(ScriptedServer(created)).tasks.create("not a request")  # type: ignore[arg-type]


def test_create_returns_an_echoed_safety_identifier_and_unknown_fields(make_client):
    server = ScriptedServer(reply(200, {"id": TASK_ID, "safety_identifier": "u1", "new_field": 1}))
    response = make_client(server).tasks.create({**CREATE_BODY, "safety_identifier": "u1"})
    assert response.safety_identifier == "u1"
    assert response.model_extra == {"new_field": 1}


def test_get_returns_a_typed_record(make_client):
    body = record(TASK_ID, "succeeded", content={"video_url": "http://127.0.0.1:8000/files/v.mp4"},
                  usage={"completion_tokens": 10, "total_tokens": 10})
    server = ScriptedServer(reply(200, body))
    task = make_client(server).tasks.get(TASK_ID)
    assert isinstance(task, TaskRecord) and task.is_terminal
    assert task.content.video_url.endswith("v.mp4") and task.usage.total_tokens == 10
    assert server.requests[0].method == "GET"
    assert str(server.requests[0].url) == f"{TASKS_URL}/{TASK_ID}"


def test_a_task_id_cannot_escape_its_path(make_client):
    server = ScriptedServer(reply(200, record("x")))
    make_client(server).tasks.get("../x?y")
    assert server.requests[0].url.raw_path == b"/api/v3/contents/generations/tasks/..%2Fx%3Fy"


def test_an_empty_task_id_is_refused(make_client):
    with pytest.raises(ValueError):
        make_client(ScriptedServer(created)).tasks.get("")


def test_list_sends_the_query_with_repeated_task_ids(make_client):
    server = ScriptedServer(reply(200, {"total": 2, "items": [record("a"), record("b")]}))
    page = make_client(server).tasks.list(page_num=2, page_size=50, status="queued", task_ids=["a", "b"],
                                         model="ep-123", service_tier="flex")
    assert isinstance(page, ListTasksResponse) and [t.id for t in page.items] == ["a", "b"]
    params = server.requests[0].url.params
    assert params["page_num"] == "2" and params["page_size"] == "50"
    assert params["filter.status"] == "queued" and params["filter.model"] == "ep-123"
    assert params["filter.service_tier"] == "flex"
    assert params.get_list("filter.task_ids") == ["a", "b"]
    assert b"filter.task_ids=a&filter.task_ids=b" in server.requests[0].url.query


def test_list_defaults(make_client):
    server = ScriptedServer(reply(200, {"total": 0, "items": []}))
    make_client(server).tasks.list()
    assert dict(server.requests[0].url.params) == {"page_num": "1", "page_size": "20",
                                                   "filter.service_tier": "default"}


def test_a_lone_task_id_string_is_one_id(make_client):
    server = ScriptedServer(reply(200, {"total": 0, "items": []}))
    make_client(server).tasks.list(task_ids="abc")
    assert server.requests[0].url.params.get_list("filter.task_ids") == ["abc"]


@pytest.mark.parametrize("kwargs", [{"page_size": 501}, {"page_num": 0}, {"status": "expired"},
                                    {"service_tier": "cheap"}])
def test_list_validates_the_query_before_sending(make_client, kwargs):
    server = ScriptedServer(reply(200, {"total": 0, "items": []}))
    with pytest.raises(RequestValidationError):
        make_client(server).tasks.list(**kwargs)
    assert server.calls == 0


def test_delete_and_its_cancel_alias(make_client):
    server = ScriptedServer(reply(200, {}))
    client = make_client(server)
    assert client.tasks.delete(TASK_ID) is None
    client.tasks.cancel(TASK_ID)
    for request in server.requests:
        assert request.method == "DELETE" and str(request.url) == f"{TASKS_URL}/{TASK_ID}"
        assert json.loads(request.content) == {}


def test_cancel_only_posts_to_the_services_own_cancel_and_says_when_there_is_none(make_client):
    from dailies.client import UnsupportedEndpointError

    server = ScriptedServer(reply(200, {"id": TASK_ID, "status": "cancelled"}))
    assert make_client(server).tasks.cancel_only(TASK_ID) is None
    [request] = server.requests
    assert (request.method, str(request.url)) == ("POST", f"{OWN_TASKS_URL}/{TASK_ID}/cancel")
    finished = ScriptedServer(reply(409, error_body("InvalidAction.TaskFinished", "Conflict")))
    with pytest.raises(ConflictError) as refused:
        make_client(finished).tasks.cancel_only(TASK_ID)
    assert refused.value.code == "InvalidAction.TaskFinished"
    # The real Ark has no such path: its 404 is not "no such task".
    ark = ScriptedServer(reply(404, error_body("NotFound", "NotFound")))
    with pytest.raises(UnsupportedEndpointError):
        make_client(ark).tasks.cancel_only(TASK_ID)


def test_delete_of_a_running_task_is_a_conflict_not_retried(make_client):
    body = error_body("InvalidAction.RunningTaskDeletion", "Conflict")
    server = ScriptedServer(reply(409, body))
    with pytest.raises(ConflictError) as caught:
        make_client(server).tasks.delete(TASK_ID)
    assert caught.value.code == "InvalidAction.RunningTaskDeletion"
    assert server.calls == 1


CALLBACK_LOG = {"items": [
    {"webhook_id": "msg_1", "status": "succeeded", "attempt": 1, "at": 1_700_000_000.5, "status_code": 500,
     "latency_ms": 12.5, "error": "HTTP 500"},
    {"webhook_id": "msg_1", "status": "succeeded", "attempt": 2, "at": 1_700_000_004.0, "status_code": None,
     "latency_ms": None, "error": None, "pending": True, "a_newer_field": "kept"},
]}


def test_callbacks_returns_the_typed_delivery_log(make_client):
    server = ScriptedServer(reply(200, CALLBACK_LOG))
    log = make_client(server).tasks.callbacks(TASK_ID)
    assert isinstance(log, CallbackLog)
    first, due = log.items
    assert (first.attempt, first.status_code, first.latency_ms, first.pending) == (1, 500, 12.5, False)
    assert (due.attempt, due.status_code, due.pending) == (2, None, True)
    request = server.requests[0]
    assert (request.method, str(request.url)) == ("GET", f"{OWN_TASKS_URL}/{TASK_ID}/callbacks")
    assert request.headers["Authorization"] == f"Bearer {API_KEY}"


def test_callbacks_of_a_service_without_the_log_is_not_found_and_not_retried(make_client):
    # The real service has no such endpoint: 404, as for a task it does not have.
    server = ScriptedServer(reply(404, error_body("NotFound", "NotFound")))
    with pytest.raises(NotFoundError):
        make_client(server).tasks.callbacks(TASK_ID)
    assert server.calls == 1


def test_callbacks_task_id_cannot_escape_its_path(make_client):
    server = ScriptedServer(reply(200, {"items": []}))
    assert make_client(server).tasks.callbacks("../x").items == []
    assert server.requests[0].url.raw_path == b"/dailies/v1/tasks/..%2Fx/callbacks"


def test_a_success_with_a_body_of_the_wrong_shape(make_client):
    with pytest.raises(APIResponseValidationError) as caught:
        make_client(ScriptedServer(reply(200, {"items": "?"}))).tasks.list()
    assert caught.value.status_code == 200
    with pytest.raises(APIResponseValidationError):
        make_client(ScriptedServer(reply(200, content=b"<html>"))).tasks.get(TASK_ID)


# ---------- retries ----------


def test_5xx_is_retried_until_success(make_client, clock):
    server = ScriptedServer(reply(503), reply(503), created)
    assert make_client(server).tasks.create(CREATE_BODY).id == TASK_ID
    assert server.calls == 3
    # Full jitter with rng 0.5: half of the 0.5 s and 1 s ceilings.
    assert clock.sleeps == [0.25, 0.5]


def test_retries_stop_after_max_retries(make_client, clock):
    server = ScriptedServer(reply(500, error_body("InternalServiceError", "InternalServerError")))
    with pytest.raises(InternalServerError) as caught:
        make_client(server, max_retries=2).tasks.get(TASK_ID)
    assert server.calls == 3
    assert len(clock.sleeps) == 2
    assert caught.value.code == "InternalServiceError"


@pytest.mark.parametrize("max_retries", [0, 1, 4])
def test_the_number_of_attempts_is_max_retries_plus_one(make_client, max_retries):
    server = ScriptedServer(reply(502))
    with pytest.raises(InternalServerError):
        make_client(server, max_retries=max_retries).tasks.list()
    assert server.calls == max_retries + 1


@pytest.mark.parametrize("status", [400, 401, 403, 404, 409, 413, 422])
def test_client_errors_are_not_retried(make_client, clock, status):
    server = ScriptedServer(reply(status, error_body("X", "Y")), created)
    with pytest.raises(APIStatusError):
        make_client(server).tasks.create(CREATE_BODY)
    assert server.calls == 1 and clock.sleeps == []


def test_a_400_is_raised_at_once(make_client):
    server = ScriptedServer(reply(400, error_body("InvalidParameter", "BadRequest", "content[0].text")))
    with pytest.raises(BadRequestError) as caught:
        make_client(server).tasks.create(CREATE_BODY)
    assert caught.value.param == "content[0].text" and server.calls == 1


def test_retry_after_seconds_is_honoured(make_client, clock):
    server = ScriptedServer(reply(429, error_body("QuotaExceeded", "TooManyRequests"),
                                  headers={"Retry-After": "7"}), created)
    make_client(server).tasks.create(CREATE_BODY)
    assert server.calls == 2 and clock.sleeps == [7.0]


def test_retry_after_date_is_honoured(make_client, clock):
    # The fake wall clock reads 1_700_000_000 (2023-11-14 22:13:20 UTC).
    server = ScriptedServer(reply(503, headers={"Retry-After": "Tue, 14 Nov 2023 22:13:32 GMT"}), created)
    make_client(server).tasks.create(CREATE_BODY)
    assert clock.sleeps == [12.0]


def test_a_huge_retry_after_is_capped(make_client, clock):
    server = ScriptedServer(reply(429, headers={"Retry-After": "86400"}), created)
    make_client(server).tasks.create(CREATE_BODY)
    assert clock.sleeps == [60.0]


def test_rate_limit_after_the_last_retry_raises(make_client, clock):
    server = ScriptedServer(reply(429, error_body("QuotaExceeded", "TooManyRequests"), {"Retry-After": "1"}))
    with pytest.raises(RateLimitError) as caught:
        make_client(server, max_retries=1).tasks.create(CREATE_BODY)
    assert caught.value.code == "QuotaExceeded"
    assert server.calls == 2 and clock.sleeps == [1.0]


def test_connect_errors_are_retried_then_raised(make_client, clock):
    server = ScriptedServer(httpx.ConnectError("connection refused"))
    with pytest.raises(APIConnectionError) as caught:
        make_client(server).tasks.list()
    assert type(caught.value) is APIConnectionError
    assert isinstance(caught.value.__cause__, httpx.ConnectError)
    assert server.calls == 3 and len(clock.sleeps) == 2


def test_a_connect_error_then_success(make_client):
    server = ScriptedServer(httpx.ConnectError("reset"), created)
    assert make_client(server).tasks.create(CREATE_BODY).id == TASK_ID
    assert server.calls == 2


def test_timeouts_are_retried_then_raised_as_timeout_errors(make_client):
    server = ScriptedServer(httpx.ReadTimeout("slow"))
    with pytest.raises(APITimeoutError):
        make_client(server).tasks.get(TASK_ID)
    assert server.calls == 3


# ---------- idempotency ----------


def test_the_idempotency_key_is_the_same_on_every_retry(make_client):
    server = ScriptedServer(reply(503), httpx.ReadTimeout("lost response"), reply(500), created)
    make_client(server, max_retries=3).tasks.create(CREATE_BODY)
    keys = {r.headers["Idempotency-Key"] for r in server.requests}
    assert server.calls == 4 and len(keys) == 1
    # The body is the same too: a retry is the same logical create.
    assert len({r.content for r in server.requests}) == 1


def test_two_creates_have_two_keys(make_client):
    server = ScriptedServer(created)
    client = make_client(server)
    client.tasks.create(CREATE_BODY)
    client.tasks.create(CREATE_BODY)
    first, second = (r.headers["Idempotency-Key"] for r in server.requests)
    assert first != second


def test_a_given_idempotency_key_is_used(make_client):
    server = ScriptedServer(reply(503), created)
    make_client(server).tasks.create(CREATE_BODY, idempotency_key="my-key-1")
    assert [r.headers["Idempotency-Key"] for r in server.requests] == ["my-key-1", "my-key-1"]


def test_only_create_sends_an_idempotency_key(make_client):
    server = ScriptedServer(reply(200, record(TASK_ID)))
    make_client(server).tasks.get(TASK_ID)
    assert "Idempotency-Key" not in server.requests[0].headers


# ---------- wait ----------


def test_wait_returns_the_terminal_record_and_reports_each_poll(make_client, clock):
    server = ScriptedServer(reply(200, record(TASK_ID, "queued")), reply(200, record(TASK_ID, "running")),
                            reply(200, record(TASK_ID, "succeeded")))
    seen: list[str] = []
    task = make_client(server).wait(TASK_ID, poll_interval=5, on_update=lambda t: seen.append(t.status))
    assert task.status == "succeeded"
    assert seen == ["queued", "running", "succeeded"]
    assert clock.sleeps == [5, 5]


@pytest.mark.parametrize("status", ["failed", "expired", "cancelled"])
def test_every_terminal_status_ends_the_wait(make_client, status):
    assert make_client(ScriptedServer(reply(200, record(TASK_ID, status)))).wait(TASK_ID).status == status


def test_wait_honours_its_deadline_without_real_sleeping(make_client, clock):
    server = ScriptedServer(reply(200, record(TASK_ID, "running")))
    with pytest.raises(WaitTimeout) as caught:
        make_client(server).wait(TASK_ID, timeout=10, poll_interval=3)
    # Polls at 0, 3, 6, 9 and, cut short, at the deadline itself; then it gives up.
    assert clock.sleeps == [3, 3, 3, 1]
    assert clock.elapsed == 10
    assert server.calls == 5
    assert caught.value.task_id == TASK_ID and caught.value.last.status == "running"
    assert "running" in str(caught.value)


def test_wait_with_a_zero_timeout_polls_once(make_client, clock):
    server = ScriptedServer(reply(200, record(TASK_ID, "queued")))
    with pytest.raises(WaitTimeout):
        make_client(server).wait(TASK_ID, timeout=0)
    assert server.calls == 1 and clock.elapsed == 0


def test_wait_counts_time_spent_in_retries_against_the_deadline(make_client, clock):
    server = ScriptedServer(reply(503, headers={"Retry-After": "8"}), reply(200, record(TASK_ID, "running")))
    with pytest.raises(WaitTimeout):
        make_client(server).wait(TASK_ID, timeout=10, poll_interval=4)
    # 8 s of Retry-After, then one 2 s sleep to the deadline, then the final poll.
    assert clock.sleeps == [8.0, 2.0] and clock.elapsed == 10


def test_a_wait_against_a_service_that_never_answers_ends_at_its_deadline(make_client, clock):
    """A hung service (the connection taken, no answer): each poll's reads waited 60 s and were retried
    twice, so `wait(timeout=5)` took 3 minutes. A poll's requests are cut to the time left."""
    never = hung(clock)
    with pytest.raises(APITimeoutError):
        make_client(ScriptedServer(never)).wait(TASK_ID, timeout=5, poll_interval=2)
    assert never.read_timeouts == [5.0]  # one request, cut to the wait's 5 s; no retry past the deadline
    assert clock.elapsed < 6
    # Outside a wait the client's own timeout and retries stand.
    clock.sleeps.clear()
    never = hung(clock)
    with pytest.raises(APITimeoutError):
        make_client(ScriptedServer(never)).tasks.get(TASK_ID)
    assert never.read_timeouts == [60.0, 60.0, 60.0]


def test_wait_polls_on_through_an_outage_longer_than_the_clients_retries(make_client, clock):
    """A service restarting (no connection, then 503s) for longer than one call's retries: the task
    goes on there, so the wait polls again at its interval instead of giving up."""
    down = httpx.ConnectError("refused")
    server = ScriptedServer(reply(200, record(TASK_ID, "running")), *[down] * 7, reply(503), reply(503), reply(503),
                            reply(200, record(TASK_ID, "succeeded")))
    assert make_client(server).wait(TASK_ID, timeout=600, poll_interval=5).status == "succeeded"
    assert server.calls == 12


def test_wait_gives_up_on_an_outage_at_its_deadline_and_never_on_a_refusal(make_client, clock):
    from dailies.client import APIConnectionError, AuthenticationError

    server = ScriptedServer(reply(200, record(TASK_ID, "running")), httpx.ConnectError("refused"))
    with pytest.raises(APIConnectionError):
        make_client(server).wait(TASK_ID, timeout=30, poll_interval=5)
    assert clock.elapsed >= 30
    refused = ScriptedServer(reply(200, record(TASK_ID, "running")),
                             reply(401, error_body("AuthenticationError", "Unauthorized")))
    with pytest.raises(AuthenticationError):
        make_client(refused).wait(TASK_ID, timeout=600, poll_interval=5)
    assert refused.calls == 2


def test_wait_without_a_deadline(make_client, clock):
    running = reply(200, record(TASK_ID, "running"))
    server = ScriptedServer(*[running] * 50, reply(200, record(TASK_ID, "failed")))
    assert make_client(server).wait(TASK_ID, timeout=None, poll_interval=60).status == "failed"
    assert clock.elapsed == 50 * 60


def test_wait_refuses_nonsense_arguments(make_client):
    client = make_client(ScriptedServer(reply(200, record(TASK_ID))))
    with pytest.raises(ValueError):
        client.wait(TASK_ID, timeout=-1)
    with pytest.raises(ValueError):
        client.wait(TASK_ID, poll_interval=0)


# ---------- iter_tasks ----------


def paged(total: int, ids: list[str]):
    """A list endpoint over `ids` that honours page_num and page_size."""

    def handler(request: httpx.Request) -> httpx.Response:
        num, size = int(request.url.params["page_num"]), int(request.url.params["page_size"])
        items = [record(i) for i in ids[(num - 1) * size: num * size]]
        return httpx.Response(200, json={"total": total, "items": items})

    return handler


def test_iter_tasks_walks_three_pages(make_client):
    ids = [f"t{i}" for i in range(7)]
    server = ScriptedServer(paged(7, ids))
    tasks = list(make_client(server).iter_tasks(status="succeeded", page_size=3))
    assert [t.id for t in tasks] == ids
    assert [r.url.params["page_num"] for r in server.requests] == ["1", "2", "3"]
    assert all(r.url.params["filter.status"] == "succeeded" for r in server.requests)


def test_iter_tasks_stops_on_an_exact_last_page(make_client):
    server = ScriptedServer(paged(6, [f"t{i}" for i in range(6)]))
    assert len(list(make_client(server).iter_tasks(page_size=3))) == 6
    assert server.calls == 2


def test_iter_tasks_stops_on_an_empty_page(make_client):
    # The total said 9, but tasks expired meanwhile: the third page is empty.
    server = ScriptedServer(paged(9, [f"t{i}" for i in range(6)]))
    assert len(list(make_client(server).iter_tasks(page_size=3))) == 6
    assert server.calls == 3


def test_iter_tasks_yields_a_task_once_when_pages_shift(make_client):
    server = ScriptedServer(reply(200, {"total": 4, "items": [record("a"), record("b")]}),
                            reply(200, {"total": 5, "items": [record("b"), record("c")]}),
                            reply(200, {"total": 5, "items": [record("d")]}))
    assert [t.id for t in make_client(server).iter_tasks(page_size=2)] == ["a", "b", "c", "d"]


def test_iter_tasks_is_lazy(make_client):
    server = ScriptedServer(paged(10, [f"t{i}" for i in range(10)]))
    iterator = make_client(server).iter_tasks(page_size=2)
    assert server.calls == 0
    next(iterator)
    assert server.calls == 1


# ---------- download ----------

VIDEO = bytes(range(256)) * 4096  # 1 MiB, so it arrives in more than one chunk


def serve_file(request: httpx.Request) -> httpx.Response:
    return httpx.Response(200, content=VIDEO, headers={"Content-Type": "video/mp4"})


def test_download_writes_the_file_and_reports_progress(make_client, tmp_path):
    server = ScriptedServer(serve_file)
    progress: list[tuple[int, int | None]] = []
    target = tmp_path / "out.mp4"
    result = make_client(server).download(
        "http://127.0.0.1:8000/files/cgt-1/video.mp4?expires=1&sig=abc", target,
        progress=lambda done, total: progress.append((done, total)),
    )
    assert result == target and target.read_bytes() == VIDEO
    assert progress == [(n * 256 * 1024, len(VIDEO)) for n in (1, 2, 3, 4)]
    assert list(tmp_path.iterdir()) == [target]  # no partial file left beside it
    # Same origin as the base URL: the key goes along.
    assert server.requests[0].headers["Authorization"] == f"Bearer {API_KEY}"
    assert server.requests[0].url.params["sig"] == "abc"


def test_download_of_a_relative_url_uses_the_base_host(make_client, tmp_path):
    server = ScriptedServer(serve_file)
    make_client(server).download("/files/v.mp4", tmp_path / "v.mp4")
    assert str(server.requests[0].url) == "http://127.0.0.1:8000/files/v.mp4"


@pytest.mark.parametrize("url", ["https://cdn.example.com/v.mp4", "http://127.0.0.1:9000/v.mp4",
                                 "https://127.0.0.1:8000/v.mp4"])
def test_download_sends_no_key_to_another_origin(make_client, tmp_path, url):
    server = ScriptedServer(serve_file)
    make_client(server).download(url, tmp_path / "v.mp4")
    assert "Authorization" not in server.requests[0].headers


def test_download_follows_a_redirect_without_carrying_the_key_away(make_client, tmp_path):
    server = ScriptedServer(
        reply(302, headers={"Location": "https://cdn.example.com/signed/v.mp4"}), serve_file
    )
    make_client(server).download(f"{BASE_URL}/files/v.mp4", tmp_path / "v.mp4")
    own, cdn = server.requests
    assert "Authorization" in own.headers and "Authorization" not in cdn.headers
    assert (tmp_path / "v.mp4").read_bytes() == VIDEO


def test_download_of_an_expired_url_is_permission_denied_and_leaves_nothing(make_client, tmp_path):
    body = error_body("AccessDenied", "Forbidden", request_id="r-9")
    server = ScriptedServer(reply(403, body))
    with pytest.raises(PermissionDeniedError) as caught:
        make_client(server).download("http://127.0.0.1:8000/files/v.mp4?expires=1", tmp_path / "v.mp4")
    assert caught.value.code == "AccessDenied" and caught.value.request_id == "r-9"
    assert list(tmp_path.iterdir()) == []


def test_download_without_content_length_reports_an_unknown_total(make_client, tmp_path):
    def chunked(request: httpx.Request) -> httpx.Response:
        return httpx.Response(200, content=iter([b"ab", b"cd"]))

    progress: list[tuple[int, int | None]] = []
    make_client(ScriptedServer(chunked)).download(
        "/files/v.mp4", tmp_path / "v.mp4", progress=lambda *a: progress.append(a)
    )
    assert progress[-1] == (4, None) and all(total is None for _, total in progress)


class BrokenStream(httpx.SyncByteStream):
    def __iter__(self):
        yield b"x" * 100
        raise httpx.ReadError("connection reset")


def test_a_download_cut_short_leaves_no_file(make_client, tmp_path):
    server = ScriptedServer(lambda request: httpx.Response(200, stream=BrokenStream()))
    target = tmp_path / "v.mp4"
    target.write_bytes(b"previous copy")
    with pytest.raises(APIConnectionError):
        make_client(server).download("/files/v.mp4", target)
    assert list(tmp_path.iterdir()) == [target]
    assert target.read_bytes() == b"previous copy"


@pytest.mark.parametrize("url", ["asset://asset-1", "data:video/mp4;base64,AAAA", "ftp://host/v.mp4"])
def test_download_refuses_what_is_not_http(make_client, tmp_path, url):
    server = ScriptedServer(serve_file)
    with pytest.raises(ValueError, match="http"):
        make_client(server).download(url, tmp_path / "v.mp4")
    assert server.calls == 0


def test_retry_logs_do_not_carry_url_signatures(make_client, tmp_path, caplog):
    server = ScriptedServer(reply(503), serve_file)
    with caplog.at_level("INFO", logger="dailies.client"):
        make_client(server).download("/files/v.mp4?expires=1&sig=secret", tmp_path / "v.mp4")
    assert "retry 1" in caplog.text and "/files/v.mp4" in caplog.text
    assert "secret" not in caplog.text


def test_download_retries_a_5xx(make_client, tmp_path):
    server = ScriptedServer(reply(503), serve_file)
    make_client(server).download("/files/v.mp4", tmp_path / "v.mp4")
    assert server.calls == 2 and (tmp_path / "v.mp4").read_bytes() == VIDEO
