"""A gateway in front of an upstream whose answers are not what they should be, on each backend: a 200
whose body cannot be read, a 404 for a task it accepted a moment ago, a video that cannot be decoded,
a result URL that redirects. Each of these used to end the member's task at once, most of them as
"The preview renderer failed", while the upstream went on to make (and bill) the video."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from functools import partial

import httpx
import pytest
from sqlalchemy import select

from dailies.service.api.app import create_app
from dailies.service.billing.budgets import UNANSWERED_CREATE_S
from dailies.service.callers import Caller
from dailies.service.db.tables import ledger
from dailies.service.gateway.forwarding import OUTCOME_UNKNOWN, UpstreamGenerator, UpstreamKey
from dailies.service.settings import Settings
from tests.service.conftest import FakeClock
from tests.service.gateway.test_upstream import tiny_mp4

BASE = "http://upstream.test/api/v3"
UPSTREAM_KEY = "upstream-secret-key"
VIDEO_URL = "http://cdn.test/video.mp4"
USAGE = 19747
# docs/gateway.md: a 404 is believed once answered 5 times over 60 s (the upstream's index may lag a create).
NOT_FOUND_READS = 5
NOT_FOUND_GRACE_S = 60.0
BODY = {"model": "doubao-seedance-1-0-pro-250528", "resolution": "480p", "duration": 2,
        "execution_expires_after": 3600, "content": [{"type": "text", "text": "a shot"}]}

Answer = Callable[[httpx.Request], httpx.Response | None]


class Upstream:
    """One upstream task, `cgt-up-1`, that succeeds. `answers[kind]` (create, list, get, download)
    answers a call first; None from it lets the upstream answer as it would."""

    def __init__(self, **answers: Answer) -> None:
        self.answers = answers
        self.calls: list[tuple[str, httpx.Request]] = []
        self.video = tiny_mp4()

    def record(self) -> dict:
        return {"id": "cgt-up-1", "model": "doubao-seedance-1-0-pro-250528", "status": "succeeded",
                "resolution": "480p", "ratio": "16:9", "duration": 2, "generate_audio": False,
                "content": {"video_url": VIDEO_URL}, "usage": {"completion_tokens": USAGE, "total_tokens": USAGE}}

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.url.host != "upstream.test":
            kind = "download"
        elif request.method == "POST":
            kind = "create"
        else:
            kind = "list" if request.url.path.endswith("/tasks") else "get"
        self.calls.append((kind, request))
        answer = self.answers.get(kind)
        response = answer(request) if answer is not None else None
        if response is not None:
            return response
        if kind == "create":
            return httpx.Response(200, json={"id": "cgt-up-1"})
        if kind == "download":
            return httpx.Response(200, content=self.video)
        if kind == "list":
            return httpx.Response(200, json={"total": 1, "items": [self.record()]})
        return httpx.Response(200, json=self.record())

    def count(self, kind: str) -> int:
        return sum(1 for k, _ in self.calls if k == kind)


def first(n: int, response: Callable[[], httpx.Response]) -> Answer:
    """`response` for the first `n` calls, then the upstream's own answers."""
    seen = [0]

    def answer(request: httpx.Request) -> httpx.Response | None:
        seen[0] += 1
        return response() if seen[0] <= n else None

    return answer


def unlisted(request: httpx.Request) -> httpx.Response:
    """A LIST that does not show the task (not indexed yet, or not there at all): it is read by GET."""
    return httpx.Response(200, json={"total": 0, "items": []})


@pytest.fixture
def gateway(tmp_path, backend):
    """(make, clock): make(upstream) -> the gateway's services, no background threads. One fake clock
    is the service's, and the generator's waits and wall time: a wait of a minute takes none."""
    clock = FakeClock(float(int(time.time())))
    made = []

    def make(upstream: Upstream, generator_class: type[UpstreamGenerator] = UpstreamGenerator):
        generator = partial(generator_class, BASE, [UpstreamKey("main", UPSTREAM_KEY)],
                            transport=httpx.MockTransport(upstream), sleep=clock.advance, monotonic=clock,
                            clock=clock, poll_first=1.0, poll_max=15.0, list_interval=1.0)
        settings = Settings(data_dir=tmp_path, api_keys={"member": "studio"}, workers=0, clock=clock,
                            log_requests=False, upstream_url=BASE,
                            upstream_keys=[UpstreamKey("main", UPSTREAM_KEY)], **backend.settings())
        services = create_app(settings, gateway=lambda hooks: generator(hooks=hooks),
                              start_background=False).state.services
        made.append(services)
        return services

    yield make, clock
    for services in made:
        services.stop()


def run(services, clock) -> str:
    task_id = services.tasks.create(Caller("studio", "member"), dict(BODY)).id
    services.workers.run_one(services.store.claim_next("w1", clock()), "w1")
    return task_id


def ledger_of(services, task_id: str) -> tuple[str, int | None]:
    with services.engine.connect() as conn:
        return tuple(conn.execute(select(ledger.c.state, ledger.c.tokens).where(ledger.c.task_id == task_id)).one())


# ---------- 1. a 200 that cannot be read ----------

UNREADABLE = {
    "a proxy's page": lambda: httpx.Response(200, content=b"<html>gateway timeout</html>",
                                             headers={"content-type": "text/html"}),
    "a cut body": lambda: httpx.Response(200, content=b'{"items": [{"id": "cgt-up'),
    "a JSON array": lambda: httpx.Response(200, json=[{"id": "cgt-up-1", "status": "running"}]),
    "JSON null": lambda: httpx.Response(200, json=None),
    "bytes that are not text": lambda: httpx.Response(200, content=b"\xff\xfe\x00garbage"),
}
UNREADABLE_LIST = {
    **UNREADABLE,
    "items not a list": lambda: httpx.Response(200, json={"total": 1, "items": {"id": "cgt-up-1"}}),
    "items not objects": lambda: httpx.Response(200, json={"total": 1, "items": ["cgt-up-1"]}),
}


@pytest.mark.parametrize("answer", UNREADABLE_LIST, ids=list(UNREADABLE_LIST))
def test_a_list_answered_200_in_words_that_cannot_be_read_is_asked_again(gateway, answer):
    make, clock = gateway
    upstream = Upstream(list=first(1, UNREADABLE_LIST[answer]))
    services = make(upstream)
    task_id = run(services, clock)
    row = services.store.get_by_id(task_id)
    assert (row.status, row.error_code) == ("succeeded", None), row.error_message
    assert ledger_of(services, task_id) == ("settled", USAGE)  # at the upstream's usage, the video archived
    assert upstream.count("create") == 1 and upstream.count("list") >= 2


@pytest.mark.parametrize("answer", UNREADABLE, ids=list(UNREADABLE))
def test_a_get_answered_200_in_words_that_cannot_be_read_is_asked_again(gateway, answer):
    make, clock = gateway
    upstream = Upstream(list=unlisted, get=first(2, UNREADABLE[answer]))
    services = make(upstream)
    task_id = run(services, clock)
    row = services.store.get_by_id(task_id)
    assert (row.status, row.error_code) == ("succeeded", None), row.error_message
    assert ledger_of(services, task_id) == ("settled", USAGE)
    assert upstream.count("create") == 1 and upstream.count("get") == 3


UNREADABLE_CREATE = {
    **UNREADABLE,
    "no id": lambda: httpx.Response(200, json={"error": None}),
    "an empty id": lambda: httpx.Response(200, json={"id": ""}),
    "an id that is not text": lambda: httpx.Response(200, json={"id": 17}),
}


@pytest.mark.parametrize("answer", UNREADABLE_CREATE, ids=list(UNREADABLE_CREATE))
def test_a_create_answered_200_without_a_readable_id_is_an_unknown_outcome_held_then_counted(gateway, answer):
    make, clock = gateway
    upstream = Upstream(create=lambda request: UNREADABLE_CREATE[answer]())
    services = make(upstream)
    task_id = run(services, clock)
    row = services.store.get_by_id(task_id)
    assert (row.status, row.error_code) == ("failed", OUTCOME_UNKNOWN)
    assert "not sent again" in row.error_message
    assert upstream.count("create") == 1  # the task may exist upstream: never sent twice
    services.workers.sweep()
    assert ledger_of(services, task_id)[0] == "reserved"
    clock.advance(UNANSWERED_CREATE_S)
    services.workers.sweep()
    assert ledger_of(services, task_id)[0] == "settled"


# ---------- 3. a 404 for a task the upstream accepted ----------


def not_found() -> httpx.Response:
    return httpx.Response(404, json={"error": {"code": "ResourceNotFound", "message": "task not found"}})


def test_a_task_the_upstream_does_not_show_yet_after_its_create_is_followed_to_its_end(gateway):
    """The LIST and GET lag the create for half a minute; the task was never gone."""
    make, clock = gateway
    upstream = Upstream(list=first(NOT_FOUND_READS - 1, lambda: unlisted(None)),
                        get=first(NOT_FOUND_READS - 1, not_found))
    services = make(upstream)
    started = clock()
    task_id = run(services, clock)
    row = services.store.get_by_id(task_id)
    assert (row.status, row.error_code) == ("succeeded", None), row.error_message
    assert ledger_of(services, task_id) == ("settled", USAGE)
    assert upstream.count("get") == NOT_FOUND_READS - 1 and clock() - started < NOT_FOUND_GRACE_S


def test_a_task_the_upstream_keeps_answering_404_fails_after_the_grace_and_its_reservation_is_released(gateway):
    make, clock = gateway
    upstream = Upstream(list=unlisted, get=lambda request: not_found())
    services = make(upstream)
    started = clock()
    task_id = run(services, clock)
    row = services.store.get_by_id(task_id)
    assert (row.status, row.error_code) == ("failed", "UpstreamTaskNotFound")
    assert upstream.count("get") >= NOT_FOUND_READS and clock() - started >= NOT_FOUND_GRACE_S
    assert ledger_of(services, task_id)[0] == "reserved"  # held until a sweep asks the upstream again
    services.workers.sweep()
    assert ledger_of(services, task_id)[0] == "released"  # it did not run there, as far as anyone can tell
    assert upstream.count("create") == 1


@pytest.mark.parametrize(("ended_ago", "created_ago", "expected"), [
    (10.0, None, "reserved"),  # its create may be younger still: maybe not indexed yet
    (NOT_FOUND_GRACE_S, None, "released"),
    (3600.0, 10.0, "reserved"),  # an orphan: its create was answered after the task ended here
])
def test_a_held_task_the_upstream_answers_404_for_is_released_once_past_the_lag(
        gateway, ended_ago, created_ago, expected):
    """A worker lost three times while it followed the upstream task (TaskAttemptsExhausted), or the
    task ended here as its create was answered: the sweep asks the upstream, which has no such task."""
    make, clock = gateway
    upstream = Upstream(get=lambda request: not_found())
    services = make(upstream)
    task_id = services.tasks.create(Caller("studio", "member"), dict(BODY)).id
    services.store.claim_next("w1", clock())
    state = {"phase": "running", "key": "main", "upstream_id": "cgt-up-1"}
    if created_ago is not None:
        state["created_at"] = clock() + ended_ago - created_ago
    assert services.store.save_generator_state(task_id, "w1", json.dumps(state))
    services.store.fail(task_id, "w1", clock(), "TaskAttemptsExhausted", "lost three times")
    clock.advance(ended_ago)
    services.workers.sweep()
    assert ledger_of(services, task_id)[0] == expected
    assert upstream.count("get") == 1
    clock.advance(NOT_FOUND_GRACE_S)
    services.workers.sweep()
    assert ledger_of(services, task_id)[0] == "released"  # past the lag: it did not run there


def test_a_held_task_the_upstream_cannot_be_read_for_stays_held(gateway):
    """Only the upstream's 404 releases: a 5xx or an unreadable 200 says nothing, asked again."""
    make, clock = gateway
    answers = iter([httpx.Response(503, json={"error": {"code": "ServiceUnavailable", "message": "down"}}),
                    httpx.Response(200, content=b"<html>proxy</html>")])
    upstream = Upstream(get=lambda request: next(answers, None))
    services = make(upstream)
    task_id = services.tasks.create(Caller("studio", "member"), dict(BODY)).id
    services.store.claim_next("w1", clock())
    assert services.store.save_generator_state(task_id, "w1", json.dumps(
        {"phase": "running", "key": "main", "upstream_id": "cgt-up-1"}))
    services.store.fail(task_id, "w1", clock(), "TaskAttemptsExhausted", "lost three times")
    for _ in range(2):
        services.workers.sweep()
        assert ledger_of(services, task_id)[0] == "reserved"
    services.workers.sweep()  # the upstream reads it now: it ran there
    assert ledger_of(services, task_id)[0] == "settled"


# ---------- 5. what a member reads when the result or the gateway itself fails ----------


def test_a_video_that_starts_like_an_mp4_but_cannot_be_decoded_fails_as_the_upstreams_result(gateway, tmp_path):
    make, clock = gateway
    upstream = Upstream()
    upstream.video = b"\x00\x00\x00\x18ftypisom" + b"\x00" * 200
    services = make(upstream)
    task_id = run(services, clock)
    row = services.store.get_by_id(task_id)
    assert (row.status, row.error_code) == ("failed", "UpstreamResultInvalid")
    assert row.error_message.startswith("The upstream's video") and "/" not in row.error_message
    assert ledger_of(services, task_id)[0] == "settled"  # the upstream made and billed it: its estimate


class ScratchRefused(UpstreamGenerator):
    """A gateway whose scratch folder cannot be written: an error that is no fault of the task's, whose
    message names a file of the server."""

    def _archive(self, record, job, *args):
        raise PermissionError(13, "Permission denied", str(job.output_dir / "upstream-video.mp4"))


def test_a_gateway_failing_for_no_reason_of_the_tasks_names_the_gateway_and_no_server_path(gateway, tmp_path):
    make, clock = gateway
    services = make(Upstream(), generator_class=ScratchRefused)
    task_id = run(services, clock)
    row = services.store.get_by_id(task_id)
    assert (row.status, row.error_code) == ("failed", "InternalServiceError")
    assert row.error_message.startswith("The gateway") and "renderer" not in row.error_message
    assert "PermissionError" in row.error_message
    assert str(tmp_path) not in row.error_message and "/" not in row.error_message


class FailingRenderer:
    def __init__(self, error: Exception) -> None:
        self.error = error

    def render(self, job, inputs, progress, is_cancelled):
        raise self.error


@pytest.mark.parametrize(("error", "shown"), [
    (FileNotFoundError(2, "No such file or directory", "/srv/dailies/files/.work/font.ttf"), "FileNotFoundError"),
    (RuntimeError("scene gave 47 frames, 48 expected"), "RuntimeError: scene gave 47 frames, 48 expected"),
])
def test_a_renderer_failing_for_no_reason_of_the_tasks_shows_its_error_but_never_a_server_path(
        tmp_path, backend, error, shown):
    clock = FakeClock(float(int(time.time())))
    settings = Settings(data_dir=tmp_path, api_keys={"member": "studio"}, workers=0, clock=clock,
                        log_requests=False, **backend.settings())
    services = create_app(settings, generator=FailingRenderer(error), start_background=False).state.services
    try:
        row = services.store.get_by_id(run(services, clock))
    finally:
        services.stop()
    assert (row.status, row.error_code) == ("failed", "InternalServiceError")
    assert row.error_message.startswith(f"The preview renderer failed: {shown}")
    assert "/srv" not in row.error_message


# ---------- 6. a result URL that redirects ----------

PUBLIC = "93.184.216.34"  # a public address, named by its number: no DNS in the test


def redirect(location: str, status: int = 302) -> httpx.Response:
    return httpx.Response(status, headers={"Location": location})


def downloads(upstream: Upstream) -> list[httpx.Request]:
    return [request for kind, request in upstream.calls if kind == "download"]


def test_a_result_url_that_redirects_is_followed_hop_by_hop_without_the_upstream_key(gateway):
    def cdn(request: httpx.Request) -> httpx.Response | None:
        if request.url.host == "cdn.test":
            return redirect(f"http://{PUBLIC}/signed/video.mp4?signature=abc")
        if request.url.path == "/signed/video.mp4":
            return redirect("/bucket/video.mp4", 307)  # relative: on the same host
        return None  # the file itself

    make, clock = gateway
    upstream = Upstream(download=cdn)
    services = make(upstream)
    task_id = run(services, clock)
    row = services.store.get_by_id(task_id)
    assert (row.status, row.error_code) == ("succeeded", None), row.error_message
    assert ledger_of(services, task_id) == ("settled", USAGE)
    assert [str(r.url) for r in downloads(upstream)] == [
        VIDEO_URL, f"http://{PUBLIC}/signed/video.mp4?signature=abc", f"http://{PUBLIC}/bucket/video.mp4"]
    assert all("authorization" not in r.headers for r in downloads(upstream))
    assert all(r.headers.get("authorization") == f"Bearer {UPSTREAM_KEY}"
               for kind, r in upstream.calls if kind != "download")


@pytest.mark.parametrize("location", [
    "http://169.254.169.254/latest/meta-data/", "http://10.0.0.5/video.mp4", "http://127.0.0.1:9000/video.mp4",
    "http://[::1]/video.mp4", "file:///etc/passwd"])
def test_a_redirect_to_a_place_the_service_does_not_fetch_from_is_not_followed(gateway, location):
    make, clock = gateway
    upstream = Upstream(download=lambda request: redirect(location))
    services = make(upstream)
    task_id = run(services, clock)
    row = services.store.get_by_id(task_id)
    assert (row.status, row.error_code) == ("failed", "UpstreamResultInvalid")
    assert "redirected to a" in row.error_message
    assert [str(r.url) for r in downloads(upstream)] == [VIDEO_URL]  # the first answer only
    assert ledger_of(services, task_id)[0] == "settled"  # the upstream made and billed it: its estimate


def test_redirects_are_followed_a_bounded_number_of_times(gateway):
    make, clock = gateway
    upstream = Upstream(download=lambda request: redirect(f"http://{PUBLIC}/again{len(upstream.calls)}"))
    services = make(upstream)
    task_id = run(services, clock)
    row = services.store.get_by_id(task_id)
    assert (row.status, row.error_code) == ("failed", "UpstreamResultInvalid")
    assert "redirected more than 5 times" in row.error_message
    assert len(downloads(upstream)) == 6  # the URL and 5 redirects, each answered
