"""The real thing: `dailies serve` as a subprocess, used by the official Ark SDK unchanged,
killed with SIGKILL mid-render, and run twice on one data directory (or one database and bucket),
on each backend."""

from __future__ import annotations

import base64
import io
import time
from pathlib import Path

import httpx
import pytest
from PIL import Image

from tests.support.processes import Serve
from tests.support.waiting import wait_until

pytestmark = pytest.mark.slow

KEY = "sdk-test-key"
MODEL_2_0 = "doubao-seedance-2-0-260128"
MODEL_1_5 = "doubao-seedance-1-5-pro-251215"
SMALL = {"resolution": "480p", "duration": 4}


def serve(data_dir: Path, backend, workers: int = 1, stale_after: float = 15.0) -> Serve:
    return Serve(data_dir, workers=workers, stale_after=stale_after, env=backend.environment(),
                 api_keys=f"sdk:{KEY}")


def png_data_url(color: tuple[int, int, int], size=(640, 480)) -> str:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, "PNG")
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode()


def wait_terminal(ark, task_id: str, timeout: float = 120):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        task = ark.content_generation.tasks.get(task_id=task_id)
        if task.status in ("succeeded", "failed", "expired", "cancelled"):
            return task
        time.sleep(0.3)
    raise AssertionError(f"{task_id} did not finish")


@pytest.fixture(scope="module")
def served(tmp_path_factory, module_backend):
    server = serve(tmp_path_factory.mktemp("serve"), module_backend, workers=2)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def ark(served):
    from volcenginesdkarkruntime import Ark

    return Ark(base_url=served.base_url, api_key=KEY)


def test_sdk_creates_every_kind_of_task_and_reads_them(ark, served, module_backend):
    result_host = module_backend.aws_environment.get("AWS_ENDPOINT_URL", served.root)
    tasks = ark.content_generation.tasks
    red, blue = png_data_url((200, 30, 30)), png_data_url((30, 30, 200))
    created = {
        "text": tasks.create(model=MODEL_2_0, content=[{"type": "text", "text": "a paper boat on a pond"}], **SMALL),
        "first_frame": tasks.create(model=MODEL_2_0, content=[
            {"type": "text", "text": "the camera pushes in"},
            {"type": "image_url", "image_url": {"url": red}, "role": "first_frame"}], **SMALL),
        "first_last": tasks.create(model=MODEL_1_5, content=[
            {"type": "text", "text": "red turns to blue"},
            {"type": "image_url", "image_url": {"url": red}, "role": "first_frame"},
            {"type": "image_url", "image_url": {"url": blue}, "role": "last_frame"}], return_last_frame=True,
            seed=11, **SMALL),
        "reference": tasks.create(model=MODEL_2_0, content=[
            {"type": "text", "text": "a scene built from references"},
            {"type": "image_url", "image_url": {"url": red}, "role": "reference_image"},
            {"type": "image_url", "image_url": {"url": blue}, "role": "reference_image"}], **SMALL),
        "draft": tasks.create(model=MODEL_1_5, content=[{"type": "text", "text": "a draft of a kite"}],
                              draft=True, duration=4),
    }
    done = {name: wait_terminal(ark, c.id) for name, c in created.items()}
    for name, task in done.items():
        assert task.status == "succeeded", (name, task.error)
        # Served by the service itself, or presigned by the bucket: no video passes through the API.
        assert task.content.video_url.startswith(result_host)
        video = httpx.get(task.content.video_url)
        assert video.status_code == 200 and video.content[4:8] == b"ftyp"
    assert done["first_last"].content.last_frame_url and done["first_last"].seed == 11
    assert done["draft"].draft is True and done["draft"].resolution == "480p"

    final = tasks.create(model=MODEL_1_5, content=[{"type": "draft_task", "draft_task": {"id": created["draft"].id}}],
                         resolution="720p")
    final_task = wait_terminal(ark, final.id)
    assert final_task.status == "succeeded" and final_task.draft_task_id == created["draft"].id
    assert final_task.resolution == "720p" and final_task.seed == done["draft"].seed

    # The list window [T - 7 days, T) ends at the current second: wait until the final is in it.
    wait_until(lambda: final.id in {t.id for t in tasks.list(page_size=50).items}, "the final is listed")
    listed = tasks.list(page_size=50)
    assert listed.total == 6
    assert {t.id for t in listed.items} == {c.id for c in created.values()} | {final.id}
    assert tasks.list(status="succeeded", page_size=50).total == 6
    assert tasks.list(status="queued").total == 0
    assert [t.id for t in tasks.list(task_ids=[created["text"].id]).items] == [created["text"].id]
    assert tasks.list(task_ids=[created["text"].id, final.id]).total == 2
    assert tasks.list(model=MODEL_1_5, page_size=50).total == 3
    assert tasks.list(service_tier="flex").total == 0
    assert [t.id for t in tasks.list(page_num=2, page_size=5).items] == [created["text"].id]

    tasks.delete(created["text"].id)
    from volcenginesdkarkruntime._exceptions import ArkNotFoundError

    with pytest.raises(ArkNotFoundError):
        tasks.get(task_id=created["text"].id)


def first_and_last_frame_means(video: bytes) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """Mean RGB of a video's first and last frames, decoded with PyAV."""
    import av

    with av.open(io.BytesIO(video)) as container:
        frames = [f.to_ndarray(format="rgb24") for f in container.decode(video=0)]
    return tuple(frames[0].mean(axis=(0, 1))), tuple(frames[-1].mean(axis=(0, 1)))


def test_a_chained_shot_reads_the_previous_result_from_storage(ark, served, module_backend):
    """Shot 2 starts on shot 1's last frame and takes shot 1's video as a reference, both given as
    shot 1's result URLs: the service serves them (SQLite + files) or the bucket presigns them
    (PostgreSQL + S3); either way the worker reads them from storage, not over loopback HTTP, which
    the service refuses for inputs by default."""
    tasks = ark.content_generation.tasks
    green = png_data_url((40, 170, 60))
    first = tasks.create(model=MODEL_1_5, content=[
        {"type": "text", "text": "shot one"},
        {"type": "image_url", "image_url": {"url": green}, "role": "first_frame"},
        {"type": "image_url", "image_url": {"url": green}, "role": "last_frame"}], return_last_frame=True, **SMALL)
    shot_one = wait_terminal(ark, first.id)
    assert shot_one.status == "succeeded", shot_one.error
    result_host = module_backend.aws_environment.get("AWS_ENDPOINT_URL", served.root)
    assert shot_one.content.last_frame_url.startswith(result_host)

    second = tasks.create(model=MODEL_2_0, content=[
        {"type": "text", "text": "shot two picks up where shot one ended"},
        {"type": "image_url", "image_url": {"url": shot_one.content.last_frame_url}, "role": "first_frame"}],
        **SMALL)
    referenced = tasks.create(model=MODEL_2_0, content=[
        {"type": "text", "text": "in the style of shot one"},
        {"type": "video_url", "video_url": {"url": shot_one.content.video_url}, "role": "reference_video"}], **SMALL)
    shot_two, shot_three = wait_terminal(ark, second.id), wait_terminal(ark, referenced.id)
    assert shot_two.status == "succeeded", shot_two.error
    assert shot_three.status == "succeeded", shot_three.error
    # Shot two's first frame is shot one's last frame (green), give or take the encoder.
    video = httpx.get(shot_two.content.video_url).content
    first_mean, _ = first_and_last_frame_means(video)
    assert all(abs(a - b) < 25 for a, b in zip(first_mean, (40, 170, 60), strict=True)), first_mean


def test_sdk_sees_errors_in_the_spec_shape(ark):
    from volcenginesdkarkruntime._exceptions import ArkBadRequestError

    with pytest.raises(ArkBadRequestError) as caught:
        ark.content_generation.tasks.create(model=MODEL_2_0, content=[{"type": "text", "text": "x"}], seed=5)
    assert "seed" in str(caught.value)


def test_flex_and_cancel_through_the_sdk(tmp_path, backend):
    server = serve(tmp_path, backend, workers=0)  # accept and queue only
    try:
        from volcenginesdkarkruntime import Ark

        tasks = Ark(base_url=server.base_url, api_key=KEY).content_generation.tasks
        flex = tasks.create(model=MODEL_1_5, content=[{"type": "text", "text": "night train"}], service_tier="flex")
        queued = tasks.create(model=MODEL_2_0, content=[{"type": "text", "text": "morning"}])
        wait_until(lambda: queued.id in {t.id for t in tasks.list().items}, "both tasks are listed")
        assert [t.id for t in tasks.list(service_tier="flex").items] == [flex.id]
        assert [t.id for t in tasks.list().items] == [queued.id]
        tasks.delete(queued.id)
        assert tasks.get(task_id=queued.id).status == "cancelled"
        assert tasks.list(status="cancelled").total == 1
    finally:
        server.stop()


def test_sigkill_mid_render_loses_no_task(tmp_path, backend):
    attempts = backend.task_states
    server = serve(tmp_path, backend, workers=2, stale_after=2.0)
    client = httpx.Client(base_url=server.base_url, headers={"Authorization": f"Bearer {KEY}"})
    ids = []
    for i in range(6):
        response = client.post("/contents/generations/tasks", json={
            "model": MODEL_2_0, "content": [{"type": "text", "text": f"shot {i}"}], "resolution": "480p",
            "duration": 8})
        ids.append(response.json()["id"])
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline and not any(s == "running" for s, _ in attempts(tmp_path).values()):
        time.sleep(0.05)
    assert any(s == "running" for s, _ in attempts(tmp_path).values()), "nothing started rendering"
    server.kill()
    killed_running = [t for t, (s, _) in attempts(tmp_path).items() if s == "running"]
    assert killed_running

    restarted = serve(tmp_path, backend, workers=2, stale_after=2.0)
    try:
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            states = attempts(tmp_path)
            if all(states[t][0] in ("succeeded", "failed", "expired", "cancelled") for t in ids):
                break
            time.sleep(0.3)
        states = attempts(tmp_path)
        assert {states[t][0] for t in ids} == {"succeeded"}, states
        for task_id in killed_running:
            assert states[task_id][1] == 2  # run once by the killed process, once after recovery
    finally:
        restarted.stop()
        client.close()


def test_two_servers_on_one_data_directory_never_run_a_task_twice(tmp_path, backend):
    attempts = backend.task_states
    first = serve(tmp_path, backend, workers=2)
    second = serve(tmp_path, backend, workers=2)
    try:
        ids = []
        for i in range(10):
            server = (first, second)[i % 2]
            response = httpx.post(f"{server.base_url}/contents/generations/tasks",
                                  headers={"Authorization": f"Bearer {KEY}"},
                                  json={"model": MODEL_2_0, "content": [{"type": "text", "text": f"take {i}"}],
                                        "resolution": "480p", "duration": 4})
            assert response.status_code == 200, response.text
            ids.append(response.json()["id"])
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            states = attempts(tmp_path)
            if all(states[t][0] == "succeeded" for t in ids):
                break
            time.sleep(0.3)
        states = attempts(tmp_path)
        assert all(states[t] == ("succeeded", 1) for t in ids), states
        logs = "".join(p.read_text() for p in tmp_path.glob("serve-*.log"))
        for task_id in ids:
            assert logs.count(f"task {task_id} -> running") == 1
    finally:
        first.stop()
        second.stop()
