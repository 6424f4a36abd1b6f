"""Text commands end to end: parameters written at the end of content[0].text (`--rt 9:16`,
`--frames 29`, `--fps 24`, `--wm true`, `--cf true`, long and short forms) are applied as if they
were body fields. The record echoes those it has a field for (resolution, ratio, duration, frames,
framespersecond, seed); watermark and camera_fixed, which the record has no field for, reach the
render: the plan the renderer is handed, and the rendered video itself.

Every test runs on both backends (SQLite + local files, PostgreSQL + S3) through the `env` fixture
or, for the real renderer, the same app built with `PreviewGenerator`.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dailies.generator import PreviewGenerator, RenderJob
from dailies.generator.plan import output_spec, plan_content
from tests.generator.media_fixtures import decode, gradient_image, image_url, lower_right, mean_difference, upper_left
from tests.service.conftest import KEY_A, MODEL_1_0, MODEL_1_5, MODEL_2_0, TASKS, Env, service_env, text_body

pytestmark = pytest.mark.anyio


def recording(env: Env) -> list[RenderJob]:
    """The jobs the app's generator is handed from now on, in order."""
    jobs: list[RenderJob] = []
    render = env.generator.render

    def record(job, *args, **kwargs):
        jobs.append(job)
        return render(job, *args, **kwargs)

    env.generator.render = record
    return jobs


async def created_and_run(env: Env, body: dict) -> tuple[str, dict]:
    response = await env.create(body)
    assert response.status_code == 200, response.text
    task_id = response.json()["id"]
    assert env.run_all() == [task_id]
    record = (await env.get(task_id)).json()
    assert record["status"] == "succeeded", record
    return task_id, record


# ---------- what the record has fields for ----------


@pytest.mark.parametrize(
    ("model", "commands", "echoed"),
    [
        # Long forms, 1.0 Pro: frames win over duration and are the only one of the two reported.
        (MODEL_1_0, "--resolution 480p --ratio 9:16 --frames 29 --framepersecond 24 --seed 11",
         {"resolution": "480p", "ratio": "9:16", "frames": 29, "framespersecond": 24, "seed": 11}),
        # Short forms.
        (MODEL_1_0, "--rs 480p --rt 1:1 --frames 33 --fps 24 --seed 12",
         {"resolution": "480p", "ratio": "1:1", "frames": 33, "framespersecond": 24, "seed": 12}),
        (MODEL_1_5, "--rs 480p --rt 4:3 --dur 4 --fps 24 --cf true --wm true",
         {"resolution": "480p", "ratio": "4:3", "duration": 4, "framespersecond": 24}),
        (MODEL_2_0, "--resolution 480p --ratio 21:9 --duration 6 --framespersecond 24 --watermark false",
         {"resolution": "480p", "ratio": "21:9", "duration": 6, "framespersecond": 24}),
    ],
    ids=["long-1.0", "short-1.0", "short-1.5", "long-2.0"],
)
async def test_the_record_echoes_the_text_commands(env, model, commands, echoed):
    _, record = await created_and_run(env, text_body(f"a lighthouse in a storm {commands}", model=model))
    assert {name: record.get(name) for name in echoed} == echoed
    if "frames" in echoed:
        assert "duration" not in record
    else:
        assert "frames" not in record


@pytest.mark.parametrize(
    ("commands", "watermark", "camera_fixed"),
    [
        ("--watermark true --camerafixed true", True, True),
        ("--wm true --cf false", True, False),
        ("--wm false --cf true", False, True),
        ("--rs 480p", False, False),  # the defaults, when neither is written
    ],
)
async def test_watermark_and_camera_fixed_reach_the_render(env, commands, watermark, camera_fixed):
    jobs = recording(env)
    task_id, record = await created_and_run(env, text_body(f"a kite on the beach {commands}", model=MODEL_1_5))
    assert "watermark" not in record and "camera_fixed" not in record  # no such record fields
    (job,) = jobs
    assert job.task_id == task_id
    assert (job.request.watermark or False, job.request.camera_fixed or False) == (watermark, camera_fixed)
    spec = output_spec(job.request, job.seed, job.draft)
    assert (spec.watermark, spec.camera_fixed) == (watermark, camera_fixed)


async def test_text_commands_are_parameters_not_words_in_the_render(env):
    jobs = recording(env)
    await created_and_run(env, text_body("a paper boat --rt 16:9 --wm true", model=MODEL_2_0))
    assert plan_content(jobs[0].request).prompt == "a paper boat"


async def test_a_text_command_that_disagrees_with_the_body_is_refused_naming_the_text(env):
    response = await env.create(text_body("a fox --wm true", model=MODEL_1_5, watermark=False))
    assert response.status_code == 400
    error = response.json()["error"]
    assert error["param"] == "content[0].text" and "--wm true" in error["message"]
    assert env.run_all() == []


# ---------- the rendered video itself ----------


@pytest.fixture
async def rendering_env(tmp_path, backend):
    """`env`, with the real preview renderer instead of the fake one."""
    async with service_env(tmp_path, backend, PreviewGenerator()) as made:
        yield made


async def rendered(env: Env, body: dict, to: Path):
    _, record = await created_and_run(env, body)
    response = await env.fetch(record["content"]["video_url"])
    assert response.status_code == 200
    to.write_bytes(response.content)
    return record, decode(to)


async def test_the_rendered_video_carries_the_watermark_only_for_wm_true(rendering_env, tmp_path):
    prompt = "a lighthouse in a storm --rs 480p --frames 29 --seed 9"
    plain_record, plain = await rendered(rendering_env, text_body(f"{prompt} --wm false", model=MODEL_1_0),
                                         tmp_path / "plain.mp4")
    marked_record, marked = await rendered(rendering_env, text_body(f"{prompt} --wm true", model=MODEL_1_0),
                                           tmp_path / "marked.mp4")
    for record, video in ((plain_record, plain), (marked_record, marked)):
        assert (record["frames"], record["seed"]) == (29, 9)
        assert (video.width, video.height, video.frame_count) == (864, 480, 29)  # 1.0 Pro's 480p 16:9
    for which in ("first", "last"):
        a, b = getattr(plain, which), getattr(marked, which)
        assert mean_difference(lower_right(a), lower_right(b)) > 8, "the watermark is at the lower right"
        assert mean_difference(upper_left(a), upper_left(b)) < 1.5, "and nowhere else"


async def test_the_rendered_video_keeps_the_camera_still_only_for_cf_true(rendering_env, tmp_path):
    picture = image_url(gradient_image(1000, 750))

    def body(commands: str) -> dict:
        return {"model": MODEL_1_5, "content": [
            {"type": "text", "text": f"a quiet valley {commands}"},
            {"type": "image_url", "image_url": {"url": picture}, "role": "first_frame"},
        ], "generate_audio": False}

    _, still = await rendered(rendering_env, body("--rs 480p --dur 4 --cf true"), tmp_path / "still.mp4")
    _, moving = await rendered(rendering_env, body("--rs 480p --dur 4 --camerafixed false"), tmp_path / "moving.mp4")
    assert (still.width, still.height) == (moving.width, moving.height) == (752, 560)
    assert mean_difference(still.first, still.last) < 1.5, "the camera stayed still"
    assert mean_difference(moving.first, moving.last) > 3, "the camera moved"


# ---------- out of range ----------


async def test_a_seed_command_out_of_range_is_refused_naming_the_text_and_every_read_goes_on(env: Env):
    """`--seed -5` was taken (the same as a body field is refused), stored, and from then on the task's
    get, every list page that held it and a create with a callback answered 500."""
    healthy = await env.create(text_body(model=MODEL_1_5))
    for seed in ("-5", "99999999999"):
        refused = await env.create(text_body(f"a fox --seed {seed}", model=MODEL_1_5,
                                             callback_url="http://127.0.0.1:9/hook"))
        assert refused.status_code == 400
        error = refused.json()["error"]
        assert error["param"] == "content[0].text" and f"--seed {seed}" in error["message"]
    env.clock.advance(1)  # the list holds what was made before the current second
    listed = await env.client.get(TASKS, headers={"Authorization": f"Bearer {KEY_A}"})
    assert listed.status_code == 200 and [t["id"] for t in listed.json()["items"]] == [healthy.json()["id"]]


async def test_a_stored_request_this_version_refuses_is_read_without_the_fields_it_names(env: Env):
    """A record an older version stored with a seed out of range: its get and the project's list answer."""
    from sqlalchemy import update

    from dailies.service.db.tables import tasks

    task_id = (await env.create(text_body("a fox", model=MODEL_1_5))).json()["id"]
    with env.services.engine.begin() as conn:
        stored = conn.execute(tasks.select().where(tasks.c.id == task_id)).one().request
        conn.execute(update(tasks).where(tasks.c.id == task_id).values(request=stored.replace(
            '"model"', '"seed":-5,"model"', 1)))
    got = await env.get(task_id)
    assert got.status_code == 200 and got.json()["status"] == "queued"
    env.clock.advance(1)
    listed = await env.client.get(TASKS, headers={"Authorization": f"Bearer {KEY_A}"})
    assert listed.status_code == 200 and listed.json()["total"] == 1
