"""Hostile input, categories 7 and 8: forged and tampered result URLs, and path traversal in task
ids and file names. A result URL without this service's signature over its exact path and expiry
is a 403; a path that tries to leave the results folder is a 404 (or 400), even when the caller
holds a valid signature for it, and never serves a byte from outside the folder."""

from __future__ import annotations

from urllib.parse import parse_qs, quote, unquote, urlsplit

import pytest

from dailies.spec import limits as L
from tests.service.conftest import KEY_A, OWN_TASKS, TASKS, text_body
from tests.service.hostile import ACCEPTED, assert_refused, hostile_service, module_anyio_backend, raw_get  # noqa: F401 - fixtures

pytestmark = pytest.mark.anyio


def video_url(env) -> str:
    return next(r for r in env.seeded.values() if r["status"] == "succeeded")["content"]["video_url"]


def frame_url(env) -> str:
    return next(r for r in env.seeded.values() if r["status"] == "succeeded")["content"]["last_frame_url"]


def parts(url: str) -> tuple[str, int, str]:
    split = urlsplit(url)
    query = parse_qs(split.query)
    return split.path, int(query["expires"][0]), query["signature"][0]


def signed(env, path: str, expires: int | None = None) -> str:
    """A URL for `path` with a valid signature, as if the signing secret had leaked: the files
    layer must still refuse to leave its folder."""
    expires = expires if expires is not None else parts(video_url(env))[1]
    return f"expires={expires}&signature={env.services.signer.signature(path, expires)}"


# ---------- forged and tampered result URLs ----------


def _other_files_signature(env) -> str:
    path, expires, _ = parts(video_url(env))
    return f"{path}?expires={expires}&signature={parts(frame_url(env))[2]}"


FORGED = [
    pytest.param(lambda h: video_url(h).replace("signature=", "signature=0"), "signature", id="signature-changed"),
    pytest.param(lambda h: video_url(h).split("signature=")[0] + "signature=" + "0" * 64, "signature",
                 id="zero-signature"),
    pytest.param(lambda h: video_url(h).split("signature=")[0] + "signature=" + parts(video_url(h))[2].upper(),
                 "signature", id="upper-case-signature"),
    pytest.param(lambda h: video_url(h).split("signature=")[0] + "signature=" + "é" * 64, "signature",
                 id="non-ascii-signature"),
    pytest.param(lambda h: video_url(h).split("signature=")[0] + "signature=" + "a" * 60_000, "signature",
                 id="huge-signature"),
    pytest.param(lambda h: video_url(h).replace("expires=", "expires=9"), "signature", id="expiry-extended"),
    pytest.param(lambda h: video_url(h).replace("expires=", "expires=-"), "signature", id="expiry-negative"),
    pytest.param(lambda h: video_url(h).split("&signature=")[0], "signature", id="signature-missing"),
    pytest.param(lambda h: video_url(h).split("?")[0] + "?signature=" + parts(video_url(h))[2], "signature",
                 id="expires-missing"),
    pytest.param(lambda h: video_url(h).split("?")[0], "signature", id="no-query"),
    pytest.param(_other_files_signature, "signature", id="another-files-signature"),
    pytest.param(lambda h: video_url(h).replace("video.mp4", "last_frame.png"), "signature", id="file-swapped"),
    pytest.param(lambda h: video_url(h).replace("/files/cgt-", "/files/cgt-x"), "signature", id="task-changed"),
    pytest.param(lambda h: video_url(h).replace("expires=", "expires=1e3&x="), "expires", id="expires-not-integer"),
]


@pytest.mark.parametrize(("make", "param"), FORGED)
async def test_forged_result_urls(hostile, make, param):
    response = await hostile.client.get(make(hostile))
    status = 400 if param == "expires" else 403
    assert_refused(response, param, status=status, code="InvalidParameter" if status == 400 else "AccessDenied")


async def test_another_tasks_signature(hostile):
    other_id = (await hostile.create(text_body("another project's task"), key="key-c")).json()["id"]
    hostile.run_next()
    other = (await hostile.get(other_id, key="key-c")).json()["content"]["video_url"]
    path, expires, _ = parts(video_url(hostile))
    forged = f"{path}?expires={expires}&signature={parts(other)[2]}"
    assert_refused(await hostile.client.get(forged), "signature", status=403, code="AccessDenied")


async def test_an_expired_url_stays_expired(hostile):
    now = hostile.clock.now
    hostile.clock.advance(L.RESULT_URL_VALIDITY_SECONDS + 1)
    try:
        error = assert_refused(await hostile.client.get(video_url(hostile)), "expires", status=403)
        assert "expired" in error["message"]
    finally:
        hostile.clock.now = now


# ---------- path traversal ----------


async def test_the_signing_secret_sits_next_to_the_results(hostile):
    # What the traversal cases try to reach: the URL-signing secret, one folder above the results.
    secret = hostile.services.settings.data_dir / "url-signing.key"
    assert secret.is_file() and hostile.services.files.root.parent == secret.parent


# Raw paths as they come over the wire ({task} is a real task's id), and whether the file route
# takes them at all: when it does, the signature is checked first (403), and a valid one still
# meets the files layer's refusal (404); when it does not, nothing is routed (404).
TRAVERSAL_FILES = [
    pytest.param("/files/../url-signing.key", True, id="dot-dot-as-task"),
    pytest.param("/files/%2e%2e/url-signing.key", True, id="encoded-dots-as-task"),
    pytest.param("/files/./url-signing.key", True, id="dot-as-task"),
    pytest.param("/files/{task}/..", True, id="dot-dot-as-name"),
    pytest.param("/files/{task}/.", True, id="dot-as-name"),
    pytest.param("/files/{task}/..%5C..%5Curl-signing.key", True, id="backslashes"),
    pytest.param("/files/{task}/video.mp4%00.png", True, id="nul-in-name"),
    pytest.param("/files/{task}%00/video.mp4", True, id="nul-in-task"),
    pytest.param("/files/{task}/%EF%BC%8E%EF%BC%8E", True, id="fullwidth-dots"),
    pytest.param("/files/{task}/%25", True, id="percent-name"),
    pytest.param("/files/{task}/.hidden", True, id="hidden-name"),
    pytest.param("/files/../../etc/passwd", False, id="dot-dot-twice"),
    pytest.param("/files/{task}/..%2f..%2furl-signing.key", False, id="encoded-slashes-in-name"),
    pytest.param("/files//etc/passwd", False, id="absolute-path"),
    pytest.param("/files/%2Fetc%2Fpasswd/x", False, id="encoded-absolute-task"),
    pytest.param("/files/{task}/../../url-signing.key", False, id="dot-dot-after-task"),
]


@pytest.mark.parametrize(("raw", "routed"), TRAVERSAL_FILES)
async def test_traversal_in_result_paths_even_when_signed(hostile, raw, routed):
    task_id = next(t for t, r in hostile.seeded.items() if r["status"] == "succeeded")
    raw = raw.replace("{task}", task_id)
    path = unquote(raw)
    secret = (hostile.services.settings.data_dir / "url-signing.key").read_bytes()
    unsigned = await raw_get(hostile.app, raw)
    with_signature = await raw_get(hostile.app, raw, signed(hostile, path))
    if routed:
        assert_refused(unsigned, "signature", status=403, code="AccessDenied")
        assert_refused(with_signature, "id", status=404, code="NotFound.Task")
    else:
        assert_refused(unsigned, "", status=404, code="NotFound")
        assert_refused(with_signature, "", status=404, code="NotFound")
    assert secret not in unsigned.content + with_signature.content


# Ids that reach the task routes, and ids whose `/` or dot segments leave them (no route: 404
# with no param). Neither reaches a task of another project nor a file.
TASK_IDS = [
    ("%2e%2e%2fetc", "id"), ("cgt-' OR 1=1 --", "id"), ("cgt-20250101000000-abcde\x00", "id"), ("*", "id"),
    ("%", "id"), ("cgt-20250101000000-%", "id"), ("\u202ecgt", "id"), ("x" * 60_000, "id"), ("...", "id"),
    ("../../etc/passwd", ""), ("..", ""), ("/etc/passwd", ""),
]


@pytest.mark.parametrize(("task_id", "param"), TASK_IDS, ids=lambda t: repr(t[:30]))
@pytest.mark.parametrize("operation", ["get", "delete", "callbacks"])
async def test_hostile_task_ids_are_not_found(hostile, task_id, param, operation):
    path = (f"{OWN_TASKS}/{quote(task_id, safe='')}/callbacks" if operation == "callbacks"
            else f"{TASKS}/{quote(task_id, safe='')}")
    headers = {"Authorization": f"Bearer {KEY_A}"}
    if operation == "delete":
        response = await hostile.client.delete("http://testserver" + path, headers=headers)
    else:
        response = await hostile.client.get("http://testserver" + path, headers=headers)
    error = assert_refused(response, param, status=404, code="NotFound.Task" if param else "NotFound")
    assert len(error["message"]) < 1000  # a huge id is not echoed back whole


@pytest.mark.parametrize("path", [f"{TASKS}/../../../etc/passwd", f"{TASKS}/%2e%2e/%2e%2e"])
async def test_dot_segments_after_the_tasks_path(hostile, path):
    assert_refused(await raw_get(hostile.app, path, headers={"Authorization": f"Bearer {KEY_A}"}), "", status=404,
                   code="NotFound")


async def test_accepted_requests_still_work_after_the_traversals(hostile):
    response = await hostile.client.post(TASKS, json=text_body("after the traversals"), headers=ACCEPTED)
    assert response.status_code == 200
