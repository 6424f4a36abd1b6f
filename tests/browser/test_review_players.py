"""The review players in headless Chromium: a tiny Streamlit app (written here into a temporary
folder) mounts the timecode player and the synchronised comparison on real H.264 clips, and the
tests drive them as a reviewer would. The player's clip is a Path (served by Streamlit's media file
manager, as kept copies are); the comparison's clips are absolute http URLs (Streamlit's static
serving of the app's static/ folder, which answers range requests as a result host does).
Screenshots go to tests/artifacts/screenshots/review-players*.png.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
import pytest

from dailies.generator.encode import Mp4Writer
from dailies.launcher import dashboard_app_root
from tests.support.live_service import free_port

from .conftest import running_process
from .ui import COMPONENT_QUERY as SHADOW
from .ui import playing_gaps, screenshot

pytestmark = [pytest.mark.browser, pytest.mark.slow]

WIDTH, HEIGHT, FPS, SECONDS = 320, 180, 24, 4
TAKES = {"a": (38, 120, 140), "b": (200, 110, 40), "c": (110, 60, 160)}  # background colour of each clip

APP = '''
import sys
from pathlib import Path

import streamlit as st

sys.path.insert(0, APP_ROOT)  # the dashboard's packages (dailies/launcher.py, dashboard_app_root)
from components.review.sync_compare import sync_compare
from components.common.timecode_player import timecode_player

st.set_page_config(page_title="Review players", layout="wide")
port = sys.argv[1]
clips = Path(__file__).parent / "static"
fit = st.query_params.get("fit")  # a maximum height instead of a height: the player "Open alone" draws

if st.button("Seek to 1.5"):
    st.session_state.seek = 1.5
if st.button("Seek to 0.04"):  # the second frame of a 24 fps clip (0.0417 s), as its comment keeps it
    st.session_state.seek = 0.04
if st.button("Seek to frame 37"):  # a comment kept with its frame
    st.session_state.seek_frame = 37
if st.button("Show a drawn comment"):  # a comment kept with its frame and its drawing
    st.session_state.seek_frame = 12
    st.session_state.drawing = [{"kind": "ellipse", "x1": 0.1, "y1": 0.1, "x2": 0.3, "y2": 0.4, "colour": "#ffcc00"}]
left, right = st.columns(2)
with left:
    st.subheader("Timecode player")
    state = timecode_player(clips / "take-a.mp4", key="player", seek_to=st.session_state.get("seek"),
                            height=None if fit else 220, max_height=fit, fps=24,
                            seek_frame=st.session_state.get("seek_frame"),
                            show_drawing=st.session_state.get("drawing"),
                            marks=[{"in": 10, "out": 20, "drawn": True, "resolved": False,
                                    "label": "Bo: <b>the sky</b>"},
                                   {"in": 60, "out": None, "drawn": False, "resolved": True, "label": "Ana: here"}])
    if state.comment_at is not None:
        st.write(f"comment at {state.comment_at:.2f}")
        st.write(f"comment on frame {state.comment_frame}")
        st.write("comment drawing " + " ".join(s["kind"] for s in state.comment_drawing or []))
        if state.comment_out_frame is not None:
            st.write(f"comment range {state.comment_frame}-{state.comment_out_frame}")
    st.caption(f"position {state.position}")
with right:
    st.subheader("Synchronised comparison")
    sync_compare([f"http://127.0.0.1:{port}/app/static/take-{x}.mp4" for x in "bc"], ["seed 1", "seed 2"],
                 key="compare", height=220)
'''



def write_clip(path: Path, colour: tuple[int, int, int]) -> None:
    """A clip of one colour with a white bar sweeping left to right (so a screenshot shows the time)."""
    with Mp4Writer(path, WIDTH, HEIGHT, FPS) as writer:
        for index in range(FPS * SECONDS):
            frame = np.empty((HEIGHT, WIDTH, 3), np.uint8)
            frame[:] = colour
            x = index * (WIDTH - 16) // (FPS * SECONDS - 1)
            frame[:, x:x + 16] = 255
            writer.add_frame(frame)


@contextmanager
def running_app(folder: Path) -> Iterator[str]:
    """`streamlit run` of the app in `folder` on a free port, until the block ends; yields its URL."""
    port = free_port()
    with running_process(
            [sys.executable, "-m", "streamlit", "run", str(folder / "app.py"), "--server.port", str(port),
             "--server.address", "127.0.0.1", "--server.headless", "true", "--server.enableStaticServing", "true",
             "--server.fileWatcherType", "none", "--browser.gatherUsageStats", "false", "--", str(port)],
            folder / "streamlit.log", f"http://127.0.0.1:{port}/_stcore/health", cwd=folder, timeout_s=90):
        yield f"http://127.0.0.1:{port}"


@pytest.fixture(scope="module")
def app_url(tmp_path_factory, chromium_path) -> Iterator[str]:
    folder = tmp_path_factory.mktemp("review-players")
    (folder / "static").mkdir()
    for name, colour in TAKES.items():
        write_clip(folder / "static" / f"take-{name}.mp4", colour)
    (folder / "app.py").write_text(APP.replace("APP_ROOT", repr(str(dashboard_app_root()))))
    with running_app(folder) as url:
        yield url


def open_app(page, app_url: str) -> None:
    """Open the app and wait until its three videos have data to show."""
    page.goto(app_url)
    page.wait_for_function(f"""() => {{ {SHADOW}
        const videos = q('video');
        return videos.length === 3 && videos.every(v => v.readyState >= 2); }}""", timeout=60_000)


def times(page) -> list[float]:
    """currentTime of the comparison's videos, leader first, read in one go."""
    return page.evaluate(f"() => {{ {SHADOW} return q('.sc video').map(v => v.currentTime); }}")


def test_timecode_player_comments_and_seeks(page, app_url):
    from playwright.sync_api import expect

    open_app(page, app_url)
    assert "/media/" in page.evaluate(f"() => {{ {SHADOW} return q('.tp video')[0].currentSrc; }}")
    button = page.locator(".tp-comment")
    expect(button).to_have_text("Comment at 00:00.00")

    page.evaluate(f"() => {{ {SHADOW} const v = q('.tp video')[0]; v.pause(); v.currentTime = 2.0; }}")
    expect(button).to_have_text("Comment at 00:02.00")
    # The pause/seek position reaches Python (a state value: it stays on later runs).
    expect(page.get_by_text("position 2.0", exact=True)).to_be_visible()

    button.click()
    expect(page.get_by_text("comment at 2.00", exact=True)).to_be_visible()

    # A new seek_to from Python (a comment's timecode) moves the video there, paused.
    page.get_by_role("button", name="Seek to 1.5").click()
    page.wait_for_function(f"""() => {{ {SHADOW} const v = q('.tp video')[0];
        return v.paused && !v.seeking && Math.abs(v.currentTime - 1.5) < 0.02; }}""")
    expect(button).to_have_text("Comment at 00:01.50")
    expect(page.get_by_text("position 1.5", exact=True)).to_be_visible()
    # The comment was a trigger: it came with the run of the click and is gone on the next ones.
    expect(page.get_by_text("comment at 2.00", exact=True)).to_have_count(0)

    # A comment's timecode shows the frame it was taken on: 0.04 is the second frame (0.0417 s) of
    # this 24 fps clip, though a video at 0.04 itself shows the first (the frame at or before).
    page.get_by_role("button", name="Seek to 0.04").click()
    page.wait_for_function(f"""() => {{ {SHADOW} const v = q('.tp video')[0];
        return v.paused && !v.seeking && v.readyState >= 2 && Math.abs(v.currentTime - 0.04) < 0.01; }}""")
    # Which frame shows: the white bar's left edge moves (WIDTH - 16) / (FPS * SECONDS - 1) px a frame.
    left = page.evaluate(f"""() => {{ {SHADOW} const v = q('.tp video')[0];
        const c = document.createElement('canvas'); c.width = v.videoWidth; c.height = v.videoHeight;
        const g = c.getContext('2d'); g.drawImage(v, 0, 0);
        const row = g.getImageData(0, c.height >> 1, c.width, 1).data;
        const white = (x) => row[4 * x] > 200 && row[4 * x + 1] > 200 && row[4 * x + 2] > 200;
        for (let x = 0; x < c.width; x++) if (white(x)) return x;
        return -1; }}""")
    assert round(left / ((WIDTH - 16) / (FPS * SECONDS - 1))) == 1, left
    expect(button).to_have_text("Comment at 00:00.04")

    # While playing, the label follows the video in the browser alone.
    page.evaluate(f"() => {{ {SHADOW} const v = q('.tp video')[0]; v.muted = true; v.play(); }}")
    page.wait_for_function(f"""() => {{ {SHADOW} const v = q('.tp video')[0];
        return v.currentTime > 2.2 && q('.tp-comment')[0].textContent !== 'Comment at 00:01.50'; }}""")
    page.evaluate(f"() => {{ {SHADOW} q('.tp video')[0].pause(); }}")
    assert page.evaluate(f"() => {{ {SHADOW} return q('video').every(v => v.readyState >= 2); }}")

    # Fitted, where the column's width would make the take taller than the maximum: the maximum tall,
    # narrower in the take's own shape (no black bars), and centred.
    open_app(page, app_url + "/?fit=150px")
    fitted = page.evaluate(f"""() => {{ {SHADOW} const root = q('.tp')[0].getBoundingClientRect();
        const r = q('.tp video')[0].getBoundingClientRect();
        return {{ width: r.width, height: r.height, off_centre: (r.left + r.right - root.left - root.right) / 2,
                  column: root.width }}; }}""")
    assert abs(fitted["height"] - 150) < 1 and fitted["column"] > fitted["width"] + 100, fitted
    assert abs(fitted["width"] / fitted["height"] - WIDTH / HEIGHT) < 0.01 and abs(fitted["off_centre"]) < 1, fitted


# The frame the player shows, read from its picture: the white bar's left edge moves
# (WIDTH - 16) / (FPS * SECONDS - 1) px a frame.
DECODED_FRAME = f"""() => {{ {SHADOW} const v = q('.tp video')[0];
    const c = document.createElement('canvas'); c.width = v.videoWidth; c.height = v.videoHeight;
    const g = c.getContext('2d'); g.drawImage(v, 0, 0);
    const row = g.getImageData(0, c.height >> 1, c.width, 1).data;
    const white = (x) => row[4 * x] > 200 && row[4 * x + 1] > 200 && row[4 * x + 2] > 200;
    for (let x = 0; x < c.width; x++) if (white(x)) return Math.round(x / ((c.width - 16) / {FPS * SECONDS - 1}));
    return -1; }}"""
STILL = f"""() => {{ {SHADOW} const v = q('.tp video')[0]; return v.paused && !v.seeking && v.readyState >= 2; }}"""


def shown(page) -> tuple[int, str]:
    """The frame the picture shows and the player's timecode readout, once the video is still."""
    page.wait_for_function(STILL)
    page.wait_for_function(f"""() => {{ {SHADOW} const root = q('.tp')[0];
        return root.dataset.frame !== undefined; }}""")
    return page.evaluate(DECODED_FRAME), page.evaluate(f"() => {{ {SHADOW} return q('.tp-tc')[0].textContent; }}")


def test_the_frame_player_lands_steps_and_comments_on_decoded_frames(page, app_url):
    from playwright.sync_api import expect

    from dailies.timecodes import frame_timecode

    open_app(page, app_url)
    # A comment's frame from Python: the picture shows that frame, and the readout names it.
    page.get_by_role("button", name="Seek to frame 37").click()
    page.wait_for_function(f"() => {{ {SHADOW} return q('.tp')[0].dataset.frame === '37'; }}")
    assert shown(page) == (37, frame_timecode(37, FPS)) == (37, "00:00:01:13")
    # Stepping: → and ◀/▶ land on consecutive decoded frames, and the readout follows the picture.
    page.locator(".tp").first.focus()
    seen = []
    for key in ("ArrowRight", "ArrowRight", "ArrowLeft"):
        before = page.evaluate(f"() => {{ {SHADOW} return q('.tp')[0].dataset.frame; }}")
        page.keyboard.press(key)
        page.wait_for_function(f"(b) => {{ {SHADOW} return q('.tp')[0].dataset.frame !== b; }}", arg=before)
        seen.append(shown(page))
    assert seen == [(38, "00:00:01:14"), (39, "00:00:01:15"), (38, "00:00:01:14")], seen
    for expected in (37, 36, 35):
        page.locator(".tp-step[data-step='-1']").click()
        page.wait_for_function(f"() => {{ {SHADOW} return q('.tp')[0].dataset.frame === '{expected}'; }}")
        assert shown(page) == (expected, frame_timecode(expected, FPS))
    # "Comment at" sends the frame on screen with the time.
    page.locator(".tp-comment").click()
    expect(page.get_by_text("comment on frame 35", exact=True)).to_be_visible()
    # Space plays and pauses, L plays, K pauses; the speed box sets the rate.
    page.locator(".tp").first.focus()
    page.evaluate(f"() => {{ {SHADOW} q('.tp video')[0].muted = true; }}")
    page.keyboard.press("l")
    page.wait_for_function(f"() => {{ {SHADOW} return !q('.tp video')[0].paused; }}")
    page.keyboard.press("k")
    page.wait_for_function(STILL)
    page.keyboard.press(" ")
    page.wait_for_function(f"() => {{ {SHADOW} return !q('.tp video')[0].paused; }}")
    page.keyboard.press(" ")
    page.wait_for_function(STILL)
    page.locator(".tp-speed").select_option("0.5")
    assert page.evaluate(f"() => {{ {SHADOW} return q('.tp video')[0].playbackRate; }}") == 0.5
    screenshot(page, "review-players-frames")


# The most opaque pixel of the drawing layer within 3 px of a point (a line is thin, and smoothed).
INK_PIXEL = f"""([x, y]) => {{ {SHADOW} const c = q('.tp-ink')[0], r = c.getBoundingClientRect();
    const px = c.getContext('2d').getImageData(Math.round((x - r.left) * c.width / r.width) - 3,
                                               Math.round((y - r.top) * c.height / r.height) - 3, 7, 7).data;
    let best = [0, 0, 0, 0];
    for (let i = 0; i < px.length; i += 4) if (px[i + 3] > best[3]) best = [px[i], px[i + 1], px[i + 2], px[i + 3]];
    return best; }}"""


def picture_point(page, fx: float, fy: float) -> tuple[float, float]:
    """The page's coordinates of a point of the picture (fractions of its width and height)."""
    box = page.evaluate(f"""() => {{ {SHADOW} const v = q('.tp video')[0], r = v.getBoundingClientRect();
        const s = Math.min(r.width / v.videoWidth, r.height / v.videoHeight);
        const w = v.videoWidth * s, h = v.videoHeight * s;
        return [r.left + (r.width - w) / 2, r.top + (r.height - h) / 2, w, h]; }}""")
    return box[0] + fx * box[2], box[1] + fy * box[3]


def test_a_reviewer_draws_on_the_frame_and_a_comments_drawing_shows_until_play(page, app_url):
    from playwright.sync_api import expect

    open_app(page, app_url)
    page.get_by_role("button", name="Seek to frame 37").click()
    page.wait_for_function(f"() => {{ {SHADOW} return q('.tp')[0].dataset.frame === '37'; }}")
    page.locator(".tp-draw").click()
    page.locator(".tp-tool[data-tool='rect']").click()
    page.locator(".tp-colour[data-colour='#34c759']").click()
    start, end = picture_point(page, 0.25, 0.25), picture_point(page, 0.75, 0.75)
    page.mouse.move(*start)
    page.mouse.down()
    page.mouse.move(*end, steps=5)
    page.mouse.up()
    page.locator(".tp-tool[data-tool='pen']").click()
    page.mouse.move(*picture_point(page, 0.1, 0.9))
    page.mouse.down()
    page.mouse.move(*picture_point(page, 0.3, 0.8), steps=5)
    page.mouse.up()
    assert page.evaluate(f"() => {{ {SHADOW} return q('.tp')[0].dataset.shapes; }}") == "2"
    # The rectangle's left side, in green.
    red, green, blue, alpha = page.evaluate(INK_PIXEL, list(picture_point(page, 0.25, 0.5)))
    assert alpha > 200 and green > 150 and red < 100, (red, green, blue, alpha)
    page.locator(".tp-undo").click()  # the pen stroke goes
    assert page.evaluate(f"() => {{ {SHADOW} return q('.tp')[0].dataset.shapes; }}") == "1"
    page.locator(".tp-comment").click()
    expect(page.get_by_text("comment drawing rect", exact=True)).to_be_visible()
    expect(page.get_by_text("comment on frame 37", exact=True)).to_be_visible()
    screenshot(page, "review-players-drawn")

    # A comment's drawing, handed back with its frame, is drawn over it; playing on lets it go.
    page.get_by_role("button", name="Show a drawn comment").click()
    page.wait_for_function(f"""() => {{ {SHADOW} const root = q('.tp')[0];
        return root.dataset.frame === '12' && root.dataset.shapes === '1'; }}""")
    red, green, blue, alpha = page.evaluate(INK_PIXEL, list(picture_point(page, 0.1, 0.25)))  # the ellipse's left
    assert alpha > 200 and red > 200 and green > 150 and blue < 100, (red, green, blue, alpha)
    page.evaluate(f"() => {{ {SHADOW} const v = q('.tp video')[0]; v.muted = true; v.play(); }}")
    page.wait_for_function(f"() => {{ {SHADOW} return q('.tp')[0].dataset.shapes === '0'; }}")
    page.evaluate(f"() => {{ {SHADOW} q('.tp video')[0].pause(); }}")


def test_a_range_marked_with_i_and_o_loops_and_goes_with_the_comment(page, app_url):
    from playwright.sync_api import expect

    open_app(page, app_url)
    page.get_by_role("button", name="Seek to frame 37").click()
    page.wait_for_function(f"() => {{ {SHADOW} return q('.tp')[0].dataset.frame === '37'; }}")
    page.locator(".tp").first.focus()
    page.keyboard.press("i")
    for expected in ("38", "39", "40"):
        page.keyboard.press("ArrowRight")
        page.wait_for_function(f"() => {{ {SHADOW} return q('.tp')[0].dataset.frame === '{expected}'; }}")
    page.keyboard.press("o")
    marks = page.evaluate(f"() => {{ {SHADOW} const d = q('.tp')[0].dataset; return [d.rangeIn, d.rangeOut]; }}")
    assert marks == ["37", "40"]
    expect(page.locator(".tp-range-text")).to_have_text("00:00:01:13 – 00:00:01:16 (4 frames)")
    page.locator(".tp-comment").click()
    expect(page.get_by_text("comment range 37-40", exact=True)).to_be_visible()
    # Looping: the frames presented stay in the range (at most one past its end, at the wrap) and it wraps.
    # At a quarter speed a frame lasts 167 ms: the wrap asked on the last frame has that long to land.
    page.evaluate(f"() => {{ {SHADOW} q('.tp video')[0].muted = true; }}")
    page.locator(".tp-speed").select_option("0.25")
    page.locator(".tp-loop").click()
    frames = page.evaluate(f"""() => new Promise((done) => {{ {SHADOW} const v = q('.tp video')[0], seen = [];
        const next = (_now, meta) => {{ seen.push(Math.round(meta.mediaTime * 24));
            if (seen.length < 16) v.requestVideoFrameCallback(next); else {{ v.pause(); done(seen); }} }};
        v.requestVideoFrameCallback(next); }})""")
    assert min(frames) >= 37 and max(frames) <= 41, frames
    wraps = [b for a, b in zip(frames, frames[1:], strict=False) if b < a]
    assert len(wraps) >= 2 and set(wraps) <= {37, 38}, frames  # back to the range's start, again and again
    page.locator(".tp-range-clear").click()
    assert page.evaluate(f"() => {{ {SHADOW} return q('.tp')[0].dataset.rangeIn; }}") == ""

    # Every comment is a mark on the timeline, where it is on the video's 96 frames: a span over a range.
    marks = page.evaluate(f"""() => {{ {SHADOW} return q('.tp-mark').map((b) => {{
        const strip = b.parentElement.getBoundingClientRect(), box = b.getBoundingClientRect();
        return [b.title, b.className, (box.left - strip.left) / strip.width, box.width / strip.width]; }}); }}""")
    assert [(title, kind) for title, kind, _, _ in marks] == [
        ("00:00:00:10 Bo: <b>the sky</b>", "tp-mark tp-drawn"), ("00:00:02:12 Ana: here", "tp-mark tp-resolved")]
    assert abs(marks[0][2] - 10 / 96) < 0.01 and abs(marks[0][3] - 11 / 96) < 0.01, marks
    assert abs(marks[1][2] - 60 / 96) < 0.01, marks
    # Clicking one shows its first frame, paused, with its range marked to loop.
    page.locator(".tp-mark").first.click()
    page.wait_for_function(f"""() => {{ {SHADOW} const root = q('.tp')[0], v = q('.tp video')[0];
        return root.dataset.frame === '10' && v.paused && !v.seeking; }}""")
    expect(page.locator(".tp-range-text")).to_have_text("00:00:00:10 – 00:00:00:20 (11 frames)")

    # A range that ends on the video's last frame loops too (the video ends there instead of going past).
    page.locator(".tp-range-clear").click()
    for frame, key in ((93, "i"), (95, "o")):
        page.evaluate(f"() => {{ {SHADOW} q('.tp video')[0].currentTime = {frame + 0.5} / 24; }}")
        page.wait_for_function(f"() => {{ {SHADOW} return q('.tp')[0].dataset.frame === '{frame}'; }}")
        page.locator(".tp").first.focus()
        page.keyboard.press(key)
    page.locator(".tp-loop").click()
    frames = page.evaluate(f"""() => new Promise((done) => {{ {SHADOW} const v = q('.tp video')[0], seen = [];
        const next = (_now, meta) => {{ seen.push(Math.round(meta.mediaTime * 24));
            if (seen.length < 10) v.requestVideoFrameCallback(next); else {{ v.pause(); done(seen); }} }};
        v.requestVideoFrameCallback(next); }})""")
    assert min(frames) >= 93, frames
    assert sum(b < a for a, b in zip(frames, frames[1:], strict=False)) >= 2, frames


def test_sync_compare_plays_seeks_and_flips_together(page, app_url):
    from playwright.sync_api import expect

    open_app(page, app_url)
    play, seek = page.locator(".sc-play"), page.locator(".sc-seek")
    expect(page.locator(".sc-time")).to_have_text("00:00.00 / 00:04.00")

    play.click()
    page.wait_for_function(f"() => {{ {SHADOW} return q('.sc video')[0].currentTime > 1.0; }}")
    play.click()  # pause
    page.wait_for_function(f"() => {{ {SHADOW} return q('.sc video').every(v => v.paused && !v.seeking); }}")
    leader, follower = times(page)
    assert abs(leader - follower) < 0.02, (leader, follower)  # pausing lines the followers up

    seek.fill("0.5")  # the scrubber: an input event, as a drag gives
    page.wait_for_function(f"""() => {{ {SHADOW}
        return q('.sc video').every(v => !v.seeking && Math.abs(v.currentTime - 0.5) < 0.01); }}""")
    expect(page.locator(".sc-time")).to_have_text("00:00.50 / 00:04.00")

    play.click()
    page.wait_for_function(f"() => {{ {SHADOW} return q('.sc video')[0].currentTime > 1.2; }}")
    # Ten readings of both clocks while they play (one per painted frame), each in one task.
    gaps = playing_gaps(page)
    assert gaps and max(gaps) < 0.1, gaps
    play.click()  # pause
    page.wait_for_function(f"() => {{ {SHADOW} return q('.sc video').every(v => v.paused && !v.seeking); }}")
    screenshot(page, "review-players")

    def shown() -> list[str]:
        return page.evaluate(f"() => {{ {SHADOW} return q('.sc-tile').map(t => getComputedStyle(t).visibility); }}")

    def boxes() -> list[tuple[float, float]]:
        return page.evaluate(f"""() => {{ {SHADOW}
            return q('.sc video').map(v => {{ const r = v.getBoundingClientRect(); return [r.x, r.y]; }}); }}""")

    assert shown() == ["visible", "visible"]
    before = times(page)
    page.locator(".sc-flip").click()
    assert shown() == ["visible", "hidden"]
    assert boxes()[0] == boxes()[1]  # one place
    expect(page.locator(".sc-split")).to_be_visible()
    page.locator(".sc-flip").click()
    assert shown() == ["hidden", "visible"]
    after = times(page)
    assert abs(after[0] - after[1]) < 0.02 and after == before, (before, after)  # same instant, nothing reloaded
    assert page.evaluate(f"() => {{ {SHADOW} return q('video').every(v => v.readyState >= 2); }}")
    screenshot(page, "review-players-flip")

    # Flipped and playing, both go on together; "Side by side" brings both back.
    play.click()
    page.wait_for_function(f"() => {{ {SHADOW} return q('.sc video')[0].currentTime > {after[0] + 0.5}; }}")
    leader, follower = times(page)
    assert abs(leader - follower) < 0.1, (leader, follower)
    play.click()
    page.locator(".sc-split").click()
    assert shown() == ["visible", "visible"]

    # Stepping moves both takes to the same decoded frame.
    seek.fill("1")
    for _ in range(3):
        page.locator(".sc-step[data-step='1']").click()
    page.wait_for_function(f"""() => {{ {SHADOW}
        return q('.sc video').every(v => v.paused && !v.seeking && Math.abs(v.currentTime - 27.5 / 24) < 0.005); }}""")
    assert compare_frames(page) == [27, 27]
    # Wipe: B over A, cut at the divider the reviewer drags; both stay on the frame.
    page.locator(".sc-wipe").click()
    frame = page.locator(".sc-frame").nth(1).bounding_box()
    page.mouse.move(frame["x"] + frame["width"] / 2, frame["y"] + frame["height"] / 2)
    page.mouse.down()
    page.mouse.move(frame["x"] + frame["width"] * 0.25, frame["y"] + frame["height"] / 2, steps=4)
    page.mouse.up()
    wiped = page.evaluate(f"""() => {{ {SHADOW} const grid = q('.sc-grid')[0], b = q('.sc video')[1];
        return [grid.classList.contains('wiped'), Number(grid.dataset.wipe), getComputedStyle(b).clipPath,
                q('.sc-tile').map(t => t.classList.contains('hidden'))]; }}""")
    assert wiped[0] and abs(wiped[1] - 0.25) < 0.02 and wiped[2].startswith("inset(0px 0px 0px 25"), wiped
    assert wiped[3] == [False, False]  # both drawn, one over the other
    screenshot(page, "review-players-wipe")
    page.locator(".sc-step[data-step='-1']").click()
    page.wait_for_function(f"""() => {{ {SHADOW}
        return q('.sc video').every(v => v.paused && !v.seeking && Math.abs(v.currentTime - 26.5 / 24) < 0.005); }}""")
    assert compare_frames(page) == [26, 26]
    # Flip from the wipe: one take at a time, the one shown has its picture (no black frame) on that frame.
    page.locator(".sc-flip").click()
    for shown in (0, 1):
        visible = page.evaluate(f"() => {{ {SHADOW} return q('.sc-tile').map(t => !t.classList.contains('hidden')); }}")
        assert visible == [shown == 0, shown == 1], visible
        assert compare_frames(page)[shown] == 26
        page.locator(".sc-flip").click()


def compare_frames(page) -> list[int]:
    """The frame each video of the comparison shows, read from its picture (the bar's left edge, as
    DECODED_FRAME); -1 for a picture with no bar (black, or not drawn)."""
    return page.evaluate(f"""() => {{ {SHADOW} return q('.sc video').map(v => {{
        const c = document.createElement('canvas'); c.width = v.videoWidth; c.height = v.videoHeight;
        const g = c.getContext('2d'); g.drawImage(v, 0, 0);
        const row = g.getImageData(0, c.height >> 1, c.width, 1).data;
        for (let x = 0; x < c.width; x++) if (row[4 * x] > 200 && row[4 * x + 1] > 200 && row[4 * x + 2] > 200)
            return Math.round(x / ((c.width - 16) / {FPS * SECONDS - 1}));
        return -1; }}); }}""")


def test_on_a_phone_the_players_fit_the_screen_and_a_landscape_take_is_drawn_short(page, app_url):
    """At 390 px the comparison's control bar ran 11 px off the screen ("A/B flip" cut), its position
    slider was squeezed to about 60 px, and 16:9 takes sat in tall black boxes 220 px high."""
    page.set_viewport_size({"width": 390, "height": 844})
    open_app(page, app_url)
    bar = page.evaluate(f"""() => {{ {SHADOW}
        const inside = (el) => el.getBoundingClientRect().right <= document.documentElement.clientWidth;
        return {{ all_inside: q('.sc-bar > *').filter(e => !e.hidden).every(inside),
                  seek_width: q('.sc-seek')[0].getBoundingClientRect().width }}; }}""")
    assert bar["all_inside"], bar
    assert bar["seek_width"] >= 150, bar
    boxes = page.evaluate(f"""() => {{ {SHADOW}
        return q('video').map(v => {{ const r = v.getBoundingClientRect(); return [r.width, r.height]; }}); }}""")
    assert len(boxes) == 3  # the timecode player's too
    for width, height in boxes:
        assert abs(width / height - WIDTH / HEIGHT) < 0.05, boxes  # the take's own shape, no black box
    screenshot(page, "review-players-phone")
