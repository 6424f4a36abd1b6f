"""The Compose page, run with AppTest from the app's router against a live local service.

The router (dashboard/app.py) is the entry point, as in the browser: Compose is its default page,
so `st.page_link` to Tasks resolves. Files are uploaded through AppTest's own file_uploader
support (Streamlit 1.67), which runs the page's real upload path.
"""

from __future__ import annotations

import base64
import io
import json
import re
import time
from decimal import Decimal
from pathlib import Path

import pytest
from PIL import Image
from streamlit.testing.v1 import AppTest

from components.common import costs
from components.compose import request_preview
from components.compose.body import shown_body
from dailies.client import Client
from dailies.journal import Journal, Submission
from dailies.spec import media, pixels
from dailies.spec.models import CreateTaskRequest
from dailies.spec.prices import cost
from tests.support.waiting import wait_until

APP = str(Path(__file__).resolve().parents[2] / "dashboard" / "app.py")
V20 = "doubao-seedance-2-0-260128"
V15 = "doubao-seedance-1-5-pro-251215"
V10 = "doubao-seedance-1-0-pro-250528"
SUBMIT = "compose.submit"


# ---------- helpers ----------


def png(width: int, height: int, colour=(40, 120, 200)) -> bytes:
    image = Image.new("RGB", (width, height), colour)
    # A diagonal band, so the crop preview has something to show.
    for x in range(0, width, 4):
        image.putpixel((x, min(height - 1, x * height // width)), (250, 250, 250))
    out = io.BytesIO()
    image.save(out, format="PNG")
    return out.getvalue()


@pytest.fixture
def client(dashboard_env):
    with Client(base_url=dashboard_env.base_url, api_key=dashboard_env.api_key) as c:
        yield c


@pytest.fixture
def journal(dashboard_env, tmp_path):
    # The same file the page opens (connection.journal(): DAILIES_DATA_DIR/dashboard/journal.sqlite3).
    j = Journal(tmp_path / "dashboard-data" / "dashboard" / "journal.sqlite3")
    yield j
    j.close()


def compose(**state) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=30)
    for key, value in state.items():
        at.session_state[key] = value
    at.run()
    assert not at.exception, at.exception
    return at


def rerun(at: AppTest) -> AppTest:
    at.run()
    assert not at.exception, at.exception
    return at


def setup(at: AppTest, model: str | None = None, mode: str | None = None, prompt: str | None = None,
          resolution: str = "480p", duration: int | None = None) -> AppTest:
    """Choose model, mode, prompt, a small resolution and the shortest duration the model takes."""
    if model:
        at.selectbox(key="compose.model").set_value(model)
        rerun(at)
    if mode:
        at.radio(key="compose.mode").set_value(mode)
        rerun(at)
    if prompt is not None:
        at.text_area(key="compose.prompt").input(prompt)
    at.selectbox(key="compose.resolution").set_value(resolution)
    slider = at.slider(key="compose.duration")
    slider.set_value(duration if duration is not None else slider.min)
    return rerun(at)


def body(at: AppTest) -> dict:
    """The exact body the request panel shows (request_preview.json_block)."""
    shown = [text for element in at.html if (text := request_preview.json_block_text(element.value)) is not None]
    return json.loads(shown[0])


def panel_problems(at: AppTest) -> str:
    return "\n".join(e.value for e in at.error)


def submit_button(at: AppTest):
    return at.button(key=SUBMIT)


def send(at: AppTest) -> AppTest:
    submit_button(at).click()
    return rerun(at)


def task_count(client: Client) -> int:
    """Tasks on the service. The list window is [T - 7 days, T) with T in whole seconds, so a task
    created in this very second is not listed yet: wait for the next second first."""
    time.sleep(1.02 - time.time() % 1)
    return client.tasks.list(page_size=1).total


def created_ids(at: AppTest) -> list[str]:
    return [dict(pair.split("=") for pair in link.proto.query_string.split("&"))["task"] for link in at.page_link]


def upload(at: AppTest, slot: str, data: bytes, name: str = "shot.png") -> AppTest:
    at.file_uploader(key=f"{slot}.upload").upload(name, data, "image/png")
    return rerun(at)


def wait_all(client: Client, ids: list[str]) -> list:
    return [client.wait(i, timeout=120, poll_interval=0.1) for i in ids]


# ---------- modes ----------


def test_text_only_submits_one_task_and_journals_it(client, journal):
    at = setup(compose(), model=V20, mode="text", prompt="a red kite over a grey sea")
    sent = body(at)
    assert sent == {"model": V20, "content": [{"type": "text", "text": "a red kite over a grey sea"}],
                    "resolution": "480p", "ratio": "adaptive", "duration": 4}
    assert not submit_button(at).disabled
    before = task_count(client)

    send(at)

    assert task_count(client) == before + 1
    [task_id] = created_ids(at)
    assert at.page_link[0].proto.page == "tasks"  # resolved by the router, with ?task=<id>
    record = client.tasks.get(task_id)
    assert (record.model, record.resolution, record.duration) == (V20, "480p", 4)
    kept = journal.submission(task_id)
    assert kept.prompt == "a red kite over a grey sea" and kept.mode == "text" and kept.model == V20
    assert kept.request == sent and kept.batch_id
    assert [b["size"] for b in journal.batches()] == [1]
    # The form keeps its values after sending.
    assert at.text_area(key="compose.prompt").value == "a red kite over a grey sea"


def test_first_frame_upload_is_checked_previewed_and_sent_as_data_url(client, journal):
    at = setup(compose(), model=V15, mode="first_frame", prompt="the bird takes off")
    at.selectbox(key="compose.ratio").set_value("16:9")
    rerun(at)
    image = png(1200, 900)
    upload(at, "compose.image.first", image, "bird.png")

    # Preview, the image's size and the crop that 16:9 at 480p gives (864x496).
    assert len(at.image) == 1
    facts = " ".join(m.value for m in at.markdown)
    assert "1200×900" in facts and "864×496" in facts and "Centre crop keeps **1200×689**" in facts
    sent = body(at)
    assert sent["content"][1]["role"] == "first_frame"
    assert sent["content"][1]["image_url"]["url"].startswith("data:image/png;base64,")
    assert "characters)" in sent["content"][1]["image_url"]["url"]  # shortened on screen only
    assert not panel_problems(at)

    send(at)

    [task_id] = created_ids(at)
    kept = journal.submission(task_id)
    assert kept.mode == "first_frame"
    [ref] = kept.inputs
    assert (ref.index, ref.kind, ref.role, ref.source) == (1, "image_url", "first_frame", "upload: bird.png")
    assert ref.thumbnail.startswith("data:image/jpeg;base64,") and ref.url is None
    restored = journal.restore_request(kept.request)
    assert restored["content"][1]["image_url"]["url"] == "data:image/png;base64," + base64.b64encode(image).decode()
    record = client.wait(task_id, timeout=120, poll_interval=0.1)
    assert record.status == "succeeded", record.error
    assert (record.ratio, record.resolution) == ("16:9", "480p")


def test_an_image_whose_data_breaks_off_after_its_header_is_a_problem_not_a_crash(client, journal):
    """Its header reads, so the size checks pass; its pixels do not (a truncated download): the
    preview said nothing and the page raised, and the service would fail the task at render."""
    at = setup(compose(), model=V15, mode="first_frame", prompt="the bird takes off")
    image = io.BytesIO()
    Image.new("RGB", (1200, 900), (40, 120, 200)).save(image, format="JPEG")
    upload(at, "compose.image.first", image.getvalue()[:2000], "cut.jpg")
    assert not at.exception
    assert "cannot be decoded whole" in panel_problems(at)
    assert submit_button(at).disabled


def test_a_sideways_photo_is_sized_upright_as_the_video_will_use_it(client, journal):
    """A camera's portrait photo is stored landscape with an EXIF orientation: the preview, the
    frame size adaptive picks and the cost follow it upright, as the renderer does."""
    at = setup(compose(), model=V15, mode="first_frame", prompt="a portrait")
    photo = io.BytesIO()
    exif = Image.Exif()
    exif[0x0112] = 6  # rotate 90° to view
    Image.new("RGB", (1600, 900), (40, 120, 200)).save(photo, format="JPEG", exif=exif)
    upload(at, "compose.image.first", photo.getvalue(), "portrait.jpg")
    assert not at.exception and not panel_problems(at)
    facts = " ".join(m.value for m in at.markdown)
    assert "900×1600" in facts and "(9:16)" in facts


def test_first_and_last_frame(client, journal):
    at = setup(compose(), model=V15, mode="first_last_frame", prompt="dawn to dusk")
    upload(at, "compose.image.first", png(960, 960), "dawn.png")
    assert "nothing chosen yet" in panel_problems(at)  # the empty last frame, beside its slot
    assert submit_button(at).disabled
    upload(at, "compose.image.last", png(960, 960, (200, 80, 40)), "dusk.png")
    sent = body(at)
    assert [(c["type"], c.get("role")) for c in sent["content"]] == [
        ("text", None), ("image_url", "first_frame"), ("image_url", "last_frame")]
    assert not panel_problems(at)
    # adaptive follows the first frame: a square image gives 1:1, 640x640 at 480p.
    assert [m.value for m in at.metric][0] == "640×640"

    send(at)

    [task_id] = created_ids(at)
    assert [i.role for i in journal.submission(task_id).inputs] == ["first_frame", "last_frame"]


def test_references_on_2_0_with_image_video_and_audio(client, journal):
    at = setup(compose(), model=V20, mode="references", prompt="the dancer in the style of the clip")
    at.radio(key="compose.ref_image.0.source").set_value("Asset id")
    rerun(at)
    at.text_input(key="compose.ref_image.0.asset").input("dancer-01")
    at.number_input(key="compose.ref_videos").set_value(1)
    at.number_input(key="compose.ref_audios").set_value(1)
    rerun(at)
    at.text_input(key="compose.ref_video.0.url").input("https://example.com/clip.mp4")
    at.text_input(key="compose.ref_audio.0.url").input("https://example.com/voice.mp3")
    rerun(at)
    sent = body(at)
    assert sent["content"][1:] == [
        {"type": "image_url", "image_url": {"url": "asset://dancer-01"}, "role": "reference_image"},
        {"type": "video_url", "video_url": {"url": "https://example.com/clip.mp4"}, "role": "reference_video"},
        {"type": "audio_url", "audio_url": {"url": "https://example.com/voice.mp3"}, "role": "reference_audio"},
    ]
    captions = " ".join(c.value for c in at.caption)
    assert "at most 200 MB" in captions and "15 seconds together" in captions and "never the only input" in captions
    assert not panel_problems(at)
    # No camera_fixed with reference images; 2.0 has none anyway, and no seed.
    assert not [c for c in at.checkbox if c.key == "compose.camera_fixed"]

    send(at)

    [task_id] = created_ids(at)
    kept = journal.submission(task_id)
    assert [(i.kind, i.source) for i in kept.inputs] == [
        ("image_url", "asset://dancer-01"), ("video_url", "https://example.com/clip.mp4"),
        ("audio_url", "https://example.com/voice.mp3")]


def test_references_on_1_5_pro_take_images_only_and_an_upload(client, journal):
    at = setup(compose(), model=V15, mode="references", prompt="this character, walking")
    keys = {n.key for n in at.number_input}
    assert "compose.ref_images" in keys and not keys & {"compose.ref_videos", "compose.ref_audios"}
    upload(at, "compose.ref_image.0", png(800, 1000), "hero.png")
    assert body(at)["content"][1]["role"] == "reference_image"
    assert not [c for c in at.checkbox if c.key == "compose.camera_fixed"]
    assert "not available with reference images" in " ".join(c.value for c in at.caption)
    send(at)
    assert len(created_ids(at)) == 1


def test_final_from_a_draft(client, journal):
    draft = client.tasks.create({"model": V15, "content": [{"type": "text", "text": "a paper boat"}],
                                 "draft": True, "duration": 4, "ratio": "4:3"})
    assert client.wait(draft.id, timeout=120, poll_interval=0.1).status == "succeeded"

    at = compose()
    at.selectbox(key="compose.model").set_value(V15)
    rerun(at)
    at.radio(key="compose.mode").set_value("draft_final")
    rerun(at)
    assert not [t for t in at.text_area if t.key == "compose.prompt"]  # the final reuses the draft's prompt
    at.selectbox(key="compose.draft_pick").set_value(draft.id)
    at.selectbox(key="compose.resolution").set_value("720p")
    rerun(at)
    sent = body(at)
    assert sent == {"model": V15, "content": [{"type": "draft_task", "draft_task": {"id": draft.id}}],
                    "resolution": "720p"}
    # Size, tokens and cost follow the draft's ratio and length: 4:3 at 720p for 4 s, with the draft's
    # audio (1.5 Pro with audio: ¥16 per million tokens, docs/prices.md).
    tokens = pixels.estimate_tokens(1112, 834, 4)
    assert [m.value for m in at.metric] == ["1112×834", f"{tokens:,}", f"¥{Decimal(tokens) * 16 / 10**6:.2f}"]
    assert not {w.key for w in at.slider} & {"compose.duration"}

    send(at)

    [final_id] = created_ids(at)
    record = client.wait(final_id, timeout=120, poll_interval=0.1)
    assert record.status == "succeeded" and record.draft_task_id == draft.id
    assert journal.submission(final_id).mode == "draft_final"


# ---------- invalid combinations never leave ----------


def test_an_image_outside_the_aspect_limit_is_refused_before_sending(client):
    at = setup(compose(), model=V15, mode="first_frame", prompt="a long banner")
    before = task_count(client)
    upload(at, "compose.image.first", png(1920, 200), "banner.png")

    expected = "First frame: 1920x200: aspect 9.6 is outside 0.4 to 2.5"  # the field, in the form's words
    assert expected in panel_problems(at)
    beside = [e.value for e in at.error if "Request" not in e.value and "problem" not in e.value]
    assert any("1920x200: aspect 9.6 is outside 0.4 to 2.5" in text for text in beside)
    assert "height 200 px is outside 300 to 6000 px" in panel_problems(at)
    assert submit_button(at).disabled
    with pytest.raises(Exception, match="disabled"):
        submit_button(at).click()
    assert task_count(client) == before


@pytest.mark.parametrize(("model", "steps", "expected"), [
    # A draft cannot take a last frame (1.5 Pro).
    (V15, [("toggle", "compose.draft", True), ("radio", "compose.mode", "first_last_frame"),
           ("radio", "compose.image.first.source", "URL"), ("radio", "compose.image.last.source", "URL"),
           ("text_input", "compose.image.first.url", "https://example.com/a.png"),
           ("text_input", "compose.image.last.url", "https://example.com/b.png")],
     "a draft cannot take a last_frame image"),
    # Audio is never the only reference (2.0).
    (V20, [("radio", "compose.mode", "references"), ("number_input", "compose.ref_images", 0),
           ("number_input", "compose.ref_audios", 1),
           ("text_input", "compose.ref_audio.0.url", "https://example.com/voice.mp3")],
     "audio needs an image or a video beside it"),
    # The safety identifier is at most 64 characters.
    (V20, [("text_input", "compose.safety_identifier", "x" * 65)], "is longer than 64 characters"),
    (V20, [("text_input", "compose.safety_identifier", "usér")], "must be ASCII characters only"),
    # An empty prompt in text-only mode.
    (V20, [("text_area", "compose.prompt", "   ")], "the prompt is empty"),
    # A reference mode with nothing in it.
    (V15, [("radio", "compose.mode", "references"), ("number_input", "compose.ref_images", 0)],
     "add at least one reference"),
    # More prompt lines than one batch sends.
    (V20, [("radio", "compose.vary_by", "lines"), ("text_area", "compose.prompt", "\n".join("abcdefghi"))],
     "9 prompt lines: at most 8 tasks"),
])
def test_invalid_combinations_are_shown_and_nothing_is_sent(client, model, steps, expected):
    at = setup(compose(), model=model, prompt="a quiet street")
    before = task_count(client)
    for kind, key, value in steps:
        widget = getattr(at, kind)(key=key)
        widget.input(value) if kind in ("text_input", "text_area") else widget.set_value(value)
        rerun(at)
    assert expected in panel_problems(at)
    assert submit_button(at).disabled
    assert task_count(client) == before


def test_a_prompt_not_yet_written_is_asked_for_without_an_error(client):
    """A new form is unfinished, not wrong: no red beside the empty prompt or in the request panel, a
    neutral line asking for the prompt, and Submit off. Blanks typed are an error; a prompt typed and
    cleared is unfinished again."""
    at = setup(compose(), model=V20)
    assert not at.error, [e.value for e in at.error]
    assert any("Write a prompt to send" in i.value for i in at.info)
    assert submit_button(at).disabled
    assert not any("until every problem above is fixed" in c.value for c in at.caption)

    at.text_area(key="compose.prompt").input("   ")
    rerun(at)
    assert "the prompt is empty" in panel_problems(at)
    assert not any("Write a prompt to send" in i.value for i in at.info)

    at.text_area(key="compose.prompt").input("a kite")
    rerun(at)
    assert not at.error and not submit_button(at).disabled
    at.text_area(key="compose.prompt").input("")
    rerun(at)
    assert not at.error and any("Write a prompt to send" in i.value for i in at.info)
    assert submit_button(at).disabled

    # A real mistake beside it is an error, the unwritten prompt still none.
    at.text_input(key="compose.safety_identifier").input("x" * 65)
    rerun(at)
    assert "is longer than 64 characters" in panel_problems(at)
    assert "the prompt is empty" not in panel_problems(at)


@pytest.mark.parametrize(("mode", "steps", "beside"), [
    # A scheme the service would only refuse later, in the render: refused here, beside its slot.
    ("first_frame", [("radio", "compose.image.first.source", "URL"),
                     ("text_input", "compose.image.first.url", "javascript:alert(1)")],
     "url: must be a public http(s) URL, a Base64 data URL of an image"),
    ("first_frame", [("radio", "compose.image.first.source", "URL"),
                     ("text_input", "compose.image.first.url", "data:text/html;base64,PHNjcmlwdD4=")],
     "url: is a data URL of 'text/html'; it must hold an image"),
    # The video and audio slots of a references request, by the same rule (no reference image, or one
    # given as an asset id, so that the slot's own URL is the only problem).
    ("references", [("number_input", "compose.ref_images", 0), ("number_input", "compose.ref_videos", 1),
                    ("radio", "compose.ref_video.0.source", "URL"),
                    ("text_input", "compose.ref_video.0.url", "file:///etc/passwd")],
     "url: must be a public http(s) URL, a Base64 data URL of a video"),
    ("references", [("radio", "compose.ref_image.0.source", "Asset id"),
                    ("text_input", "compose.ref_image.0.asset", "asset-20260101-abcde"),
                    ("number_input", "compose.ref_audios", 1),
                    ("radio", "compose.ref_audio.0.source", "URL"),
                    ("text_input", "compose.ref_audio.0.url", "ftp://example.com/voice.mp3")],
     "got a URL with the scheme ftp:"),
    # The callback URL's scheme: the same rule the service applies (dailies.spec.urls).
    ("text", [("text_input", "compose.callback_url", "ftp://example.com/hook")],
     "must be an http or https URL; got a URL with the scheme ftp:"),
])
def test_urls_the_service_refuses_keep_submit_off(client, mode, steps, beside):
    at = setup(compose(), model=V20, mode=mode, prompt="a lantern in the rain")
    before = task_count(client)
    for kind, key, value in steps:
        widget = getattr(at, kind)(key=key)
        widget.input(value) if kind == "text_input" else widget.set_value(value)
        rerun(at)
    next_to_fields = [e.value for e in at.error if "problem" not in e.value]
    assert any(beside in text for text in next_to_fields), next_to_fields
    assert submit_button(at).disabled
    with pytest.raises(Exception, match="disabled"):
        submit_button(at).click()
    assert task_count(client) == before


def test_controls_follow_the_models_capabilities(dashboard_env):
    at = compose()

    def keys() -> set[str]:
        return {w.key for kind in ("number_input", "checkbox", "toggle", "selectbox", "radio", "slider")
                for w in getattr(at, kind) if w.key}

    at.selectbox(key="compose.model").set_value(V20)
    rerun(at)
    assert {"compose.priority", "compose.web_search", "compose.generate_audio"} <= keys()
    assert not keys() & {"compose.seed", "compose.camera_fixed", "compose.frames", "compose.length_by",
                         "compose.draft", "compose.flex"}
    assert at.radio(key="compose.mode").options == ["Text only", "First frame", "First and last frame", "References"]
    assert at.selectbox(key="compose.resolution").options == ["480p", "720p", "1080p", "4k"]
    assert (at.slider(key="compose.duration").min, at.slider(key="compose.duration").max) == (4, 15)
    assert "compose.vary_by" in keys() and at.radio(key="compose.vary_by").options == [
        "One prompt per line", "Same request again"]

    at.selectbox(key="compose.model").set_value(V15)
    rerun(at)
    assert {"compose.seed", "compose.camera_fixed", "compose.draft", "compose.flex", "compose.duration_auto"} <= keys()
    assert not keys() & {"compose.frames", "compose.length_by", "compose.priority", "compose.web_search"}
    assert at.radio(key="compose.mode").options[-1] == "Final from a draft"
    assert at.selectbox(key="compose.resolution").options == ["480p", "720p", "1080p"]
    at.toggle(key="compose.draft").set_value(True)
    rerun(at)
    assert at.selectbox(key="compose.resolution").options == ["480p"]
    assert at.checkbox(key="compose.flex").disabled  # a draft is not run on the flex tier

    at.selectbox(key="compose.model").set_value(V10)
    rerun(at)
    assert "compose.length_by" in keys()
    assert not keys() & {"compose.generate_audio", "compose.draft", "compose.duration_auto", "compose.priority"}
    assert at.radio(key="compose.mode").options == ["Text only", "First frame", "First and last frame"]
    at.radio(key="compose.length_by").set_value("frames")
    rerun(at)
    frames = at.selectbox(key="compose.frames")
    assert frames.options[0].startswith("29 frames") and frames.options[-1].startswith("289 frames")
    at.text_area(key="compose.prompt").input("a clock")
    frames.set_value(29)
    rerun(at)
    sent = body(at)
    assert sent["frames"] == 29 and "duration" not in sent


def test_token_estimate_and_pixel_size(dashboard_env):
    at = setup(compose(), model=V15, prompt="a lighthouse", resolution="1080p", duration=5)
    at.selectbox(key="compose.ratio").set_value("16:9")
    rerun(at)
    # 1920x1080 for 5 s: the 245,025 tokens of the real service's bills, at 1.5 Pro's ¥16 with audio.
    assert [m.value for m in at.metric] == ["1920×1080", "245,025", "¥3.92"]

    at.number_input(key="compose.variations").set_value(3)
    at.toggle(key="compose.draft").set_value(True)
    rerun(at)
    each = pixels.estimate_tokens(864, 496, 5, draft=True)
    each_cost = Decimal(each) * 16 / 10**6
    assert [m.value for m in at.metric] == ["864×496", f"{each * 3:,}", f"¥{each_cost * 3:.2f}"]
    assert f"{each:,} × 3" in [str(m.proto.delta) for m in at.metric][1]
    # The batch's cost: three drafts, each priced as the service bills a draft's tokens.
    assert f"¥{each_cost:.2f} × 3" in [str(m.proto.delta) for m in at.metric][2]

    at.toggle(key="compose.draft").set_value(False)
    at.checkbox(key="compose.duration_auto").set_value(True)
    rerun(at)
    assert body(at)["duration"] == -1
    assert "at most 12 s is estimated" in " ".join(c.value for c in at.caption)


def test_variations_by_seed_make_one_batch(client, journal):
    at = setup(compose(), model=V15, prompt="a spinning top")
    at.number_input(key="compose.seed").set_value(42)
    at.number_input(key="compose.variations").set_value(3)
    rerun(at)
    assert body(at)["seed"] == 42
    assert "+ 2 more: the same request with seeds 43, 44" in " ".join(c.value for c in at.caption)
    assert submit_button(at).label == "Submit 3 tasks"
    before = task_count(client)

    send(at)

    ids = created_ids(at)
    assert len(ids) == 3 and task_count(client) == before + 3
    kept = journal.submissions(ids)
    assert len({s.batch_id for s in kept.values()}) == 1
    assert sorted(s.request["seed"] for s in kept.values()) == [42, 43, 44]
    assert journal.batches()[0]["size"] == 3
    assert sorted(r.seed for r in (client.tasks.get(i) for i in ids)) == [42, 43, 44]


def test_one_prompt_per_line(client, journal):
    at = setup(compose(), model=V20, prompt="kept across the relabelling")
    at.radio(key="compose.vary_by").set_value("lines")
    rerun(at)
    assert at.text_area(key="compose.prompt").label.startswith("Prompts, one per line")
    assert at.text_area(key="compose.prompt").value == "kept across the relabelling"
    at.text_area(key="compose.prompt").input("a cat\n\na dog\n  a fox  \n")
    rerun(at)
    assert body(at)["content"][0]["text"] == "a cat"
    assert submit_button(at).label == "Submit 3 tasks"

    send(at)

    kept = journal.submissions(created_ids(at))
    assert sorted(s.prompt for s in kept.values()) == ["a cat", "a dog", "a fox"]
    assert len({s.batch_id for s in kept.values()}) == 1


def test_the_links_of_a_batch_of_variations_name_what_differs(client, journal):
    """Issue 37: three lines that share their start used to give three links reading "A paper boat drif…"."""
    shared = "A paper boat drifting down a rain-soaked street at dusk, camera"
    at = setup(compose(), model=V20, prompt="x")
    at.radio(key="compose.vary_by").set_value("lines")
    rerun(at)
    at.text_area(key="compose.prompt").input(f"{shared} pushes in\n{shared} orbits left\n{shared} stays still")
    rerun(at)
    assert "“… orbits left”; “… stays still”" in " ".join(c.value for c in at.caption)

    send(at)

    labels = [link.label.rsplit(" · ", 1)[0] for link in at.page_link]  # the last part: the task's status
    ids = created_ids(at)
    assert labels == [f"{task_id} · … {line}"
                      for task_id, line in zip(ids, ["pushes in", "orbits left", "stays still"], strict=True)]


def test_after_a_batch_is_sent_submit_waits_for_a_change_or_send_again(client, journal):
    """Issue 37: Submit stayed armed after success, so a second press made a second take unasked."""
    at = setup(compose(), model=V20, prompt="a kite over the dunes")
    send(at)
    assert len(created_ids(at)) == 1
    assert submit_button(at).disabled and submit_button(at).label == "Submitted ✓"
    at.button(key="compose.send_again").click()
    rerun(at)
    assert not submit_button(at).disabled and submit_button(at).label == "Submit"
    send(at)
    assert len(created_ids(at)) == 1 and submit_button(at).disabled  # a second take, asked for
    at.text_area(key="compose.prompt").input("a kite over the dunes at dawn")
    rerun(at)
    assert not submit_button(at).disabled  # another form: armed again


def test_a_render_that_ends_while_compose_stays_open_is_announced(client, journal):
    """Issue 37: nothing told a creative on Compose that their render had finished."""
    at = setup(compose(), model=V20, prompt="a lantern over the river")
    send(at)
    [task_id] = created_ids(at)
    assert at.page_link[0].label.endswith(("· waiting in the queue", "· rendering…")) and not at.toast
    client.wait(task_id, timeout=180, poll_interval=0.2)
    rerun(at)  # what the fragment does every few seconds
    assert [t.value for t in at.toast] == [f"{task_id}: finished — open it in Review"]
    assert at.page_link[0].label.endswith("· ✓ succeeded")
    rerun(at)
    assert not at.toast  # said once


def final_from_a_typed_draft_id() -> AppTest:
    """Compose on 1.5 Pro in "final from a draft" mode, with the draft to be typed by id."""
    at = compose()
    at.selectbox(key="compose.model").set_value(V15)
    rerun(at)
    at.radio(key="compose.mode").set_value("draft_final")
    rerun(at)
    at.selectbox(key="compose.draft_pick").set_value("__other__")
    return rerun(at)


def test_a_refusal_by_the_service_is_shown_and_the_form_kept(client):
    # Passes every local rule; only the service knows there is no such draft.
    at = final_from_a_typed_draft_id()
    at.text_input(key="compose.draft_id").input("cgt-20250101120000-zzzzz")
    rerun(at)
    assert not panel_problems(at)

    send(at)

    refusal = panel_problems(at)
    # A draft id the service does not find answers as any unknown task id: 404 (isolation, issue 12).
    assert "The task was not created: **404 · NotFound.Task** (field `content[0].draft_task.id`)" in refusal
    assert "draft task cgt-20250101120000-zzzzz was not found" in refusal
    assert "The form is unchanged" in refusal
    assert not at.page_link
    assert at.text_input(key="compose.draft_id").value == "cgt-20250101120000-zzzzz"


def test_long_prompt_is_warned_not_blocked(dashboard_env):
    at = setup(compose(), model=V20, prompt="word " * 1001)
    assert "longer than recommended" in at.warning[0].value
    assert not submit_button(at).disabled
    at.text_area(key="compose.prompt").input("雨" * 501)
    rerun(at)
    assert "501 Chinese characters" in " ".join(c.value for c in at.caption)
    assert at.warning and not submit_button(at).disabled


# ---------- prefill and chaining ----------


def test_prefill_of_a_journaled_request_loads_every_widget(client, journal):
    image = png(640, 480)
    data_url = "data:image/png;base64," + base64.b64encode(image).decode()
    request = {"model": V15, "content": [{"type": "text", "text": "the same shot, again"},
                                         {"type": "image_url", "image_url": {"url": data_url}, "role": "first_frame"}],
               "resolution": "480p", "ratio": "4:3", "duration": 6, "seed": 7, "camera_fixed": True,
               "generate_audio": False, "watermark": True, "execution_expires_after": 7200}
    # As Tasks sends it: from the journal, where the upload was stored as a file.
    journal.record_submission(Submission("cgt-20250101120000-prefl", None, time.time(), client.base_url, V15,
                                         "first_frame", "the same shot, again", request))
    stored = journal.submission("cgt-20250101120000-prefl").request
    assert stored["content"][1]["image_url"]["url"].startswith("journal-input:")

    at = compose(**{"compose.prefill": {"request": stored, "note": "Rerun of cgt-20250101120000-prefl"}})

    assert "Rerun of cgt-20250101120000-prefl" in at.info[0].value
    assert at.selectbox(key="compose.model").value == V15
    assert at.radio(key="compose.mode").value == "first_frame"
    assert at.text_area(key="compose.prompt").value == "the same shot, again"
    assert at.number_input(key="compose.seed").value == 7
    assert at.slider(key="compose.duration").value == 6
    assert at.checkbox(key="compose.camera_fixed").value is True
    assert at.toggle(key="compose.generate_audio").value is False
    assert at.number_input(key="compose.expires_hours").value == 2
    assert "restored from the journal" in " ".join(c.value for c in at.caption)
    sent = body(at)
    assert {k: v for k, v in sent.items() if k != "content"} == {k: v for k, v in request.items() if k != "content"}
    assert shown_body(request)["content"] == sent["content"]
    assert not panel_problems(at)
    # Applied once: a rerun does not load it again over the user's edits.
    at.text_area(key="compose.prompt").input("edited")
    rerun(at)
    assert body(at)["content"][0]["text"] == "edited"


def test_chaining_from_a_previous_tasks_last_frame(client, journal):
    first = client.tasks.create({"model": V15, "content": [{"type": "text", "text": "shot one"}],
                                 "resolution": "480p", "duration": 4, "return_last_frame": True})
    record = client.wait(first.id, timeout=120, poll_interval=0.1)
    assert record.status == "succeeded" and record.content.last_frame_url
    wait_until(lambda: first.id in {t.id for t in client.tasks.list(page_size=50).items}, "the task is listed")

    # Picked in the slot itself...
    at = setup(compose(), model=V15, mode="first_frame", prompt="shot two")
    at.radio(key="compose.image.first.source").set_value("Previous task")
    rerun(at)
    at.selectbox(key="compose.image.first.task").set_value(first.id)
    rerun(at)
    sent = body(at)
    assert sent["content"][1]["image_url"]["url"].startswith("data:image/")  # copied: result URLs expire
    assert not panel_problems(at) and not at.warning
    send(at)
    [task_id] = created_ids(at)
    assert journal.submission(task_id).inputs[0].source == f"last frame of {first.id}"

    # ... or handed over by another page.
    at = compose(**{"compose.prefill": {"input": {"url": record.content.last_frame_url, "kind": "image_url",
                                                  "role": "first_frame"}, "note": f"Continue from {first.id}"}})
    assert at.radio(key="compose.mode").value == "first_frame"
    assert body(at)["content"][-1]["image_url"]["url"].startswith("data:image/")
    assert f"Continue from {first.id}" in at.info[0].value


# ---------- the form keeps what the user gave it ----------


def test_the_form_survives_a_trip_to_another_page(dashboard_env):
    at = setup(compose(), model=V15, mode="first_frame", prompt="keep me")
    at.number_input(key="compose.seed").set_value(1234)
    rerun(at)
    upload(at, "compose.image.first", png(1000, 800), "kept.png")
    before = body(at)

    rerun(at.switch_page("views/settings.py"))
    assert at.header[0].value == "Settings"
    rerun(at.switch_page("views/compose.py"))

    assert body(at) == before  # prompt, seed and the uploaded image all still there
    assert "Using **kept.png** (uploaded earlier)" in " ".join(c.value for c in at.caption)


def test_clearing_the_uploader_or_removing_a_kept_image_empties_the_slot(dashboard_env):
    at = setup(compose(), model=V15, mode="first_frame", prompt="x")
    upload(at, "compose.image.first", png(1000, 800))
    assert body(at)["content"][1]["image_url"]["url"].startswith("data:")
    at.file_uploader(key="compose.image.first.upload").clear()
    rerun(at)
    assert body(at)["content"][1]["image_url"]["url"] == ""
    assert "nothing chosen yet" in panel_problems(at)

    # A restored image (no file in the uploader) has its own Remove button.
    at.session_state["compose.image.first.kept"] = {"name": "old.png", "data": png(1000, 800), "mime": "image/png",
                                                    "origin": "journal", "file_id": None}
    rerun(at)
    assert "restored from the journal" in " ".join(c.value for c in at.caption)
    at.button(key="compose.image.first.remove").click()
    rerun(at)
    assert body(at)["content"][1]["image_url"]["url"] == ""


def test_empty_draft_id_is_explained_beside_the_picker(dashboard_env):
    at = final_from_a_typed_draft_id()
    assert "choose a draft task, or type its id" in panel_problems(at)
    assert submit_button(at).disabled


def earlier_result(client, text: str, **fields):
    """A succeeded task the reference picker lists (finished, and made before the current second)."""
    earlier = client.tasks.create({"model": V20, "content": [{"type": "text", "text": text}],
                                   "resolution": "480p", **fields})
    record = client.wait(earlier.id, timeout=120, poll_interval=0.1)
    assert record.status == "succeeded"
    wait_until(lambda: earlier.id in {t.id for t in client.tasks.list(page_size=50).items}, "the task is listed")
    return record


def pick_previous_videos(at, task_id: str, count: int) -> None:
    """References mode with no image and `count` reference videos, each the result of `task_id`."""
    at.number_input(key="compose.ref_images").set_value(0)
    at.number_input(key="compose.ref_videos").set_value(count)
    rerun(at)
    for slot in range(count):
        at.radio(key=f"compose.ref_video.{slot}.source").set_value("Previous task")
        rerun(at)
        at.selectbox(key=f"compose.ref_video.{slot}.task").set_value(task_id)
        rerun(at)


def test_a_previous_tasks_video_as_a_reference(client):
    record = earlier_result(client, "a wave", duration=4)
    at = setup(compose(), model=V20, mode="references", prompt="the same wave, at night")
    pick_previous_videos(at, record.id, 1)
    assert body(at)["content"][1] == {"type": "video_url", "video_url": {"url": record.content.video_url},
                                      "role": "reference_video"}
    captions = " ".join(c.value for c in at.caption)
    # The service reads its own result URLs from disk: no loopback download, so no flag to mention.
    assert "lives 24 hours" in captions and "--allow-loopback-inputs" not in captions
    assert not panel_problems(at) and not at.warning
    chained = client.tasks.create(body(at))
    assert client.wait(chained.id, timeout=120, poll_interval=0.1).status == "succeeded"


def test_the_page_also_runs_outside_the_router(client):
    # Without st.navigation, Streamlit cannot resolve views/tasks.py: the link falls back to markdown.
    at = AppTest.from_file(str(Path(APP).parent / "views" / "compose.py"), default_timeout=30)
    at.run()
    at = setup(at, model=V20, prompt="outside the router")
    send(at)
    [task_id] = re.findall(r"\(/tasks\?task=(cgt-[\w-]+)\)", " ".join(m.value for m in at.markdown))
    assert client.tasks.get(task_id).model == V20


@pytest.mark.parametrize("own", [None, "1080p"])
def test_a_final_starts_at_the_users_own_resolution_not_the_drafts(dashboard_env, own):
    at = compose()
    at.selectbox(key="compose.model").set_value(V15)
    if own is not None:  # else never chosen: the form's default
        at.selectbox(key="compose.resolution").set_value(own)
    rerun(at)
    at.toggle(key="compose.draft").set_value(True)
    rerun(at)
    assert at.selectbox(key="compose.resolution").value == "480p"  # forced by the draft
    at.radio(key="compose.mode").set_value("draft_final")
    rerun(at)
    assert at.selectbox(key="compose.resolution").value == (own or pixels.RESOLUTION_DEFAULT)
    at.radio(key="compose.mode").set_value("text")  # the draft toggle is on again: 480p, then off: the own one
    rerun(at)
    assert at.selectbox(key="compose.resolution").value == "480p"
    at.toggle(key="compose.draft").set_value(False)
    rerun(at)
    assert at.selectbox(key="compose.resolution").value == (own or pixels.RESOLUTION_DEFAULT)


def test_earlier_results_as_references_are_held_to_15_s_together(client):
    earlier = earlier_result(client, "a long wave", ratio="16:9", duration=15)
    seconds = (24 * 15 + 1) / 24  # a "15 s" result: 24 x 15 + 1 frames

    at = setup(compose(), model=V20, mode="references", prompt="the same wave, twice")
    at.selectbox(key="compose.ratio").set_value("16:9")
    pick_previous_videos(at, earlier.id, 1)
    assert not panel_problems(at)  # a 15 s result alone is a 15 s reference
    # The estimate counts the input video's frames, as the service bills them.
    expected = cost(CreateTaskRequest.model_validate(body(at)), prices=costs.price_table(),
                    input_video_seconds=seconds)
    assert at.metric[2].value == costs.cost_text(expected).removeprefix("≈ ")

    pick_previous_videos(at, earlier.id, 2)
    [problem] = media.reference_videos_problems([("content[1].video_url", seconds), ("content[2].video_url", seconds)])
    # The second video's slot is named in the form's words, not by its JSON path.
    assert f"Reference video 2: {problem.message}" in panel_problems(at) and "content[" not in panel_problems(at)
    assert problem.path == "content[2].video_url"
    assert sum(problem.message in e.value for e in at.error) == 2  # and again beside that slot
    assert submit_button(at).disabled


def test_what_the_journal_could_not_keep_is_said_after_the_page_is_drawn_again(client, journal, monkeypatch):
    """A sent batch redraws the page (Submit as sent, the watch started): a warning made while sending is
    kept with the result, not lost with that run."""
    from dailies.journal import Journal

    def fails(*_args, **_kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(Journal, "record_submission", fails)
    at = setup(compose(), model=V20, prompt="a heron at dawn")
    send(at)
    [task_id] = created_ids(at)
    assert [w.value for w in at.warning] == [
        f"Task {task_id} was created, but its prompt and inputs could not be journaled: disk full"]


def test_before_the_first_frame_is_chosen_nothing_is_priced_and_the_uploader_states_the_specs_limit(client):
    """Issue 37: the cost said "no price" before an upload, and the uploader "64 MB" where the spec says 30."""
    at = setup(compose(), model=V15, mode="first_frame", prompt="a kite")
    assert at.metric[2].value == "—"
    uploader = at.file_uploader(key="compose.image.first.upload")
    assert uploader.proto.max_upload_size_mb == 30
    upload(at, "compose.image.first", png(1280, 720))
    assert at.metric[2].value.startswith("¥")
