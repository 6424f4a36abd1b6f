"""Every scenario of the task API through a gateway, driven with the official Ark SDK (and the project's
client where it reads better): first frame, first and last frame, references, a draft and its final,
a chained shot (a gateway result as the next task's first frame); a DELETE in each state of a
forwarded task; the expiry of a task waiting in the gateway's queue; the member's callbacks.

Each member record is checked against the upstream's record of the same task (what the upstream
made is what the member is told), its result URLs are the gateway's, and its video still downloads
once the upstream task is deleted there.

Two setups: the module gateway of test_gateway.py (an upstream that renders, on each backend), and
`held`: a queue-only upstream that renders only what a test hands it, behind a gateway capped at one
task per model, and an idle gateway (no render slots, a clock the test moves) for the expiry."""

from __future__ import annotations

import threading
import time
from types import SimpleNamespace

import httpx
import pytest

from dailies.client import Client
from dailies.service.gateway.forwarding import UpstreamKey
from tests.service.api.test_sdk_and_processes import png_data_url
from tests.service.callbacks.receiver import Receiver
from tests.service.gateway import test_gateway
from tests.service.gateway.test_gateway import MEMBER_KEY, UPSTREAM_KEY, task_rows, upstream_id_of
from tests.support.live_service import start_live_service
from tests.support.waiting import wait_for

pytestmark = pytest.mark.slow

# test_gateway.py's module fixtures, for this module: an upstream that renders, a gateway on each backend.
upstream = test_gateway.upstream
gateway = test_gateway.gateway

V1_0 = "doubao-seedance-1-0-pro-250528"  # first frame, first and last frame, frames
V1_0_BYTEPLUS = "seedance-1-0-pro-250528"  # the same model in BytePlus' family of ids
V1_5 = "doubao-seedance-1-5-pro-251215"  # drafts
V2_0 = "doubao-seedance-2-0-260128"  # reference images
SMALL = {"resolution": "480p", "duration": 2}
# What the upstream's record says of a task, and so what the member's record must say too.
FROM_UPSTREAM = ("seed", "resolution", "ratio", "duration", "frames", "framespersecond", "generate_audio", "draft")
ENDED = ("succeeded", "failed", "expired", "cancelled")
SPEC_ERROR_FIELDS = {"message", "type", "param", "code"}


def ark(service, **options):
    from volcenginesdkarkruntime import Ark

    return Ark(base_url=service.base_url, api_key=MEMBER_KEY, **options).content_generation.tasks


def ended(sdk, task_id: str, timeout: float = 180):
    return wait_for(lambda: (r := sdk.get(task_id=task_id)).status in ENDED and r, f"task {task_id} to end",
                    timeout, interval=0.2)


def raw_record(service, key: str, task_id: str) -> httpx.Response:
    return httpx.get(f"{service.base_url}/contents/generations/tasks/{task_id}",
                     headers={"Authorization": f"Bearer {key}"})


def text(prompt: str) -> dict:
    return {"type": "text", "text": prompt}


def image(url: str, role: str) -> dict:
    return {"type": "image_url", "image_url": {"url": url}, "role": role}


def handed_over(service, task_id: str) -> str | None:
    state = service.app.state.services.store.get_by_id(task_id).generator_state
    return upstream_id_of(service, task_id) if state and "upstream_id" in state else None


def assert_is_the_upstreams(sdk_record, upstream_service, upstream_id: str, model: str) -> dict:
    """The member's record (as the SDK reads it) says what the upstream's record of the task says."""
    theirs = raw_record(upstream_service, UPSTREAM_KEY, upstream_id).json()
    assert sdk_record.model == model == theirs["model"]  # the family the member wrote
    for field in FROM_UPSTREAM:
        assert getattr(sdk_record, field, None) == theirs.get(field), (field, sdk_record.id)
    assert sdk_record.usage.completion_tokens == theirs["usage"]["completion_tokens"] > 0
    assert sdk_record.usage.total_tokens == theirs["usage"]["total_tokens"]
    return theirs


def test_every_scenario_through_the_sdk_is_the_upstreams_behind_the_gateways_urls(gateway, upstream):
    sdk = ark(gateway)
    red, blue = png_data_url((200, 30, 30)), png_data_url((30, 30, 200))
    receiver = Receiver()
    try:
        created = {
            "first_frame": (V1_0, sdk.create(
                model=V1_0, content=[text("the camera pushes in"), image(red, "first_frame")], seed=7,
                return_last_frame=True, callback_url=receiver.url("/member"), **SMALL).id),
            # In BytePlus' family: the member's record keeps the id the member wrote.
            "first_last": (V1_0_BYTEPLUS, sdk.create(
                model=V1_0_BYTEPLUS, resolution="480p", frames=29, seed=11,
                content=[text("red turns blue"), image(red, "first_frame"), image(blue, "last_frame")]).id),
            "references": (V2_0, sdk.create(
                model=V2_0, content=[text("a scene from references"), image(red, "reference_image"),
                                     image(blue, "reference_image")], resolution="480p", duration=4,
                ratio="16:9").id),
            "draft": (V1_5, sdk.create(model=V1_5, content=[text("a draft of a kite")], draft=True, duration=4,
                                       generate_audio=False).id),
        }
        records = {"first_frame": ended(sdk, created["first_frame"][1])}
        assert records["first_frame"].status == "succeeded", records["first_frame"].error
        assert_is_the_upstreams(records["first_frame"], upstream, upstream_id_of(gateway, created["first_frame"][1]),
                                V1_0)
        # The chained shot starts on the first shot's last frame, given as the gateway's URL, once the
        # upstream task that made it is gone: the gateway reads its archive and sends the image inline.
        with Client(base_url=upstream.base_url, api_key=UPSTREAM_KEY) as up:
            up.tasks.delete(upstream_id_of(gateway, created["first_frame"][1]))
        last_frame = records["first_frame"].content.last_frame_url
        with Client(base_url=gateway.base_url, api_key=MEMBER_KEY) as client:
            chained = client.tasks.create({"model": V1_0, **SMALL, "content": [
                text("shot two picks up where shot one ended"), image(last_frame, "first_frame")]}).id
        created["chained"] = (V1_0, chained)

        records["draft"] = ended(sdk, created["draft"][1])
        assert records["draft"].status == "succeeded" and records["draft"].draft, records["draft"].error
        final = sdk.create(model=V1_5, content=[{"type": "draft_task", "draft_task": {"id": created["draft"][1]}}],
                           resolution="480p").id
        created["final"] = (V1_5, final)
        for name, (_, task_id) in created.items():
            records[name] = records.get(name) or ended(sdk, task_id)
            assert records[name].status == "succeeded", (name, records[name].error)

        upstream_ids = {name: upstream_id_of(gateway, task_id) for name, (_, task_id) in created.items()}
        for name, (model, _) in created.items():
            if name != "first_frame":  # already checked, and deleted upstream
                assert_is_the_upstreams(records[name], upstream, upstream_ids[name], model)
        assert records["first_frame"].seed == 7 and records["first_last"].seed == 11
        assert records["first_last"].frames == 29 and getattr(records["first_last"], "duration", None) is None
        assert records["references"].ratio == "16:9" and records["references"].generate_audio is True
        assert records["draft"].resolution == "480p" and records["draft"].generate_audio is False
        # The final names the member's draft here, the upstream's draft there, and keeps the draft's seed.
        assert records["final"].draft_task_id == created["draft"][1]
        upstream_final = raw_record(upstream, UPSTREAM_KEY, upstream_ids["final"]).json()
        assert upstream_final["draft_task_id"] == upstream_ids["draft"]
        assert records["final"].seed == records["draft"].seed and not records["final"].draft
        # The chained shot's image reached the upstream inline, not as a loopback URL it could not fetch.
        sent = upstream.app.state.services.store.get_by_id(upstream_ids["chained"]).request
        assert "data:image/png;base64," in sent and last_frame not in sent

        # Every result URL is the gateway's; each still downloads after its upstream task is deleted.
        with Client(base_url=upstream.base_url, api_key=UPSTREAM_KEY) as up:
            for name, upstream_id in upstream_ids.items():
                if name != "first_frame":
                    up.tasks.delete(upstream_id)
        for name, upstream_id in upstream_ids.items():
            assert raw_record(upstream, UPSTREAM_KEY, upstream_id).status_code == 404, name
            content = records[name].content
            assert content.video_url.startswith(gateway.archive_root), name
            assert not content.video_url.startswith(upstream.root), name
            video = httpx.get(content.video_url)
            assert video.status_code == 200 and video.content[4:8] == b"ftyp", name
        assert last_frame.startswith(gateway.archive_root)
        frame = httpx.get(last_frame)
        assert frame.status_code == 200 and frame.content[:8] == b"\x89PNG\r\n\x1a\n"

        # The member's receiver heard every status of the task the SDK created with a callback_url,
        # from the gateway (the upstream was never given the member's URL).
        wait_for(lambda: [d.status for d in receiver.deliveries("/member")][-1:] == ["succeeded"],
                 "the member's succeeded callback", 60)
        heard = receiver.deliveries("/member")
        assert [d.status for d in heard] == ["queued", "running", "succeeded"]
        assert {d.json["id"] for d in heard} == {created["first_frame"][1]}
        assert heard[-1].json["content"]["video_url"].startswith(gateway.archive_root)
        assert all(r.callback_url is None for r in task_rows(upstream) if r.id == upstream_ids["first_frame"])
    finally:
        receiver.close()

    # A succeeded task's DELETE removes the member's record.
    from volcenginesdkarkruntime._exceptions import ArkNotFoundError

    sdk.delete(created["references"][1])
    with pytest.raises(ArkNotFoundError):
        sdk.get(task_id=created["references"][1])


def test_a_task_the_upstream_failed_is_deleted_by_its_delete(gateway):
    from volcenginesdkarkruntime._exceptions import ArkNotFoundError

    sdk = ark(gateway)
    task_id = sdk.create(model=V1_0, content=[text("from a missing frame"),
                                              image("http://frames.invalid/missing.png", "first_frame")],
                         **SMALL).id
    record = ended(sdk, task_id)
    assert record.status == "failed" and record.error.code == "InvalidParameter"
    sdk.delete(task_id)
    with pytest.raises(ArkNotFoundError):
        sdk.get(task_id=task_id)


@pytest.fixture(scope="module")
def held(tmp_path_factory):
    """A queue-only upstream (no render slots: a test renders one of its tasks by hand), a gateway in
    front of it capped at one task per model upstream, and an idle gateway (no render slots) whose
    clock a test moves. SQLite: what is checked here is the gateway's handling, not its storage."""
    root = tmp_path_factory.mktemp("held")
    moved = [0.0]
    keys = [UpstreamKey("main", UPSTREAM_KEY)]
    # A task rendered by hand has no heartbeat thread beating for it: it must not look stale.
    queue_only = start_live_service(root / "up", workers=0, api_keys={UPSTREAM_KEY: "team"}, stale_after=600)
    capped = start_live_service(root / "capped", workers=4, api_keys={MEMBER_KEY: "studio"},
                                upstream_url=queue_only.base_url, upstream_keys=keys, upstream_concurrency=1,
                                upstream_poll=(0.2, 0.5))
    idle = start_live_service(root / "idle", workers=0, api_keys={MEMBER_KEY: "studio"},
                              upstream_url=queue_only.base_url, upstream_keys=keys,
                              clock=lambda: time.time() + moved[0])
    yield SimpleNamespace(upstream=queue_only, capped=capped, idle=idle, moved=moved)
    for service in (idle, capped, queue_only):
        service.stop()


def upstream_status(service, upstream_id: str) -> str | None:
    return next((r.status for r in task_rows(service) if r.id == upstream_id), None)


def assert_refused_409(call, code: str) -> None:
    from volcenginesdkarkruntime._exceptions import ArkConflictError

    with pytest.raises(ArkConflictError) as caught:
        call()
    error = caught.value.response.json()["error"]
    assert set(error) == SPEC_ERROR_FIELDS and all(isinstance(v, str) for v in error.values()), error
    assert error["code"] == code and caught.value.status_code == 409
    # Told not to retry: the same answer would come back (and each retry's DELETE go upstream).
    assert caught.value.response.headers["x-should-retry"] == "false"


def test_delete_in_each_state_of_a_forwarded_task_through_the_sdk(held):
    from volcenginesdkarkruntime._exceptions import ArkNotFoundError

    up, sdk = held.upstream, ark(held.capped)
    # Running upstream: handed over, then started there by hand. The DELETE answers 409 and the task goes on.
    running = sdk.create(model=V1_5, content=[text("a take already started")], resolution="480p", duration=4,
                         generate_audio=False).id
    running_there = wait_for(lambda: handed_over(held.capped, running), "the task to be handed over", 60)
    started = up.app.state.services.store.claim_next("by-hand", time.time())
    assert started is not None and started.id == running_there
    assert_refused_409(lambda: sdk.delete(running), "InvalidAction.RunningTaskDeletion")
    assert sdk.get(task_id=running).status == "running" and upstream_status(up, running_there) == "running"
    render = threading.Thread(target=up.app.state.services.workers.run_one, args=(started, "by-hand"))
    render.start()
    try:
        # Queued upstream: handed over, waiting in the upstream's queue. It holds the gateway's one place for
        # its model, so the next task of that model waits queued in the gateway's own queue.
        queued_there = sdk.create(model=V1_0, content=[text("waiting upstream")], **SMALL).id
        queued_there_up = wait_for(lambda: handed_over(held.capped, queued_there), "the task to be handed over", 60)
        assert upstream_status(up, queued_there_up) == "queued"
        queued_here = sdk.create(model=V1_0, content=[text("waiting here")], **SMALL).id
        assert sdk.get(task_id=queued_here).status == "queued"

        # Queued here: cancelled, and the upstream never hears of it.
        sdk.delete(queued_here)
        assert sdk.get(task_id=queued_here).status == "cancelled"
        assert held.capped.app.state.services.store.get_by_id(queued_here).generator_state is None
        assert {r.id for r in task_rows(up)} == {running_there, queued_there_up}
        # Cancelled: the record is kept; a second DELETE answers 409.
        assert_refused_409(lambda: sdk.delete(queued_here), "InvalidAction.CancelledTaskDeletion")
        assert sdk.get(task_id=queued_here).status == "cancelled"

        # Queued upstream: cancelled there, then here.
        sdk.delete(queued_there)
        assert sdk.get(task_id=queued_there).status == "cancelled"
        assert upstream_status(up, queued_there_up) == "cancelled"
    finally:
        render.join(120)
    # The running one went on: it succeeded upstream and here, archived behind the gateway's URL.
    record = ended(sdk, running)
    assert record.status == "succeeded", record.error
    assert_is_the_upstreams(record, up, running_there, V1_5)
    assert record.content.video_url.startswith(held.capped.root)
    # Succeeded: DELETE removes the member's record.
    sdk.delete(running)
    with pytest.raises(ArkNotFoundError):
        sdk.get(task_id=running)


def test_a_task_waiting_in_the_gateways_queue_expires_and_the_members_callback_says_so(held):
    from volcenginesdkarkruntime._exceptions import ArkNotFoundError

    sdk = ark(held.idle)
    receiver = Receiver()
    try:
        seen_upstream = {r.id for r in task_rows(held.upstream)}
        task_id = sdk.create(model=V1_0, content=[text("never started")], execution_expires_after=3600,
                             callback_url=receiver.url("/member"), **SMALL).id
        wait_for(lambda: receiver.deliveries("/member"), "the queued callback", 30)
        held.moved[0] = 7200.0  # past the member's deadline, still in the gateway's queue
        held.idle.app.state.services.workers.sweep()
        record = sdk.get(task_id=task_id)
        assert record.status == "expired" and record.error.code == "TaskExpired"
        wait_for(lambda: [d.status for d in receiver.deliveries("/member")][-1:] == ["expired"],
                 "the member's expired callback", 30)
        heard = receiver.deliveries("/member")
        assert [d.status for d in heard] == ["queued", "expired"]
        assert heard[-1].json["id"] == task_id and heard[-1].json["error"]["code"] == "TaskExpired"
        # It never reached the upstream.
        assert held.idle.app.state.services.store.get_by_id(task_id).generator_state is None
        assert {r.id for r in task_rows(held.upstream)} == seen_upstream
        # Expired: DELETE removes the record.
        sdk.delete(task_id)
        with pytest.raises(ArkNotFoundError):
            sdk.get(task_id=task_id)
    finally:
        held.moved[0] = 0.0
        receiver.close()
