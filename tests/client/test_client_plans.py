"""The calls as sans-I/O plans (`dailies.client._calls`), stepped by hand with a fake clock: no
transport, no driver. What a plan yields is what `Client` and `AsyncClient` both carry out."""

from __future__ import annotations

import inspect
from typing import Any

import httpx
import pytest

from dailies.client import IDEMPOTENCY_HEADER, AsyncClient, Client, errors
from dailies.client._base import resolve_config
from dailies.client._calls import Calls, Notify, Plan, Runner, Save, Send, Sleep
from dailies.spec.models import CreateTaskResponse, TaskRecord

from .client_fakes import API_KEY, BASE_URL, FakeClock, record

TASK_ID = "cgt-20250101000000-abcde"
CREATE_BODY = {"model": "doubao-seedance-1-5-pro-251215", "content": [{"type": "text", "text": "a red kite"}]}


@pytest.fixture
def calls(clock: FakeClock):
    http = httpx.Client()  # only builds requests: nothing is sent through it
    yield make_calls(http, clock)
    http.close()


def make_calls(http: httpx.Client, clock: FakeClock, max_retries: int = 2) -> Calls:
    config = resolve_config(api_key=API_KEY, base_url=BASE_URL, timeout=None, max_retries=max_retries, env={})
    return Calls(config, http, clock, lambda: 0.5)


def answered(request: httpx.Request, status: int, json: Any = None, headers: dict[str, str] | None = None):
    return httpx.Response(status, json=json, headers=headers, request=request)


class Stepper:
    """Steps a plan as a driver would, the test answering each step; sleeps move the fake clock."""

    def __init__(self, plan: Plan[Any], clock: FakeClock) -> None:
        self.run = Runner(plan)
        self.clock = clock
        self.sleeps: list[float] = []

    @property
    def step(self):
        return self.run.step

    def send(self) -> Send:
        assert isinstance(self.run.step, Send), self.run.step
        return self.run.step

    def answer(self, outcome: httpx.Response | Exception | None) -> None:
        self.run.answer(outcome)
        while isinstance(self.run.step, Sleep):  # a driver sleeps, then answers None
            self.sleeps.append(self.run.step.seconds)
            self.clock.sleep(self.run.step.seconds)
            self.run.answer(None)


def test_a_429_then_success_sleeps_what_retry_after_asks(calls, clock):
    steps = Stepper(calls.tasks.get(TASK_ID), clock)
    first = steps.send().request
    steps.answer(answered(first, 429, {"error": {"message": "slow down"}}, {"Retry-After": "7"}))
    assert steps.sleeps == [7.0]
    assert steps.send().request is first  # built once, resent as is
    steps.answer(answered(first, 200, record(status="running")))
    assert steps.step is None and isinstance(steps.run.result, TaskRecord)
    assert steps.run.result.status == "running"


def test_a_5xx_is_retried_with_full_jitter_backoff_then_raised(calls, clock):
    steps = Stepper(calls.tasks.get(TASK_ID), clock)
    request = steps.send().request
    steps.answer(answered(request, 503))
    steps.answer(answered(request, 502))
    assert steps.sleeps == [0.25, 0.5]  # rng 0.5 times the ceilings 0.5 and 1.0
    with pytest.raises(errors.InternalServerError):
        steps.answer(answered(request, 500))  # the third attempt was the last (max_retries=2)
    assert steps.sleeps == [0.25, 0.5]


def test_a_refusal_is_raised_at_once(calls, clock):
    steps = Stepper(calls.tasks.delete(TASK_ID), clock)
    with pytest.raises(errors.ConflictError):
        steps.answer(answered(steps.send().request, 409, {"error": {"code": "InvalidAction.Running"}}))
    assert steps.sleeps == []


def test_a_create_is_retried_after_a_lost_answer_with_the_same_key(calls, clock):
    """Today's rule: every request is retried on no answer, a create too, because it carries one
    Idempotency-Key for all its attempts (a second task is never made)."""
    steps = Stepper(calls.tasks.create(CREATE_BODY), clock)
    request = steps.send().request
    assert request.method == "POST" and request.headers[IDEMPOTENCY_HEADER]
    steps.answer(httpx.ReadTimeout("answer lost", request=request))
    assert steps.sleeps == [0.25]
    assert steps.send().request.headers[IDEMPOTENCY_HEADER] == request.headers[IDEMPOTENCY_HEADER]
    steps.answer(answered(request, 200, {"id": TASK_ID}))
    assert steps.run.result == CreateTaskResponse(id=TASK_ID)


def test_no_connection_after_the_last_retry_is_a_connection_error(clock):
    with httpx.Client() as http:
        steps = Stepper(make_calls(http, clock, max_retries=0).tasks.get(TASK_ID), clock)
        with pytest.raises(errors.APITimeoutError) as raised:
            steps.answer(httpx.ConnectTimeout("no route", request=steps.send().request))
    assert isinstance(raised.value.__cause__, httpx.ConnectTimeout)


def test_a_rate_limit_past_the_waits_deadline_is_not_retried(calls, clock):
    """A poll of `wait` whose retry would start past the deadline: the poll fails, the wait ends."""
    steps = Stepper(calls.wait(TASK_ID, timeout=5, poll_interval=1), clock)
    request = steps.send().request
    assert request.extensions["timeout"]["read"] == 5  # the poll's read is cut to the time left
    with pytest.raises(errors.RateLimitError):
        # 429 is "failed for now" for `wait`, but the deadline has passed by the time it would poll again.
        clock.sleep(5)
        steps.answer(answered(request, 429, {"error": {}}, {"Retry-After": "1"}))


def test_wait_notifies_each_record_and_sleeps_its_interval(calls, clock):
    seen: list[str] = []
    steps = Stepper(calls.wait(TASK_ID, poll_interval=3, on_update=lambda r: seen.append(r.status)), clock)
    steps.answer(answered(steps.send().request, 200, record(status="running")))
    assert isinstance(steps.step, Notify)
    steps.step.callback(steps.step.record)
    steps.answer(None)
    assert steps.sleeps == [3]
    steps.answer(answered(steps.send().request, 200, record(status="succeeded")))
    steps.step.callback(steps.step.record)
    steps.answer(None)
    assert seen == ["running", "succeeded"] and steps.run.result.status == "succeeded"


def test_an_error_a_step_raised_is_raised_in_the_plan_where_it_asked(calls, clock):
    """Not a transport error of a Send (those are answers to retry on): raised through the plan, as if
    the plan had done the I/O itself."""
    steps = Stepper(calls.tasks.get(TASK_ID), clock)
    request = steps.send().request
    too_large = errors.APIResponseTooLargeError("too much", request=request, status_code=200, limit=1)
    with pytest.raises(errors.APIResponseTooLargeError):
        steps.answer(too_large)
    assert steps.sleeps == []


def test_a_download_cut_mid_body_is_a_connection_error_not_retried(calls, clock, tmp_path):
    steps = Stepper(calls.download("http://127.0.0.1:8000/files/v.mp4", tmp_path / "v.mp4"), clock)
    request = steps.send().request
    steps.answer(answered(request, 200))
    assert isinstance(steps.step, Save) and steps.step.path == tmp_path / "v.mp4"
    with pytest.raises(errors.APIConnectionError):
        steps.answer(httpx.ReadError("cut", request=request))
    assert steps.sleeps == []


def test_a_plan_checks_its_arguments_before_its_first_step(calls):
    with pytest.raises(ValueError, match="task_id"):
        Runner(calls.tasks.get(""))


# ---------- one declaration, two clients ----------

PUBLIC = ["spend", "me", "members", "service_info", "task_request", "charges", "wait", "iter_tasks", "download"]
TASKS = ["create", "get", "list", "delete", "cancel", "cancel_only", "callbacks"]


def test_both_clients_show_the_same_methods_with_the_same_parameters_and_docs():
    with Client(api_key=API_KEY) as blocking:
        awaiting = AsyncClient(api_key=API_KEY)
        pairs = [(getattr(blocking, n), getattr(awaiting, n)) for n in PUBLIC]
        pairs += [(getattr(blocking.tasks, n), getattr(awaiting.tasks, n)) for n in TASKS]
        for one, other in pairs:
            assert inspect.signature(one).parameters == inspect.signature(other).parameters, one
            assert one.__doc__ and one.__doc__ == other.__doc__
            assert "self" not in inspect.signature(one).parameters
            assert not inspect.iscoroutinefunction(one)
        assert all(inspect.iscoroutinefunction(other) for _, other in pairs if other.__name__ != "iter_tasks")
        assert inspect.isasyncgenfunction(awaiting.iter_tasks)
        assert inspect.signature(blocking.wait).return_annotation == "TaskRecord"
        assert blocking.tasks.get.__qualname__ == "Tasks.get"

