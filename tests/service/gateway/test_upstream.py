"""The forwarding generator against a scripted upstream (httpx.MockTransport): at most one upstream
task per member task whatever happens to the create, keys set aside on 401, 429 and 5xx retried,
a task picked up again followed instead of created again, failures passed on with their code."""

from __future__ import annotations

import dataclasses
import io
import json

import httpx
import pytest

from dailies.generator.inputs import InputResolver
from dailies.generator.protocol import RenderJob
from dailies.service.gateway.forwarding import OUTCOME_UNKNOWN, UpstreamFailed, UpstreamGenerator, UpstreamKey
from dailies.service.gateway.hooks import GatewayHooks
from dailies.spec.models import CreateTaskRequest

BASE = "https://upstream.test/api/v3"
TASKS = f"{BASE}/contents/generations/tasks"


def tiny_mp4() -> bytes:
    import av
    import numpy as np

    out = io.BytesIO()
    with av.open(out, "w", format="mp4") as container:
        stream = container.add_stream("libx264", rate=24)
        stream.width, stream.height, stream.pix_fmt = 64, 48, "yuv420p"
        for _ in range(3):
            frame = av.VideoFrame.from_ndarray(np.zeros((48, 64, 3), dtype=np.uint8), format="rgb24")
            container.mux(stream.encode(frame))
        container.mux(stream.encode())
    return out.getvalue()


class Upstream:
    """A scripted upstream: answers for creates in order, then a task that succeeds."""

    def __init__(self, creates: list) -> None:
        self.creates = list(creates)
        self.posts: list[dict] = []
        self.keys_used: list[str] = []
        self.gets = 0
        self.video = tiny_mp4()

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            self.posts.append(json.loads(request.content))
            self.keys_used.append(request.headers["authorization"])
            answer = self.creates.pop(0)
            if isinstance(answer, Exception):
                raise answer
            return answer
        if request.url.path.endswith("/video.mp4"):
            return httpx.Response(200, content=self.video)
        self.gets += 1
        task_id = request.url.path.rsplit("/", 1)[1]
        if self.gets == 1:
            return httpx.Response(200, json={"id": task_id, "status": "running"})
        return httpx.Response(200, json={
            "id": task_id, "model": "doubao-seedance-2-0-260128", "status": "succeeded", "seed": 77,
            "resolution": "480p", "ratio": "16:9", "duration": 4, "framespersecond": 24, "generate_audio": True,
            "content": {"video_url": "https://cdn.upstream.test/video.mp4"},
            "usage": {"completion_tokens": 40594, "total_tokens": 40594}})


def created(task_id: str = "cgt-up-1") -> httpx.Response:
    return httpx.Response(200, json={"id": task_id})


def job(tmp_path, state=None, saved=None) -> RenderJob:
    request = CreateTaskRequest.model_validate({
        "model": "doubao-seedance-2-0-260128", "content": [{"type": "text", "text": "a fox"}],
        "callback_url": "https://members.example/hook"})
    saved = saved if saved is not None else []
    return RenderJob(task_id="cgt-local-1", request=request, output_dir=tmp_path, seed=5, state=state or {},
                     checkpoint=saved.append)


MAIN = (UpstreamKey("main", "sk-main"),)


class FakeTime:
    """The generator's clock and sleep: a sleep moves the clock on, nothing waits for real."""

    def __init__(self) -> None:
        self.now = 1000.0
        self.slept = 0.0

    def monotonic(self) -> float:
        return self.now

    def sleep(self, seconds: float) -> None:
        self.now += seconds
        self.slept += seconds


def generator(upstream: Upstream, keys=MAIN, base: str = BASE, time_=None, hooks=None) -> UpstreamGenerator:
    time_ = time_ or FakeTime()
    return UpstreamGenerator(base, list(keys), hooks=hooks, transport=httpx.MockTransport(upstream),
                             sleep=time_.sleep, monotonic=time_.monotonic, poll_first=0.0, poll_max=0.0)


def render(gen: UpstreamGenerator, made: RenderJob, tmp_path):
    return gen.render(made, InputResolver(tmp_path), lambda f: None, lambda: False)


def test_a_task_is_created_once_followed_and_archived_with_the_upstream_numbers(tmp_path):
    upstream = Upstream([created()])
    saved: list[dict] = []
    result = render(generator(upstream), job(tmp_path, saved=saved), tmp_path)
    assert len(upstream.posts) == 1
    assert "callback_url" not in upstream.posts[0]  # members' receivers are never given to the provider
    assert saved[0]["phase"] == "creating" and saved[-2] == {"phase": "running", "key": "main",
                                                               "upstream_id": "cgt-up-1"}
    # Before the download: the upstream made (and billed) it, whatever happens to the download.
    assert saved[-1] == {**saved[-2], "upstream_succeeded": True}
    assert result.video_path.read_bytes()[4:8] == b"ftyp"
    assert (result.width, result.height, result.seed, result.completion_tokens) == (64, 48, 77, 40594)
    assert (result.resolution, result.ratio, result.duration, result.generate_audio) == ("480p", "16:9", 4, True)


def test_a_task_picked_up_again_follows_its_upstream_task_and_creates_nothing(tmp_path):
    upstream = Upstream([])
    state = {"phase": "running", "key": "main", "upstream_id": "cgt-up-9"}
    result = render(generator(upstream), job(tmp_path, state=state), tmp_path)
    assert upstream.posts == [] and result.completion_tokens == 40594


def test_a_create_whose_answer_was_lost_is_never_sent_again(tmp_path):
    upstream = Upstream([httpx.ReadTimeout("no answer")])
    saved: list[dict] = []
    with pytest.raises(UpstreamFailed) as failed:
        render(generator(upstream), job(tmp_path, saved=saved), tmp_path)
    assert failed.value.code == OUTCOME_UNKNOWN and len(upstream.posts) == 1
    assert saved[-1]["phase"] == "creating"  # what the next run finds
    with pytest.raises(UpstreamFailed) as again:
        render(generator(upstream), job(tmp_path, state=saved[-1]), tmp_path)
    assert again.value.code == OUTCOME_UNKNOWN and len(upstream.posts) == 1  # not resent


def test_refusals_that_created_nothing_are_retried_and_a_refused_key_yields_to_the_next(tmp_path):
    overloaded = {"error": {"code": "ServerOverloaded", "message": "busy"}}  # the upstream's own answer
    upstream = Upstream([httpx.ConnectError("refused"), httpx.Response(503, json=overloaded),
                         httpx.Response(401, json={"error": {"code": "AuthenticationError"}}), created("cgt-up-2")])
    gen = generator(upstream, keys=(UpstreamKey("main", "sk-main"), UpstreamKey("spare", "sk-spare")))
    saved: list[dict] = []
    render(gen, job(tmp_path, saved=saved), tmp_path)
    assert len(upstream.posts) == 4
    assert upstream.keys_used == ["Bearer sk-main"] * 3 + ["Bearer sk-spare"] and gen.set_aside == {"main"}
    assert saved[-1]["upstream_id"] == "cgt-up-2"


def test_a_rate_limited_key_yields_to_the_next_by_priority_until_its_wait_is_over(tmp_path):
    keys = (UpstreamKey("main", "sk-main"), UpstreamKey("spare", "sk-spare"))
    clock = FakeTime()
    upstream = Upstream([httpx.Response(429, headers={"Retry-After": "20"}), created("cgt-up-a"),
                         created("cgt-up-b")])
    gen = generator(upstream, keys=keys, time_=clock)
    (tmp_path / "a").mkdir()
    render(gen, job(tmp_path / "a"), tmp_path / "a")
    assert upstream.keys_used == ["Bearer sk-main", "Bearer sk-spare"]  # no wait: the next key took it
    clock.now += 21  # main's wait is over: it is first again
    (tmp_path / "b").mkdir()
    render(gen, job(tmp_path / "b"), tmp_path / "b")
    assert upstream.keys_used[-1] == "Bearer sk-main"
    # Both rate-limited: the create waits (on the generator's clock) for the first to be free.
    upstream.creates = [httpx.Response(429, headers={"Retry-After": "5"}),
                        httpx.Response(429, headers={"Retry-After": "9"}), created("cgt-up-c")]
    (tmp_path / "c").mkdir()
    before = clock.slept
    render(gen, job(tmp_path / "c"), tmp_path / "c")
    assert upstream.keys_used[-3:] == ["Bearer sk-main", "Bearer sk-spare", "Bearer sk-main"]
    assert 4 <= clock.slept - before <= 10


# Finding B: the gateway read Retry-After with a bare float(). Each answer here is a 429 before a create.
DATE = "Tue, 14 Nov 2023 22:13:20 GMT"


class BoundedTime(FakeTime):
    """FakeTime that fails a test waiting for ever (a key cooling until NaN) instead of hanging it."""

    def sleep(self, seconds: float) -> None:
        super().sleep(seconds)
        assert self.slept < 3600, "waited an hour of the generator's time: a wait that never ends"


@pytest.mark.parametrize(("headers", "waits_at_least", "waits_at_most"), [
    ({"Retry-After": "7"}, 7.0, 7.7),
    ({"Retry-After": "-5"}, 1.0, 1.1),  # a negative wait is none: the usual backoff, not a retry at once
    ({"Retry-After": "0"}, 1.0, 1.1),
    ({"Retry-After": "soon"}, 1.0, 1.1),  # garbage
    ({"Retry-After": "1_0"}, 1.0, 1.1),  # Python's float() reads it; a header does not
    ({"Retry-After": "nan"}, 1.0, 1.1),
    ({"Retry-After": "inf"}, 1.0, 1.1),
    ({"Retry-After": "1e400"}, 1.0, 1.1),  # too large for a float: infinity
    ({"Retry-After": "1e308"}, 30.0, 33.0),  # huge: capped
    # An HTTP date, measured from the answer's own Date.
    ({"Retry-After": "Tue, 14 Nov 2023 22:13:32 GMT", "Date": DATE}, 12.0, 13.2),
    ({"Retry-After": "Tue, 14 Nov 2023 22:13:00 GMT", "Date": DATE}, 1.0, 1.1),  # past: no wait asked
    ({"Retry-After": "Tue, 14 Nov 9999 22:13:00 GMT", "Date": DATE}, 30.0, 33.0),  # far: capped
    ({"Retry-After": "Tue, 14 Nov 99999 22:13:00 GMT", "Date": DATE}, 1.0, 1.1),  # not a date
])
def test_the_upstreams_retry_after_is_read_with_the_products_one_parser(tmp_path, headers, waits_at_least,
                                                                        waits_at_most):
    clock = BoundedTime()
    upstream = Upstream([httpx.Response(429, headers=headers), created("cgt-up-r")])
    saved: list[dict] = []
    render(generator(upstream, time_=clock), job(tmp_path, saved=saved), tmp_path)
    assert len(upstream.posts) == 2 and saved[-1]["upstream_id"] == "cgt-up-r"
    # The generator's own clock (FakeTime): what it chose to wait, never a real wait. It sleeps until a
    # deadline on a clock near 1000 s, so the sum may fall short of the wait by a float's rounding.
    assert waits_at_least - 1e-9 <= clock.slept <= waits_at_most + 1e-9, clock.slept


@pytest.mark.parametrize("value", ["nan", "NaN", "-nan", "inf", "-5"])
def test_a_key_rate_limited_with_a_bad_retry_after_is_used_again_after_a_backoff(tmp_path, value):
    """`Retry-After: NaN` made the key's cooling NaN: never ready again in the process."""
    keys = (UpstreamKey("main", "sk-main"), UpstreamKey("spare", "sk-spare"))
    clock = BoundedTime()
    upstream = Upstream([httpx.Response(429, headers={"Retry-After": value}), created("cgt-up-a"),
                         created("cgt-up-b")])
    gen = generator(upstream, keys=keys, time_=clock)
    (tmp_path / "a").mkdir()
    render(gen, job(tmp_path / "a"), tmp_path / "a")
    assert upstream.keys_used == ["Bearer sk-main", "Bearer sk-spare"]
    assert 0 < gen.cooling["main"] - clock.now <= 1.0  # the usual first backoff, a number
    clock.now += 2
    (tmp_path / "b").mkdir()
    render(gen, job(tmp_path / "b"), tmp_path / "b")
    assert upstream.keys_used[-1] == "Bearer sk-main"


def test_an_upstream_refusal_or_failure_fails_the_task_with_the_upstreams_code(tmp_path):
    upstream = Upstream([httpx.Response(400, json={"error": {"code": "InvalidParameter", "message": "bad ratio"}})])
    with pytest.raises(UpstreamFailed) as refused:
        render(generator(upstream), job(tmp_path), tmp_path)
    assert (refused.value.code, "bad ratio" in refused.value.message) == ("InvalidParameter", True)

    def failing(request: httpx.Request) -> httpx.Response:
        if request.method == "POST":
            return created("cgt-up-3")
        return httpx.Response(200, json={"id": "cgt-up-3", "status": "failed", "error": {
            "code": "OutputVideoSensitiveContentDetected", "message": "The output may contain sensitive content."}})

    gen = generator(failing)
    with pytest.raises(UpstreamFailed) as failed:
        render(gen, job(tmp_path), tmp_path)
    assert failed.value.code == "OutputVideoSensitiveContentDetected"


def test_a_byteplus_upstream_gets_the_byteplus_id_of_the_members_model(tmp_path):
    upstream = Upstream([created()])
    gen = generator(upstream, base="https://ark.ap-southeast.bytepluses.com/api/v3")
    render(gen, job(tmp_path), tmp_path)
    assert upstream.posts[0]["model"] == "dreamina-seedance-2-0-260128"


def test_a_key_whose_minute_is_used_up_here_waits_instead_of_meeting_a_429(tmp_path):
    clock = FakeTime()
    upstream = Upstream([created("cgt-up-r")])
    asked = []

    def admit(key_name: str, model: str) -> float:
        asked.append((key_name, model, clock.now))
        return 30.0 if len(asked) == 1 else 0.0  # the first ask: this minute is full for 30 s more

    gen = generator(upstream, time_=clock, hooks=GatewayHooks(admit=admit))
    render(gen, job(tmp_path), tmp_path)
    assert [a[:2] for a in asked] == [("main", "doubao-seedance-2-0-260128")] * 2
    assert asked[1][2] - asked[0][2] >= 27  # waited (on the generator's clock), then sent once
    assert len(upstream.posts) == 1


def test_many_followed_tasks_are_read_with_one_list_at_a_time(tmp_path):
    """Four renders at once: their upstream tasks are read by LISTs of several ids (at most one per
    list_interval), never one GET each."""
    import threading as th

    video = tiny_mp4()
    lock = th.Lock()
    looks: dict[str, int] = {}
    calls = {"list": [], "get": 0, "post": 0}

    def upstream(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/video.mp4"):
            return httpx.Response(200, content=video)
        with lock:
            if request.method == "POST":
                calls["post"] += 1
                return created(f"cgt-up-{calls['post']}")
            if request.url.path.endswith("/tasks"):
                ids = request.url.params.get_list("filter.task_ids")
                calls["list"].append(ids)
                items = []
                for task_id in ids:
                    looks[task_id] = looks.get(task_id, 0) + 1
                    done = looks[task_id] >= 3
                    items.append({"id": task_id, "status": "succeeded" if done else "running", "seed": 1,
                                  "resolution": "480p", "ratio": "16:9", "duration": 4,
                                  "content": {"video_url": "https://cdn.upstream.test/video.mp4"} if done else {},
                                  "usage": {"completion_tokens": 10, "total_tokens": 10} if done else None})
                return httpx.Response(200, json={"total": len(items), "items": items})
            calls["get"] += 1
            return httpx.Response(404)

    gen = UpstreamGenerator(BASE, list(MAIN), transport=httpx.MockTransport(upstream), poll_first=0.01,
                            poll_max=0.02, list_interval=0.05)
    results, errors = [], []

    def one(n: int) -> None:
        folder = tmp_path / str(n)
        folder.mkdir()
        try:
            results.append(render(gen, job(folder), folder))
        except Exception as exc:  # reported below
            errors.append(exc)

    threads = [th.Thread(target=one, args=(n,)) for n in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    assert not errors and len(results) == 4
    assert calls["get"] == 0 and calls["post"] == 4
    assert max(len(ids) for ids in calls["list"]) > 1  # one LIST read several tasks


def test_a_5xx_from_something_in_between_is_an_unknown_outcome_never_resent(tmp_path):
    upstream = Upstream([httpx.Response(502, text="<html>Bad Gateway</html>")])
    with pytest.raises(UpstreamFailed) as failed:
        render(generator(upstream), job(tmp_path), tmp_path)
    assert failed.value.code == OUTCOME_UNKNOWN and len(upstream.posts) == 1


def test_a_result_that_cannot_be_downloaded_yet_postpones_the_render_instead_of_failing_it(tmp_path):
    from dailies.generator.protocol import RenderPostponed

    upstream = Upstream([created("cgt-up-d")])

    def flaky(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/video.mp4"):
            raise httpx.ReadError("reset")
        return upstream(request)

    gen = UpstreamGenerator(BASE, list(MAIN), transport=httpx.MockTransport(flaky), sleep=lambda s: None,
                            poll_first=0.0, poll_max=0.0)
    saved: list[dict] = []
    with pytest.raises(RenderPostponed):
        render(gen, job(tmp_path, saved=saved), tmp_path)
    assert saved[-1]["upstream_id"] == "cgt-up-d"  # the next run continues the same upstream task


def test_a_key_refused_for_one_model_yields_to_the_next_for_that_model_only(tmp_path):
    """A 403 about one model (its service not activated on that key's account) is not a bad key: the
    next key takes the task, and the refused key still serves other models."""
    not_open = httpx.Response(403, json={"error": {"code": "OperationDenied.ServiceNotOpen",
                                                   "message": "activate the model service first"}})
    upstream = Upstream([not_open, created("cgt-up-m")])
    clock = FakeTime()
    gen = generator(upstream, keys=(UpstreamKey("main", "sk-main"), UpstreamKey("spare", "sk-spare")), time_=clock)
    (tmp_path / "a").mkdir()
    render(gen, job(tmp_path / "a"), tmp_path / "a")
    assert upstream.keys_used == ["Bearer sk-main", "Bearer sk-spare"] and gen.set_aside == set()
    # The same model again: the refused key is not tried for it; another model: main again.
    upstream.creates = [created("cgt-up-n"), created("cgt-up-o")]
    clock.now += 2  # past the LIST interval, well within the refusal's
    (tmp_path / "b").mkdir()
    render(gen, job(tmp_path / "b"), tmp_path / "b")
    assert upstream.keys_used[-1] == "Bearer sk-spare"
    made = job(tmp_path / "c")
    other = dataclasses.replace(made, request=made.request.model_copy(
        update={"model": "doubao-seedance-1-0-pro-250528"}))
    clock.now += 2
    (tmp_path / "c").mkdir()
    render(gen, other, tmp_path / "c")
    assert upstream.keys_used[-1] == "Bearer sk-main" and upstream.posts[-1]["model"] == other.request.model
    # Once the refusal's time is over, the key is tried for that model again.
    upstream.creates = [created("cgt-up-t")]
    clock.now += 601
    (tmp_path / "d").mkdir()
    render(gen, job(tmp_path / "d"), tmp_path / "d")
    assert upstream.keys_used[-1] == "Bearer sk-main"


def test_a_model_every_key_is_refused_fails_the_task_with_the_upstreams_code_and_keeps_the_keys(tmp_path):
    refused = {"error": {"code": "AccessDenied", "message": "no access to this model"}}
    upstream = Upstream([httpx.Response(403, json=refused), httpx.Response(403, json=refused)])
    gen = generator(upstream, keys=(UpstreamKey("main", "sk-main"), UpstreamKey("spare", "sk-spare")))
    with pytest.raises(UpstreamFailed) as failed:
        render(gen, job(tmp_path), tmp_path)
    assert failed.value.code == "AccessDenied" and "no access to this model" in failed.value.message
    assert len(upstream.posts) == 2 and gen.set_aside == set()


def test_an_account_level_403_sets_the_key_aside_for_every_model(tmp_path):
    overdue = {"error": {"code": "AccountOverdueError", "message": "the account is overdue"}}
    upstream = Upstream([httpx.Response(403, json=overdue), created("cgt-up-p")])
    gen = generator(upstream, keys=(UpstreamKey("main", "sk-main"), UpstreamKey("spare", "sk-spare")))
    render(gen, job(tmp_path), tmp_path)
    assert gen.set_aside == {"main"} and upstream.keys_used[-1] == "Bearer sk-spare"


@pytest.mark.parametrize("status", [503, 429, 408])
def test_a_result_server_saying_not_now_postpones_the_render(tmp_path, status):
    from dailies.generator.protocol import RenderPostponed

    upstream = Upstream([created("cgt-up-q")])
    downloads = []

    def busy_cdn(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/video.mp4"):
            downloads.append(1)
            return httpx.Response(status, text="busy")
        return upstream(request)

    gen = generator(busy_cdn)
    saved: list[dict] = []
    with pytest.raises(RenderPostponed):
        render(gen, job(tmp_path, saved=saved), tmp_path)
    assert len(downloads) == 3 and saved[-1]["upstream_succeeded"] is True


def test_a_result_url_that_is_gone_fails_the_render_with_the_upstream_success_checkpointed(tmp_path):
    upstream = Upstream([created("cgt-up-r")])

    def expired_url(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/video.mp4"):
            return httpx.Response(403, text="Request has expired")
        return upstream(request)

    saved: list[dict] = []
    with pytest.raises(UpstreamFailed) as failed:
        render(generator(expired_url), job(tmp_path, saved=saved), tmp_path)
    assert "HTTP 403" in failed.value.message and saved[-1]["upstream_succeeded"] is True


class Scripted:
    """An upstream whose task reads `status` (a queue that DELETE cancels, as the spec says)."""

    def __init__(self, status: str, delete_answer: int = 200) -> None:
        self.status = status
        self.delete_answer = delete_answer
        self.deletes = 0

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.method == "DELETE":
            self.deletes += 1
            if self.delete_answer == 200 and self.status == "queued":
                self.status = "cancelled"
            return httpx.Response(self.delete_answer, json={})
        return httpx.Response(200, json={"id": "cgt-up-s", "status": self.status})


@pytest.mark.parametrize("status", ["succeeded", "failed", "running", "expired"])
def test_cancel_never_deletes_an_upstream_task_that_is_not_queued(status):
    """The upstream's DELETE of a finished task deletes its record (answered 200): a cancel sends it
    only to a task the upstream shows queued."""
    upstream = Scripted(status)
    gen = generator(upstream)
    assert gen.cancel_queued({"upstream_id": "cgt-up-s", "key": "main"}) is False
    assert upstream.deletes == 0


def test_cancel_of_a_queued_upstream_task_is_true_once_it_reads_cancelled():
    upstream = Scripted("queued")
    gen = generator(upstream)
    assert gen.cancel_queued({"upstream_id": "cgt-up-s", "key": "main"}) is True
    assert upstream.deletes == 1
    # A DELETE answered 200 whose task does not read cancelled afterwards is not a cancel.
    stubborn = Scripted("queued")
    stubborn_gen = generator(lambda request: (httpx.Response(200, json={}) if request.method == "DELETE"
                                              else stubborn(request)))
    assert stubborn_gen.cancel_queued({"upstream_id": "cgt-up-s", "key": "main"}) is False
    # Already known to have succeeded there: not even asked.
    assert gen.cancel_queued({"upstream_id": "cgt-up-s", "key": "main", "upstream_succeeded": True}) is False


class Reporting(Upstream):
    """An upstream whose succeeded record says only what `fields` say of usage and audio."""

    def __init__(self, **fields) -> None:
        super().__init__([created()])
        self.fields = fields

    def __call__(self, request: httpx.Request) -> httpx.Response:
        if request.method == "GET" and not request.url.path.endswith("/video.mp4"):
            return httpx.Response(200, json={
                "id": request.url.path.rsplit("/", 1)[1], "status": "succeeded", "resolution": "480p",
                "ratio": "16:9", "duration": 4, "content": {"video_url": "https://cdn.upstream.test/video.mp4"},
                **self.fields})
        return super().__call__(request)


def test_usage_given_only_as_total_tokens_is_what_the_task_settles_at(tmp_path):
    result = render(generator(Reporting(usage={"total_tokens": 42336})), job(tmp_path), tmp_path)
    assert result.completion_tokens == 42336


def test_a_record_without_usage_settles_at_the_formula_over_the_delivered_video_never_0(tmp_path):
    result = render(generator(Reporting()), job(tmp_path), tmp_path)
    assert result.completion_tokens == 64 * 48 * 3 // 1024  # the clip: 64x48, 3 frames


@pytest.mark.parametrize(("asked", "model", "expected"), [
    (None, "doubao-seedance-2-0-260128", True),  # the default: with sound
    (False, "doubao-seedance-2-0-260128", False),
    (True, "doubao-seedance-1-0-pro-250528", False),  # a model that makes no sound
])
def test_a_record_that_leaves_out_generate_audio_is_priced_as_asked(tmp_path, asked, model, expected):
    made = job(tmp_path)
    made.request = made.request.model_copy(update={"model": model, "generate_audio": asked})
    result = render(generator(Reporting(usage={"completion_tokens": 1000})), made, tmp_path)
    assert result.generate_audio is expected
    assert render(generator(Reporting(usage={"completion_tokens": 1}, generate_audio=False)), job(tmp_path),
                  tmp_path).generate_audio is False  # the record's word, when it gives it, wins


def test_one_key_lists_once_per_interval_whatever_the_tiers_and_every_followed_task_gets_its_turn():
    """BytePlus allows one LIST a second per account: a key following default and flex tasks (and more
    than one LIST holds) lists once a second, the tier and the ids listed longest ago first."""
    lists: list[tuple[float, str, list[str]]] = []
    clock = FakeTime()

    def upstream(request: httpx.Request) -> httpx.Response:
        ids = request.url.params.get_list("filter.task_ids")
        lists.append((clock.now, request.url.params["filter.service_tier"], ids))
        return httpx.Response(200, json={"total": len(ids), "items": [{"id": i, "status": "running"} for i in ids]})

    gen = UpstreamGenerator(BASE, list(MAIN), transport=httpx.MockTransport(upstream), monotonic=clock.monotonic)
    key = gen.keys[0]
    followed = {f"up-{n}": (key.name, "default") for n in range(150)} | {"up-flex": (key.name, "flex")}
    gen._following.update(followed)
    for _ in range(4):  # four rounds of polls, each within one instant
        for upstream_id, (_, tier) in followed.items():
            gen._look(upstream_id, key, tier)
        clock.sleep(1.0)
    assert [at for at, _, _ in lists] == [1000.0, 1001.0, 1002.0, 1003.0]  # one LIST a second
    assert {tier for _, tier, _ in lists} == {"default", "flex"}
    listed_default = [i for _, tier, ids in lists if tier == "default" for i in ids]
    assert set(listed_default) == {i for i, (_, tier) in followed.items() if tier == "default"}
