"""A video player with a "Comment at 00:02.13" button: the reviewer stops on a frame, presses the
button, and Python gets the time to attach a comment to; a comment's timecode, passed back as
`seek_to`, takes the player there.

Built with Streamlit's Custom Components v2 (`st.components.v2.component`): the component lives in
the app's page (no iframe), its HTML and JavaScript run once per mount and again only when the
data from Python changes, and it answers with a state value (`position`, kept across runs) and a
trigger value (`comment`, for one run only). The HTML, CSS and JavaScript are inline strings here
rather than files: CCv2 loads asset files only from an installed package that declares an
`asset_dir` in its pyproject manifest, and a hundred lines do not justify that machinery; one
module keeps the Python and the JavaScript that must agree with it (the timecode format) side by
side.

What it plays: a URL string (the live result link, a kept copy's presigned URL, a `/media/...` URL)
as is, or a `Path` of a kept file on this machine, which Streamlit's media file manager serves
exactly as `st.video(path)` does (the file is read into memory and served at
`/media/<hash of its bytes>.mp4`, with range requests for seeking; the URL depends only on the
bytes, so a rerun does not reload the player).

Reruns: the JavaScript reports `position` on pause and after a seek, never on every time update,
so playing does not rerun the script; the button's label follows the video on every frame in the
browser alone.
"""

from __future__ import annotations

import mimetypes
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import streamlit as st
from streamlit import runtime

from components.common import frame_ink, frame_range, live_sync
from dailies.timecodes import format_timecode, is_frame

__all__ = ["PlayerState", "format_timecode", "playable_url", "timecode_player"]


@dataclass(frozen=True)
class PlayerState:
    """What the player said on this run."""

    comment_at: float | None  # seconds on the video when "Comment at" was pressed, on that run only
    position: float | None  # seconds where the video was last paused or sought to; None until then
    comment_frame: int | None = None  # the frame shown when "Comment at" was pressed (decoded, not computed)
    # The shapes drawn on that frame, as the browser sent them (the journal checks them when saving).
    comment_drawing: list[dict[str, Any]] | None = None
    comment_out_frame: int | None = None  # the last frame of the range marked (I, O), when one was
    frame: int | None = None  # the frame where the video was last paused or sought to
    live_changed: bool = False  # a live session's presenter changed (this run only): ask who presents now


_HTML_TEMPLATE = """
<div class="tp" tabindex="0"
     title="← → a frame, space play / pause, J back a second, K pause, L play (again: faster), I and O a range">
  <div class="tp-stage"><video class="tp-video" controls preload="auto" playsinline></video>
    <canvas class="tp-ink"></canvas>LIVE_POINTER</div>
  <div class="tp-bar">
    <button type="button" class="tp-step" data-step="-1" title="Previous frame (←)">◀</button>
    <span class="tp-tc" title="The frame shown: hours, minutes, seconds, frames">00:00:00:00</span>
    <button type="button" class="tp-step" data-step="1" title="Next frame (→)">▶</button>
    <select class="tp-speed" title="Speed">
      <option value="0.25">0.25×</option><option value="0.5">0.5×</option><option value="1" selected>1×</option>
      <option value="1.5">1.5×</option><option value="2">2×</option>
    </select>
    <button type="button" class="tp-draw" aria-pressed="false" title="Draw on this frame"
            aria-label="Draw">✏️</button>
    <button type="button" class="tp-comment" title="Comment on the frame shown">Comment at 00:00.00</button>
  </div>
  RANGE_BAR
  INK_TOOLS
  LIVE_BANNER
</div>
"""

# The --st-* custom properties are the app's theme, which CCv2 sets on the component's host (they
# reach into the shadow root because custom properties inherit).
_HTML = (_HTML_TEMPLATE.replace("INK_TOOLS", frame_ink.HTML).replace("RANGE_BAR", frame_range.HTML)
         .replace("LIVE_POINTER", live_sync.POINTER_HTML).replace("LIVE_BANNER", live_sync.BANNER_HTML))

_CSS = """
.tp { display: flex; flex-direction: column; gap: 0.25rem; font-family: var(--st-font); }
.tp-video { display: block; width: 100%; height: var(--tp-height, auto); background: #000;
            border-radius: var(--st-base-radius); object-fit: contain; }
/* The fixed height keeps a grid of cards in line; on a phone it would draw a landscape take in a tall
   black box, so there the take keeps its own shape, no taller than that height. */
@media (max-width: 640px) {
  .tp-video { height: auto; max-height: var(--tp-height, none); }
}
/* Fitted (no height given, a maximum instead): the take's own shape as wide as the column, or narrower
   and centred where that would be taller than the maximum, so there is never a black bar. */
.tp-fit .tp-stage { align-self: center; width: min(100%, calc(var(--tp-max-height) * var(--tp-aspect))); }
.tp-fit .tp-video { height: auto; aspect-ratio: var(--tp-aspect); width: 100%; }
/* A player's control bar, no taller than it needs: in a grid of cards the picture is what counts. */
.tp-comment { font: inherit; font-size: var(--st-base-font-size); font-variant-numeric: tabular-nums;
              color: var(--st-text-color); background: var(--st-background-color);
              border: 1px solid var(--st-border-color); border-radius: var(--st-button-radius);
              padding: 0.125rem 0.75rem; min-height: 2rem; cursor: pointer; }
.tp-comment:hover { border-color: var(--st-primary-color); color: var(--st-primary-color); }
.tp:focus-visible { outline: 2px solid var(--st-primary-color); outline-offset: 2px; }
.tp-bar { display: flex; align-items: center; gap: 0.375rem; flex-wrap: wrap; }
/* The bar holds on one line in a card two a row: compact controls, the readout in small type. */
.tp-bar { gap: 0.25rem; }
.tp-tc { font-variant-numeric: tabular-nums; font-size: 0.875em; color: var(--st-text-color);
         text-align: center; padding: 0 0.125rem; }
.tp-step, .tp-speed { font: inherit; font-size: var(--st-base-font-size); color: var(--st-text-color);
                      background: var(--st-background-color); border: 1px solid var(--st-border-color);
                      border-radius: var(--st-button-radius); min-height: 2rem; padding: 0 0.375rem; cursor: pointer; }
.tp-step:hover { border-color: var(--st-primary-color); color: var(--st-primary-color); }
""" + frame_ink.CSS + frame_range.CSS + live_sync.CSS + """
.tp-comment:active { background: var(--st-primary-color); color: #fff; }
"""

# The renderer runs on mount and again each time `data` changes, on the same DOM (CCv2 rebuilds the
# HTML only when the HTML itself changes) and without calling the previous cleanup: so listeners are
# added once per root element (remembered in a WeakMap) and each call only applies the new data.
# `fmt` must format exactly as dailies/timecodes.format_timecode (half up to the hundredth).
_JS = frame_ink.JS + frame_range.JS + live_sync.JS + r"""
const mounts = new WeakMap();

function fmt(seconds) {
    const hundredths = Math.floor(Math.max(0, seconds || 0) * 100 + 0.5);
    const two = (n) => String(n).padStart(2, "0");
    const rest = hundredths % 6000;
    return `${two(Math.floor(hundredths / 6000))}:${two(Math.floor(rest / 100))}.${two(rest % 100)}`;
}

const hundredth = (seconds) => Math.floor(seconds * 100 + 0.5) / 100;

// HH:MM:SS:FF of a frame at the nominal rate, as dailies/timecodes.frame_timecode writes it.
function frameTimecode(frame, fps) {
    const rate = Math.max(1, Math.round(fps));
    const two = (n) => String(n).padStart(2, "0");
    const seconds = Math.floor(frame / rate);
    const hours = Math.floor(seconds / 3600), minutes = Math.floor(seconds / 60) % 60;
    return `${two(hours)}:${two(minutes)}:${two(seconds % 60)}:${two(frame % rate)}`;
}

function setUp(root) {
    const video = root.querySelector("video");
    const button = root.querySelector(".tp-comment");
    const readout = root.querySelector(".tp-tc");
    const speed = root.querySelector(".tp-speed");
    const m = { root, video, ink: root.querySelector(".tp-ink"), api: null, lastSeek: undefined, sentPosition: null,
                frame: 0, fps: 24, shown: 0 };
    // The frame on screen: the decoder's own (requestVideoFrameCallback's mediaTime is the presented
    // frame's timestamp), else the one the time falls in.
    const frameOfTime = () => Math.floor(video.currentTime * m.fps + 1e-6);
    const label = () => {
        button.textContent = `Comment at ${fmt(video.currentTime)}`;
        readout.textContent = frameTimecode(m.shown, m.fps);
        root.dataset.frame = String(m.shown);
    };
    if ("requestVideoFrameCallback" in video) {
        const presented = (_now, meta) => {
            m.shown = Math.round(meta.mediaTime * m.fps);
            label();
            video.requestVideoFrameCallback(presented);
        };
        video.requestVideoFrameCallback(presented);
    }
    const fallback = () => { if (!("requestVideoFrameCallback" in video)) m.shown = frameOfTime(); label(); };
    // While playing, the label follows every painted frame (timeupdate fires only ~4 times a second).
    const follow = () => { fallback(); m.frame = video.paused ? 0 : requestAnimationFrame(follow); };
    const report = () => {
        const position = hundredth(video.currentTime);
        if (position === m.sentPosition) return;  // a rerun only for news
        m.sentPosition = position;
        m.api.setStateValue("frame", frameOfTime());  // for the page's address (a link to this frame)
        m.api.setStateValue("position", position);
    };
    video.addEventListener("play", () => { cancelAnimationFrame(m.frame); m.frame = requestAnimationFrame(follow); });
    for (const name of ["timeupdate", "seeking", "loadedmetadata", "emptied"]) video.addEventListener(name, fallback);
    video.addEventListener("loadedmetadata", () => {  // its own shape, where its height is not fixed
        if (video.videoWidth && video.videoHeight) {
            video.style.aspectRatio = `${video.videoWidth} / ${video.videoHeight}`;
            root.style.setProperty("--tp-aspect", String(video.videoWidth / video.videoHeight));
        }
    });
    video.addEventListener("pause", () => { fallback(); report(); });
    video.addEventListener("seeked", () => { fallback(); report(); });
    video.addEventListener("ratechange", () => { speed.value = String(video.playbackRate); });
    // The time sent is the one on the label, so the comment shows what the reviewer clicked; the frame
    // is the one on screen.
    button.addEventListener("click", () => {
        // On a range, the comment is on all of it: its first frame and its last.
        const ranged = m.range.in !== null && m.range.out !== null;
        const seconds = ranged ? (m.range.in + 0.5) / m.fps : video.currentTime;
        m.api.setTriggerValue("comment", { seconds: hundredth(seconds), frame: ranged ? m.range.in : m.shown,
            out_frame: ranged ? m.range.out : null, drawing: m.shapes.length ? m.shapes : null });
        m.drawMode(false);  // drawn: the tools fold away (the shapes stay on the frame) for the comment's box
    });
    setUpInk(m);
    setUpRange(m);
    m.step = (by) => {
        video.pause();
        m.shapes = []; m.shownShapes = []; renderInk(m);  // a drawing belongs to its frame
        const last = video.duration ? Math.max(0, Math.ceil(video.duration * m.fps) - 1) : Infinity;
        seekFrame(video, Math.min(last, Math.max(0, m.shown + by)), m.fps);
    };
    for (const stepper of root.querySelectorAll(".tp-step")) {
        stepper.addEventListener("click", () => m.step(Number(stepper.dataset.step)));
    }
    speed.addEventListener("change", () => { video.playbackRate = Number(speed.value); });
    root.addEventListener("keydown", (event) => {
        if (event.target !== root && event.target !== video) return;  // a select's own keys stay its own
        const key = event.key.toLowerCase();
        if (key === "arrowleft" || key === "arrowright") m.step(key === "arrowleft" ? -1 : 1);
        else if (key === " ") { if (video.paused) video.play(); else video.pause(); }
        else if (key === "k") video.pause();
        else if (key === "l") {
            if (video.paused) { video.playbackRate = 1; video.play(); }
            else video.playbackRate = Math.min(2, video.playbackRate * 2);
        } else if (key === "j") { video.pause(); video.currentTime = Math.max(0, video.currentTime - 1); }
        else if (key === "i") m.markIn();
        else if (key === "o") m.markOut();
        else return;
        event.preventDefault();
        event.stopPropagation();
    });
    m.cleanup = () => { cancelAnimationFrame(m.frame); m.liveStopped = true; };
    return m;
}

// A frame is sought to its middle: the player then shows that frame whatever the rounding of its
// timestamps, where its start could show the one before.
function seekFrame(video, frame, fps) {
    const target = (frame + 0.5) / fps;
    if (video.readyState >= 1) video.currentTime = target;
    else video.addEventListener("loadedmetadata", () => { video.currentTime = target; }, { once: true });
}

// A timecode is kept to the hundredth, so it may lie up to half a hundredth before the frame it was
// taken on, and a video shows the last frame at or before its time: seeking to the hundredth itself
// showed the frame before. Just under half a hundredth later is that frame (any rate up to 100 fps)
// and still reads as the same hundredth.
const INTO_THE_FRAME = 0.0049;

function seek(video, seconds) {
    video.pause();
    const target = seconds + INTO_THE_FRAME;
    if (video.readyState >= 1) {
        video.currentTime = target;
    } else {  // no metadata yet: seek as soon as there is
        video.addEventListener("loadedmetadata", () => { video.currentTime = target; }, { once: true });
    }
}

export default function (component) {
    const { data, parentElement } = component;
    const root = parentElement.querySelector(".tp");
    let m = mounts.get(root);
    if (!m) {
        m = setUp(root);
        mounts.set(root, m);
    }
    m.api = component;
    const video = m.video;
    if (data.height) root.style.setProperty("--tp-height", `${data.height}px`);
    else root.style.removeProperty("--tp-height");
    root.classList.toggle("tp-fit", Boolean(data.max_height) && !data.height);
    if (data.max_height) root.style.setProperty("--tp-max-height", data.max_height);
    // Until the video says its own shape, the one Python expects (the record's ratio), else 16:9.
    if (!video.videoWidth) root.style.setProperty("--tp-aspect", String(data.aspect || 16 / 9));
    // A follower's player shows the version the presenter's does, whatever the page drew it with.
    const followed = data.live && data.live.role === "follow" && root.dataset.liveVersion;
    if (!followed && video.getAttribute("src") !== data.url) video.setAttribute("src", data.url);
    m.fps = data.fps || 24;
    // Seek only when Python sends a new value: the same value on later runs is not a new request. A
    // frame, when given, is where to go; the time is for a comment made before frames were kept.
    const frame = data.seek_frame ?? null, target = data.seek_to ?? null;
    const asked = frame !== null ? `f${frame}` : target;
    if (asked !== m.lastSeek) {
        m.lastSeek = asked;
        if (frame !== null) { video.pause(); seekFrame(video, frame, m.fps); }
        else if (target !== null) seek(video, target);
        // A comment's drawing, over its frame until the video plays again; one being drawn belonged to
        // the frame left.
        m.shownShapes = data.show_drawing || [];
        m.shapes = [];
        // A comment on a range shows its span.
        if (frame !== null && data.show_out_frame !== null && data.show_out_frame !== undefined) {
            m.range = { in: frame, out: data.show_out_frame, loop: false };
        }
        renderRange(m);
        renderInk(m);
    }
    const marks = `${m.fps} ${JSON.stringify(data.marks || [])}`;  // a new rate moves every mark
    if (marks !== m.marksSent) { m.marksSent = marks; m.marks = data.marks || []; renderMarks(m); }
    if (data.live) liveStart(m, data.live);
    return m.cleanup;
}
"""

_player = st.components.v2.component("dailies.timecode_player", html=_HTML, css=_CSS, js=_JS)


def _ignore() -> None:
    """CCv2 reports a state or trigger value only for names given an on_<name>_change callback."""


def playable_url(media: str | Path, coordinates: str) -> str:
    """The URL a <video> can load: a string is taken as a URL already (http(s), or a Streamlit
    `/media/` URL) and passed through; a Path is handed to Streamlit's media file manager, which
    serves it for this session like `st.video(path)` does. `coordinates` names the slot the file
    occupies for the session (a later run that puts another file there lets the old one go);
    it must be unique per player. Empty when there is no Streamlit runtime (a bare script run)."""
    if not isinstance(media, Path):
        return str(media)
    if not runtime.exists():
        return ""
    mimetype = mimetypes.guess_type(media.name)[0] or "video/mp4"
    return runtime.get_instance().media_file_mgr.add(str(media), mimetype, coordinates)


def timecode_player(url: str | Path, *, key: str, seek_to: float | None = None, height: int | None = None,
                    max_height: str | None = None, aspect: float | None = None, fps: float | None = None,
                    seek_frame: int | None = None, show_drawing: list[dict[str, Any]] | None = None,
                    show_out_frame: int | None = None, marks: list[dict[str, Any]] | None = None,
                    live: dict[str, Any] | None = None) -> PlayerState:
    """Draw the player of `url` (see `playable_url`) and its "Comment at mm:ss.cc" button.

    `seek_to`: a time in seconds to show, paused. The player goes there when the value differs from
    the one it received on the previous run (and on its first run), so a caller that keeps the value
    does not pin the video; to go to the same time again, pass None for a run in between (hand the
    value over once, e.g. `st.session_state.pop(...)`). `height`: the video's height in pixels (the
    picture is letterboxed); None lets the width decide. `max_height` (a CSS length, such as "70vh"),
    without `height`: the video takes its own shape (`aspect`, width over height, until it has loaded)
    as wide as the column allows, narrower and centred where it would be taller. `key` identifies the
    player across runs and owns its `position`: give each video its own key (e.g. with the task id) so
    another video does not start with the last one's position. `fps`: the video's frame rate (its
    record's; 24 when unknown), for the frame readout, stepping and the comment's frame. `seek_frame`:
    a frame to show, paused (as `seek_to`, which it overrides). `show_drawing`: shapes drawn over the
    frame sought to (a comment's drawing), until the video plays. `show_out_frame`: with `seek_frame`,
    the last frame of the comment's range, shown as a span. `marks`: the version's comments on the
    timeline (components.common.comments.timeline_marks). `live`: the player presents or follows a live
    session (components/common/live_sync.py: role, the session's URLs and tokens, the version shown).
    """
    result = _player(
        key=key,
        data={
            "url": playable_url(url, f"dailies.timecode_player[{key}]"),
            "seek_to": None if seek_to is None else float(seek_to),
            "height": height,
            "max_height": max_height,
            "aspect": aspect,
            "fps": fps,
            "seek_frame": seek_frame,
            "show_drawing": show_drawing,
            "show_out_frame": show_out_frame,
            "marks": marks or [],
            "live": live,
        },
        on_live_presenter_change=_ignore,
        on_live_lost_change=_ignore,
        on_position_change=_ignore,
        on_frame_change=_ignore,
        on_comment_change=_ignore,
    )
    comment, position = result.get("comment"), result.get("position")
    drawing = comment.get("drawing") if isinstance(comment, dict) else None
    return PlayerState(comment_at=_comment_seconds(comment), position=None if position is None else float(position),
                       comment_frame=_comment_frame(comment),
                       comment_drawing=drawing if isinstance(drawing, list) else None,
                       comment_out_frame=_comment_frame(comment, "out_frame"),
                       frame=_comment_frame({"frame": result.get("frame")}),
                       live_changed=bool(result.get("live_presenter") or result.get("live_lost")))


def _comment_seconds(comment: object) -> float | None:
    """The seconds of a "Comment at" press: {"seconds", "frame"} from this player, a number from before."""
    value = comment.get("seconds") if isinstance(comment, dict) else comment
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def _comment_frame(comment: object, name: str = "frame") -> int | None:
    frame = comment.get(name) if isinstance(comment, dict) else None
    return frame if is_frame(frame) else None
