"""Two to four takes side by side, played as one: a single control bar (play/pause, a scrubber, the
time) drives every video, and the others follow the first (the leader). With two takes, "A/B flip"
stacks them in one place and shows one at a time, at the same instant of both, and "Wipe" shows B over A
cut by a line the reviewer drags; ◀ ▶ (or ← → on the focused bar) step every take a frame at once.

All of it happens in the browser, with no round trip to Python: syncing through script reruns would
stutter. While playing, a follower more than 0.05 s away from the leader is put back on it; the
check runs four times a second rather than on every frame, because a seek takes tens of
milliseconds and a follower corrected on every frame would never stop seeking, and the correction
aims where the leader will be once the seek is done (the last seeks' measured duration). Only the
leader's sound is heard; the others are muted. The flip keeps both videos loaded and playing and
only switches CSS visibility, so it is instant and needs no reload.

Built with Streamlit's Custom Components v2 (`st.components.v2.component`); the HTML, CSS and
JavaScript are inline strings for the reasons given in timecode_player.py (CCv2 loads files only
from an installed package with a manifest; one module keeps it together). Videos are given as in
`timecode_player`: URL strings as they are, `Path`s served by Streamlit's media file manager.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import streamlit as st

from components.common.timecode_player import playable_url

__all__ = ["sync_compare"]

MIN_VIDEOS, MAX_VIDEOS = 2, 4

_HTML = """
<div class="sc" tabindex="0">
  <div class="sc-grid"></div>
  <div class="sc-bar">
    <button type="button" class="sc-play" title="Play or pause every video">&#9654; Play</button>
    <input type="range" class="sc-seek" min="0" max="0" step="0.01" value="0" aria-label="Position of every video">
    <span class="sc-time">00:00.00 / 00:00.00</span>
    <button type="button" class="sc-step" data-step="-1" title="Every take a frame back (←)">◀</button>
    <button type="button" class="sc-step" data-step="1" title="Every take a frame on (→)">▶</button>
    <button type="button" class="sc-flip"
            title="Show one take at a time in the same place; press again to switch">A/B flip</button>
    <button type="button" class="sc-wipe" title="One take over the other, split by a line you drag">Wipe</button>
    <button type="button" class="sc-split" title="Show the takes next to each other">Side by side</button>
  </div>
</div>
"""

_CSS = """
.sc { display: flex; flex-direction: column; gap: 0.5rem; font-family: var(--st-font);
      color: var(--st-text-color); font-size: var(--st-base-font-size); }
.sc-grid { display: grid; gap: 0.5rem; }
.sc-grid.flipped, .sc-grid.wiped { grid-template-columns: minmax(0, 1fr) !important; }
.sc-grid.flipped .sc-tile, .sc-grid.wiped .sc-tile { grid-area: 1 / 1; }
.sc-frame { position: relative; }
/* Wipe: B over A, cut at the divider; A's label on the left, B's on the right. */
.sc-grid.wiped .sc-tile:nth-child(2) video { clip-path: inset(0 0 0 var(--sc-wipe, 50%)); }
.sc-grid.wiped .sc-tile:nth-child(2) .sc-label { text-align: right; }
.sc-divider { display: none; position: absolute; top: 0; bottom: 0; left: var(--sc-wipe, 50%); width: 0.25rem;
              margin-left: -0.125rem; background: #fff; box-shadow: 0 0 0.25rem #000; cursor: ew-resize;
              touch-action: none; }
.sc-grid.wiped .sc-tile:nth-child(2) .sc-divider { display: block; }
.sc-tile.hidden { visibility: hidden; }
.sc-tile { display: flex; flex-direction: column; gap: 0.25rem; min-width: 0; }
.sc-label { font-size: 0.875em; opacity: 0.8; white-space: nowrap; overflow: hidden; text-overflow: ellipsis; }
.sc-tile video { display: block; width: 100%; aspect-ratio: 16 / 9; background: #000;
                 border-radius: var(--st-base-radius); object-fit: contain; }
/* On a phone the bar wraps: the position slider takes a line of its own rather than shrinking to a
   few pixels, and no button runs off the screen. */
.sc-bar { display: flex; flex-wrap: wrap; align-items: center; gap: 0.5rem 0.75rem; }
.sc-step, .sc-wipe { font: inherit; }
.sc-seek { flex: 1 1 10rem; min-width: 4rem; accent-color: var(--st-primary-color); }
.sc-time { font-variant-numeric: tabular-nums; white-space: nowrap; }
.sc button { font: inherit; color: var(--st-text-color); background: var(--st-background-color);
             border: 1px solid var(--st-border-color); border-radius: var(--st-button-radius);
             padding: 0.25rem 0.75rem; min-height: 2.5rem; cursor: pointer; white-space: nowrap; }
.sc button:hover { border-color: var(--st-primary-color); color: var(--st-primary-color); }
.sc button[hidden] { display: none; }
"""

# As in timecode_player.py: the renderer runs again, on the same DOM and without the previous
# cleanup, whenever `data` changes; listeners are added once per root element (a WeakMap) and the
# videos are rebuilt only when the URLs or labels change.
_JS = r"""
const mounts = new WeakMap();
const DRIFT = 0.05;     // seconds a follower may be away from the leader while playing
const CHECK_MS = 250;   // how often the drift is checked while playing
const LETTERS = "ABCD";

function fmt(seconds) {
    const hundredths = Math.floor(Math.max(0, seconds || 0) * 100 + 0.5);
    const two = (n) => String(n).padStart(2, "0");
    const rest = hundredths % 6000;
    return `${two(Math.floor(hundredths / 6000))}:${two(Math.floor(rest / 100))}.${two(rest % 100)}`;
}

function setUp(root) {
    const q = (sel) => root.querySelector(sel);
    const m = { grid: q(".sc-grid"), play: q(".sc-play"), seek: q(".sc-seek"), time: q(".sc-time"),
                flip: q(".sc-flip"), split: q(".sc-split"), wipe: q(".sc-wipe"), videos: [], loaded: null,
                dragging: false, frame: 0, lastCheck: 0, seekLead: 0, flipped: false, wiped: false, shown: 0,
                fps: 24 };
    m.play.addEventListener("click", () => {
        const leader = m.videos[0];
        if (!leader) return;
        if (leader.paused || leader.ended) playAll(m); else pauseAll(m);
    });
    m.seek.addEventListener("pointerdown", () => { m.dragging = true; });
    m.seek.addEventListener("change", () => { m.dragging = false; });
    m.seek.addEventListener("input", () => seekAll(m, Number(m.seek.value)));
    m.flip.addEventListener("click", () => {
        if (m.flipped) m.shown = 1 - m.shown; else { m.flipped = true; m.wiped = false; m.shown = 0; }
        layout(m);
    });
    m.wipe.addEventListener("click", () => { m.wiped = true; m.flipped = false; layout(m); });
    m.split.addEventListener("click", () => { m.flipped = false; m.wiped = false; layout(m); });
    for (const stepper of root.querySelectorAll(".sc-step")) {
        stepper.addEventListener("click", () => step(m, Number(stepper.dataset.step)));
    }
    root.addEventListener("keydown", (event) => {
        if (event.target !== root || (event.key !== "ArrowLeft" && event.key !== "ArrowRight")) return;
        step(m, event.key === "ArrowLeft" ? -1 : 1);
        event.preventDefault();
        event.stopPropagation();
    });
    m.cleanup = () => cancelAnimationFrame(m.frame);
    return m;
}

function layout(m) {
    const canFlip = m.videos.length === 2;
    if (!canFlip) { m.flipped = false; m.wiped = false; }
    m.grid.classList.toggle("flipped", m.flipped);
    m.grid.classList.toggle("wiped", m.wiped);
    m.grid.style.gridTemplateColumns = `repeat(${m.videos.length}, minmax(0, 1fr))`;
    [...m.grid.children].forEach((tile, i) => tile.classList.toggle("hidden", m.flipped && i !== m.shown));
    m.flip.hidden = !canFlip;
    m.wipe.hidden = !canFlip || m.wiped;
    m.split.hidden = !m.flipped && !m.wiped;
}

// Every take a frame back or on, paused, each on the middle of that frame (the same frame of each).
function step(m, by) {
    const leader = m.videos[0];
    if (!leader) return;
    for (const video of m.videos) video.pause();
    const frame = Math.max(0, Math.floor(leader.currentTime * m.fps + 1e-6) + by);
    seekAll(m, (frame + 0.5) / m.fps);
}

// Dragging the wipe's divider (or anywhere on the stacked pictures) moves the cut.
function dragWipe(m, frame) {
    const place = (event) => {
        const r = frame.getBoundingClientRect();
        const share = Math.min(1, Math.max(0, (event.clientX - r.left) / r.width));
        m.grid.style.setProperty("--sc-wipe", `${(100 * share).toFixed(2)}%`);
        m.grid.dataset.wipe = share.toFixed(3);
    };
    frame.addEventListener("pointerdown", (event) => {
        if (!m.wiped) return;
        frame.setPointerCapture(event.pointerId);
        place(event);
        const move = (e) => place(e);
        frame.addEventListener("pointermove", move);
        frame.addEventListener("pointerup", () => frame.removeEventListener("pointermove", move), { once: true });
    });
}

function show(m) {
    const leader = m.videos[0];
    if (!leader) return;
    const duration = Number.isFinite(leader.duration) ? leader.duration : 0;
    m.seek.max = String(duration);
    if (!m.dragging) m.seek.value = String(leader.currentTime);
    m.time.textContent = `${fmt(leader.currentTime)} / ${fmt(duration)}`;
    m.play.innerHTML = leader.paused || leader.ended ? "&#9654; Play" : "&#10074;&#10074; Pause";
}

function align(m, target) {
    for (const follower of m.videos.slice(1)) {
        if (Math.abs(follower.currentTime - target) > 0.01) follower.currentTime = target;
    }
}

function seekAll(m, seconds) {
    for (const video of m.videos) video.currentTime = seconds;
    show(m);
}

function playAll(m) {
    const leader = m.videos[0];
    if (leader.ended) seekAll(m, 0);
    align(m, leader.currentTime);
    for (const video of m.videos) video.play().catch(() => {});  // a refused play shows as paused
}

function pauseAll(m) {
    for (const video of m.videos) video.pause();
    align(m, m.videos[0].currentTime);
}

// While the leader plays: the bar follows every frame, the followers are checked every CHECK_MS.
function follow(m, now) {
    const [leader, ...followers] = m.videos;
    show(m);
    if (!leader || leader.paused) { m.frame = 0; return; }
    if (now - m.lastCheck >= CHECK_MS) {
        m.lastCheck = now;
        for (const f of followers) {
            if (f.seeking || f.readyState < 2) continue;  // busy: a new seek would only delay it
            if (f.ended && leader.currentTime >= f.duration) continue;  // a shorter take waits at its end
            if (Math.abs(f.currentTime - leader.currentTime) > DRIFT) {
                f.dataset.seekStart = String(performance.now());
                f.currentTime = leader.currentTime + m.seekLead * leader.playbackRate;
            }
            if (f.paused && !f.ended) f.play().catch(() => {});
        }
    }
    m.frame = requestAnimationFrame((t) => follow(m, t));
}

function build(m, urls, labels, height) {
    cancelAnimationFrame(m.frame);
    m.frame = 0;
    for (const video of m.videos) { video.pause(); video.removeAttribute("src"); video.load(); }
    m.grid.replaceChildren();
    m.videos = urls.map((url, i) => {
        const tile = document.createElement("div");
        tile.className = "sc-tile";
        const label = document.createElement("div");
        label.className = "sc-label";
        label.textContent = `${LETTERS[i]} · ${labels[i]}`;
        label.title = labels[i];
        const video = document.createElement("video");
        video.preload = "auto";
        video.playsInline = true;
        video.muted = i > 0;  // one soundtrack: the leader's
        // At most `height` tall, and as wide as the tile: a landscape take on a narrow screen is drawn
        // short instead of in a tall black box (its shape is known once its metadata is).
        video.style.maxHeight = `${height}px`;
        video.addEventListener("loadedmetadata", () => {
            if (video.videoWidth && video.videoHeight) {
                video.style.aspectRatio = `${video.videoWidth} / ${video.videoHeight}`;
            }
        });
        video.src = url;
        const frame = document.createElement("div");
        frame.className = "sc-frame";
        const divider = document.createElement("div");
        divider.className = "sc-divider";
        frame.append(video, divider);
        if (i === 1) dragWipe(m, frame);
        tile.append(label, frame);
        m.grid.append(tile);
        return video;
    });
    const leader = m.videos[0];
    for (const name of ["loadedmetadata", "durationchange", "timeupdate", "seeked", "pause"]) {
        leader.addEventListener(name, () => show(m));
    }
    leader.addEventListener("play", () => {
        cancelAnimationFrame(m.frame);
        m.frame = requestAnimationFrame((t) => follow(m, t));
    });
    leader.addEventListener("ended", () => pauseAll(m));
    for (const f of m.videos.slice(1)) {
        f.addEventListener("seeked", () => {  // learn how long a correcting seek takes
            if (!f.dataset.seekStart) return;
            const took = (performance.now() - Number(f.dataset.seekStart)) / 1000;
            delete f.dataset.seekStart;
            m.seekLead = Math.min(0.5, 0.5 * m.seekLead + 0.5 * took);
        });
    }
    m.flipped = m.flipped && m.videos.length === 2;
    m.wiped = m.wiped && m.videos.length === 2;
    m.shown = 0;
    layout(m);
    show(m);
}

export default function (component) {
    const { data, parentElement } = component;
    const root = parentElement.querySelector(".sc");
    let m = mounts.get(root);
    if (!m) {
        m = setUp(root);
        mounts.set(root, m);
    }
    m.fps = data.fps || 24;
    const wanted = JSON.stringify([data.urls, data.labels, data.height]);
    if (wanted !== m.loaded) {
        m.loaded = wanted;
        build(m, data.urls, data.labels, data.height);
    }
    return m.cleanup;
}
"""

_compare = st.components.v2.component("dailies.sync_compare", html=_HTML, css=_CSS, js=_JS)


def sync_compare(urls: Sequence[str | Path], labels: Sequence[str], *, key: str, height: int = 240,
                 fps: float = 24.0) -> None:
    """Draw 2 to 4 videos side by side (each `height` pixels tall, letterboxed) under one control
    bar; the first leads. `labels` name them, one each (shown as "A · label", "B · label", ...).
    Each of `urls` is a URL string or a Path of a file on this machine (see
    `timecode_player.playable_url`). Nothing comes back to Python: the component keeps no state
    that a script would use, and so causes no reruns.

    Raises ValueError for fewer than 2 or more than 4 videos, or a label count that differs."""
    if not MIN_VIDEOS <= len(urls) <= MAX_VIDEOS:
        raise ValueError(f"sync_compare shows {MIN_VIDEOS} to {MAX_VIDEOS} videos, not {len(urls)}")
    if len(labels) != len(urls):
        raise ValueError(f"{len(urls)} videos need {len(urls)} labels, not {len(labels)}")
    _compare(
        key=key,
        data={
            "urls": [playable_url(url, f"dailies.sync_compare[{key}][{i}]") for i, url in enumerate(urls)],
            "labels": [str(label) for label in labels],
            "height": int(height),
            "fps": float(fps),
        },
    )
