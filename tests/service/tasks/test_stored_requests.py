"""`GET /dailies/v1/tasks/{id}/request`: a task's prompt and inputs as sent, inline media as small
thumbnails or their type and size, never the data; and the pure transformation behind it
(`dailies.service.tasks.stored_requests`)."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import threading
import time

import httpx
import pytest
from PIL import Image
from sqlalchemy import select, update

from dailies.service.api.app import create_app
from dailies.service.callers import KeyOptions
from dailies.service.db.tables import tasks
from dailies.service.settings import Settings
from dailies.service.tasks import shown_requests, stored_requests
from dailies.spec.media import decode_data_url, encode_data_url
from tests.service.conftest import (
    KEY_A,
    KEY_B,
    MODEL_1_0,
    MODEL_1_5,
    MODEL_2_0,
    Env,
    FakeClock,
    FakeGenerator,
    text_body,
)

KEY_A2 = "key-a2"  # a second key of project alpha, without a member name
URL = "/dailies/v1/tasks/{}/request"


def noise_png(width: int, height: int) -> bytes:
    """An image of random pixels stored uncompressed: as many bytes as pixels * 3, the worst case for
    a thumbnail (noise compresses badly)."""
    out = io.BytesIO()
    Image.frombytes("RGB", (width, height), os.urandom(width * height * 3)).save(out, "PNG", compress_level=0)
    return out.getvalue()


def image_of(data_url: str) -> Image.Image:
    media_type, raw = decode_data_url(data_url)
    assert media_type == "image/jpeg"
    return Image.open(io.BytesIO(raw))


# ---------- the pure transformation ----------


def test_urls_roles_prompt_and_parameters_as_sent_and_no_callback_url():
    stored = {"model": MODEL_1_0, "callback_url": "https://hooks.example/x?token=s3cret", "ratio": "16:9",
              "duration": 5, "seed": 7, "watermark": False,
              "content": [{"type": "text", "text": "a fox in snow --rs 480p --cf true"},
                          {"type": "image_url", "image_url": {"url": "https://img.example/a.png"},
                           "role": "first_frame"},
                          {"type": "image_url", "image_url": {"url": "asset://asset-123"}, "role": "last_frame"}]}
    answer = stored_requests.answer(json.dumps(stored), task_id="cgt-1", model=MODEL_1_0, created_at=1_790_000_000,
                                    created_by="alice")
    assert answer == {
        "id": "cgt-1", "model": MODEL_1_0, "created_by": "alice", "created_at": 1_790_000_000,
        "prompt": "a fox in snow --rs 480p --cf true",
        "content": stored["content"], "ratio": "16:9", "duration": 5, "seed": 7, "watermark": False,
    }
    assert "s3cret" not in json.dumps(answer)


def test_an_inline_image_becomes_a_small_jpeg_with_what_it_was():
    png = noise_png(1200, 675)
    items = [{"type": "image_url", "image_url": {"url": encode_data_url(png, "image/png")}, "role": "reference_image"}]
    (item,) = stored_requests.content_of(items)
    assert item["role"] == "reference_image" and item["type"] == "image_url"
    assert item["image_url"]["inline"] == {"media_type": "image/png", "bytes": len(png), "width": 1200, "height": 675}
    thumb = image_of(item["image_url"]["url"])
    assert thumb.format == "JPEG" and max(thumb.size) <= stored_requests.THUMB_MAX_SIDE
    assert len(item["image_url"]["url"]) <= stored_requests.THUMB_MAX_CHARS


def test_a_photo_keeps_the_full_thumbnail_size_and_is_turned_upright():
    out = io.BytesIO()
    photo = Image.linear_gradient("L").resize((1600, 900)).convert("RGB")
    exif = Image.Exif()
    exif[0x0112] = 6  # stored sideways: shown rotated by 90 degrees
    photo.save(out, "JPEG", quality=90, exif=exif)
    made = stored_requests.thumbnail(out.getvalue())
    assert made is not None
    url, size = made
    assert size == (1600, 900)  # as stored, as the service's checks read it
    assert image_of(url).size == (144, 256)


def test_inline_video_and_audio_give_type_and_size_never_the_data():
    video = b"\x00\x00\x00\x18ftypmp42" + b"\x00" * 5000
    items = [{"type": "video_url", "video_url": {"url": encode_data_url(video, "video/mp4")},
              "role": "reference_video"},
             {"type": "audio_url", "audio_url": {"url": encode_data_url(b"ID3" + b"\x00" * 900, "audio/mpeg")},
              "role": "reference_audio"}]
    shown = stored_requests.content_of(items)
    assert shown[0]["video_url"] == {"url": None, "inline": {"media_type": "video/mp4", "bytes": len(video)}}
    assert shown[1]["audio_url"] == {"url": None, "inline": {"media_type": "audio/mpeg", "bytes": 903}}
    assert [i["role"] for i in shown] == ["reference_video", "reference_audio"]


def test_an_unreadable_inline_image_is_said_without_a_thumbnail():
    item = {"type": "image_url", "image_url": {"url": encode_data_url(b"not an image", "image/png")}}
    assert stored_requests.content_of([item])[0]["image_url"] == {
        "url": None, "inline": {"media_type": "image/png", "bytes": 12}}


def test_nine_ten_megabyte_images_answer_well_under_100_kb():
    png = noise_png(1900, 1800)  # 10 MB
    assert len(png) > 10_000_000
    url = encode_data_url(png, "image/png")
    stored = {"model": MODEL_1_0, "content": [{"type": "text", "text": "nine references"}] + [
        {"type": "image_url", "image_url": {"url": url}, "role": "reference_image"} for _ in range(9)]}
    answer = stored_requests.answer(stored, task_id="cgt-1", model=MODEL_1_0, created_at=0)
    assert len(json.dumps(answer)) < 100_000
    for item in answer["content"][1:]:
        assert item["image_url"]["url"] is not None and image_of(item["image_url"]["url"]).width >= 48
        assert item["image_url"]["inline"]["bytes"] == len(png)


def test_no_text_item_is_no_prompt_and_a_final_names_its_draft():
    answer = stored_requests.answer({"model": MODEL_1_5, "content": [
        {"type": "image_url", "image_url": {"url": "https://img.example/a.png"}}]},
        task_id="cgt-2", model=MODEL_1_5, created_at=0, created_by="", draft_task_id="cgt-draft")
    assert answer["prompt"] is None and answer["created_by"] is None and answer["draft_task_id"] == "cgt-draft"


# ---------- the endpoint ----------

@contextlib.asynccontextmanager
async def node(tmp_path, backend):
    """One API node on the test's backend: alice's key and a nameless one in alpha, KEY_B in beta."""
    clock = FakeClock(float(int(time.time())))  # an S3 server checks presigned URLs against real time
    settings = Settings(data_dir=tmp_path, api_keys={KEY_A: "alpha", KEY_A2: "alpha", KEY_B: "beta"},
                        key_options={KEY_A: KeyOptions(name="alice"), KEY_B: KeyOptions(read_rpm=3)},
                        workers=0, clock=clock, log_requests=False, **backend.settings())
    generator = FakeGenerator()
    app = create_app(settings, generator=generator, start_background=False)
    try:
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://testserver") as http:
            yield Env(app, http, clock, generator, tmp_path, backend)
    finally:
        app.state.services.stop()


async def stored(env: Env, task_id: str, key: str | None = KEY_A) -> httpx.Response:
    headers = {"Authorization": f"Bearer {key}"} if key else {}
    return await env.client.get(URL.format(task_id), headers=headers)


def without_request_id(response: httpx.Response) -> dict:
    error = response.json()["error"]
    return {**error, "message": error["message"].split(" Request ID: ")[0]}


@pytest.mark.anyio
async def test_the_projects_task_with_an_inline_image_answers_small_others_as_the_spec_does(tmp_path, backend):
    png = noise_png(1320, 1320)  # 5 MB
    assert len(png) > 5_000_000
    body = {"model": MODEL_1_0, "ratio": "1:1", "callback_url": None,
            "content": [{"type": "text", "text": "a red kite over a beach --rs 480p --dur 5"},
                        {"type": "image_url", "image_url": {"url": encode_data_url(png, "image/png")},
                         "role": "first_frame"}]}
    async with node(tmp_path, backend) as env:
        created = await env.create(body)
        assert created.status_code == 200, created.text
        task_id = created.json()["id"]

        answer = await stored(env, task_id)
        assert answer.status_code == 200, answer.text
        assert len(answer.content) < 100_000
        got = answer.json()
        assert {k: got[k] for k in ("id", "model", "created_by", "prompt", "ratio", "resolution", "duration")} == {
            "id": task_id, "model": MODEL_1_0, "created_by": "alice",
            "prompt": "a red kite over a beach --rs 480p --dur 5", "ratio": "1:1", "resolution": "480p",
            "duration": 5}
        assert got["created_at"] == (await env.get(task_id)).json()["created_at"]
        image = got["content"][1]
        assert image["type"] == "image_url" and image["role"] == "first_frame"
        assert image["image_url"]["inline"] == {"media_type": "image/png", "bytes": len(png),
                                                "width": 1320, "height": 1320}
        assert max(image_of(image["image_url"]["url"]).size) <= 256
        assert "callback_url" not in got

        # Another key of the project sees it too; its creator stays alice.
        assert (await stored(env, task_id, KEY_A2)).json()["created_by"] == "alice"
        # Another project's task and an unknown one: 404 exactly as the spec's get answers.
        other = await stored(env, task_id, KEY_B)
        assert other.status_code == 404
        assert without_request_id(other) == without_request_id(await env.get(task_id, key=KEY_B))
        assert other.json()["error"]["code"] == "NotFound.Task"
        unknown = await stored(env, "cgt-20250101000000-nope0")
        assert unknown.status_code == 404
        assert without_request_id(unknown) == without_request_id(await env.get("cgt-20250101000000-nope0"))
        assert (await stored(env, task_id, None)).status_code == 401
        assert (await stored(env, task_id, "not-a-key")).status_code == 401


@pytest.mark.anyio
async def test_a_nameless_key_a_url_input_and_a_final_of_a_draft(tmp_path, backend):
    async with node(tmp_path, backend) as env:
        draft_id = (await env.create(text_body("a harbour at dawn", model=MODEL_1_5, draft=True))).json()["id"]
        assert env.run_next() == draft_id
        task_id = (await env.create(text_body("a lighthouse", model=MODEL_1_0, seed=11, content=[
            {"type": "text", "text": "a lighthouse"},
            {"type": "image_url", "image_url": {"url": "https://img.example/keeper.png"}, "role": "first_frame"}]),
            key=KEY_A2)).json()["id"]
        got = (await stored(env, task_id)).json()
        assert got["created_by"] is None and got["seed"] == 11
        assert got["content"][1] == {"type": "image_url", "image_url": {"url": "https://img.example/keeper.png"},
                                     "role": "first_frame"}

        final = await env.create({"model": MODEL_1_5, "resolution": "720p",
                                  "content": [{"type": "draft_task", "draft_task": {"id": draft_id}}]})
        assert final.status_code == 200, final.text
        got = (await stored(env, final.json()["id"])).json()
        assert got["draft_task_id"] == draft_id and got["prompt"] == "a harbour at dawn"
        assert got["resolution"] == "720p"


@pytest.mark.anyio
async def test_reading_a_request_counts_against_the_keys_read_limit(tmp_path, backend):
    async with node(tmp_path, backend) as env:
        task_id = (await env.create(text_body(model=MODEL_1_0), key=KEY_B)).json()["id"]
        codes = [(await stored(env, task_id, KEY_B)).status_code for _ in range(4)]
        assert codes == [200, 200, 200, 429]


# ---------- the answer made once and kept (shown_requests.py) ----------


@contextlib.contextmanager
def counted_decodes(monkeypatch, pause: float = 0.0):
    """Counts the decodes of the stored request's media (images into thumbnails, data URLs into
    bytes) wherever they run, and how many thumbnails were being made at once at most."""
    seen = {"thumbnails": 0, "data_urls": 0, "at_once": 0, "most_at_once": 0}
    lock = threading.Lock()
    thumbnail, decode_data_url = stored_requests.thumbnail, stored_requests.decode_data_url

    def counted_thumbnail(*args, **kwargs):
        with lock:
            seen["thumbnails"] += 1
            seen["at_once"] += 1
            seen["most_at_once"] = max(seen["most_at_once"], seen["at_once"])
        try:
            time.sleep(pause)  # long enough for the makings of concurrent reads to overlap
            return thumbnail(*args, **kwargs)
        finally:
            with lock:
                seen["at_once"] -= 1

    def counted_data_url(*args, **kwargs):
        with lock:
            seen["data_urls"] += 1
        return decode_data_url(*args, **kwargs)

    monkeypatch.setattr(stored_requests, "thumbnail", counted_thumbnail)
    monkeypatch.setattr(stored_requests, "decode_data_url", counted_data_url)
    yield seen


def truncated_png() -> bytes:
    """A PNG whose header is whole (the create's check reads only that) but whose pixels are cut off."""
    return noise_png(400, 400)[:2000]


def inline_body(*images: bytes) -> dict:
    return {"model": MODEL_2_0, "content": [{"type": "text", "text": "references"}] + [
        {"type": "image_url", "image_url": {"url": encode_data_url(png, "image/png")}, "role": "reference_image"}
        for png in images]}


def kept_answers(env: Env, task_id: str) -> list:
    with env.services.engine.connect() as conn:
        return conn.execute(select(shown_requests.shown_requests.c.task_id)
                            .where(shown_requests.shown_requests.c.task_id == task_id)).scalars().all()


@pytest.mark.anyio
async def test_a_second_read_decodes_nothing_and_an_image_that_does_not_decode_is_not_tried_again(
        tmp_path, backend, monkeypatch):
    images = [noise_png(400, 300), noise_png(300, 500), truncated_png()]
    async with node(tmp_path, backend) as env:
        created = await env.create(inline_body(*images))
        assert created.status_code == 200, created.text
        task_id = created.json()["id"]
        row = env.services.store.get_by_id(task_id)
        as_made_each_time = stored_requests.answer(row.request, task_id=task_id, model=row.model,
                                                   created_at=row.created_at, created_by="alice")
        with counted_decodes(monkeypatch) as seen:
            first = await stored(env, task_id)
            assert first.status_code == 200, first.text
            assert first.json() == as_made_each_time  # the answer's shape is unchanged
            assert seen["thumbnails"] == 3 and seen["data_urls"] == 3
            assert first.json()["content"][3]["image_url"] == {
                "url": None, "inline": {"media_type": "image/png", "bytes": 2000}}

            for _ in range(2):
                again = await stored(env, task_id, KEY_A2)
                assert again.json() == first.json()
            assert seen["thumbnails"] == 3 and seen["data_urls"] == 3  # nothing decoded again


@pytest.mark.anyio
async def test_concurrent_first_reads_make_each_thumbnail_once_and_at_most_makers_at_once(
        tmp_path, backend, monkeypatch):
    async with node(tmp_path, backend) as env:
        task_ids = []
        for _ in range(4):  # more tasks than makers
            created = await env.create(inline_body(*(noise_png(320, 320) for _ in range(2))))
            assert created.status_code == 200, created.text
            task_ids.append(created.json()["id"])
        with counted_decodes(monkeypatch, pause=0.05) as seen:
            answers = await asyncio.gather(*(stored(env, task_id) for task_id in task_ids for _ in range(4)))
        assert [a.status_code for a in answers] == [200] * 16
        assert seen["thumbnails"] == 8  # 4 tasks x 2 images, whatever the number of readers
        assert 1 <= seen["most_at_once"] <= shown_requests.MAKERS
        for i, task_id in enumerate(task_ids):
            bodies = [a.json() for a in answers[i * 4:(i + 1) * 4]]
            assert all(body == bodies[0] for body in bodies)
            assert all(item["image_url"]["url"] for item in bodies[0]["content"][1:])
            assert kept_answers(env, task_id) == [task_id]


@pytest.mark.anyio
async def test_an_answer_made_twice_at_once_elsewhere_is_kept_once(tmp_path, backend):
    """Two API nodes making one task's answer at once: the second write does nothing."""
    async with node(tmp_path, backend) as env:
        task_id = (await env.create(inline_body(noise_png(320, 320)))).json()["id"]
        svc = env.services
        shown_requests.keep(svc.engine, svc.store.write, task_id, '{"made": "here"}')
        shown_requests.keep(svc.engine, svc.store.write, task_id, '{"made": "there"}')
        assert kept_answers(env, task_id) == [task_id]
        assert (await stored(env, task_id)).json() == {"made": "here"}


@pytest.mark.anyio
async def test_deleting_or_purging_a_task_deletes_its_kept_answer(tmp_path, backend):
    async with node(tmp_path, backend) as env:
        deleted_id = (await env.create(inline_body(noise_png(320, 320), truncated_png()))).json()["id"]
        purged_id = (await env.create(inline_body(noise_png(300, 300)))).json()["id"]
        kept_id = (await env.create(inline_body(noise_png(310, 310)))).json()["id"]
        for task_id in (deleted_id, purged_id, kept_id):
            assert (await stored(env, task_id)).status_code == 200
            assert kept_answers(env, task_id) == [task_id]

        assert env.run_all()
        assert (await env.delete(deleted_id)).status_code == 200
        assert kept_answers(env, deleted_id) == []
        # A first read still making the answer when its task is deleted keeps nothing.
        svc = env.services
        shown_requests.keep(svc.engine, svc.store.write, deleted_id, "{}")
        assert kept_answers(env, deleted_id) == []

        # The purge takes records created more than 7 days ago: make purged_id that old.
        with svc.store.write.begin() as conn:
            conn.execute(update(tasks).where(tasks.c.id == purged_id).values(created_at=tasks.c.created_at - 8 * 86400))
        assert [r.id for r in svc.store.purge(env.clock())] == [purged_id]
        assert kept_answers(env, purged_id) == []
        assert kept_answers(env, kept_id) == [kept_id]
