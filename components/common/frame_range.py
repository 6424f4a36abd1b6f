"""A range of frames in the timecode player (issue 38): I marks its first frame, O its last (the
frame on screen each time), a span under the picture shows it on the video's length, "⟲ Loop" plays it
over and over, and "Comment at" then pins the comment to the whole range (its first and last frames).
A comment's range handed back is shown the same way. Above that bar, every comment of the version is a
mark on a strip as long as the video (a tick on its frame, a span over its range, red when drawn);
clicking one pauses on its first frame, with its range marked (ready to loop).

HTML, CSS and JavaScript joined into the player's one Custom Components v2 module
(components/common/timecode_player.py), apart here to keep each file about one thing.
"""

from __future__ import annotations

HTML = """<div class="tp-marks" hidden></div>
<div class="tp-range" hidden>
  <div class="tp-track"><div class="tp-span"></div></div>
  <span class="tp-range-text"></span>
  <button type="button" class="tp-loop" aria-pressed="false" title="Play the range over and over">⟲ Loop</button>
  <button type="button" class="tp-range-clear" title="No range">✕</button>
</div>"""

CSS = """
.tp-range { display: flex; align-items: center; gap: 0.375rem; font-size: var(--st-base-font-size); }
.tp-range[hidden] { display: none; }
.tp-track { position: relative; flex: 1; height: 0.5rem; border-radius: 0.25rem; background: var(--st-border-color); }
.tp-span { position: absolute; top: 0; bottom: 0; border-radius: 0.25rem; background: var(--st-primary-color); }
.tp-range-text { font-variant-numeric: tabular-nums; color: var(--st-text-color); }
.tp-loop, .tp-range-clear { font: inherit; min-height: 1.75rem; color: var(--st-text-color);
    background: var(--st-background-color); border: 1px solid var(--st-border-color);
    border-radius: var(--st-button-radius); padding: 0 0.5rem; cursor: pointer; }
.tp-marks { position: relative; height: 0.625rem; border-radius: 0.25rem;
    background: var(--st-secondary-background-color); }
.tp-marks[hidden] { display: none; }
.tp-mark { position: absolute; top: 0; bottom: 0; min-width: 3px; padding: 0; border: 0; border-radius: 2px;
    background: var(--st-text-color); opacity: 0.5; cursor: pointer; }
.tp-mark.tp-drawn { background: #e53935; }
.tp-mark.tp-resolved { opacity: 0.2; }
.tp-mark:hover, .tp-mark:focus-visible { opacity: 1; }
.tp-loop[aria-pressed="true"] { border-color: var(--st-primary-color); color: var(--st-primary-color); }
"""

JS = r"""
function renderRange(m) {
    const bar = m.root.querySelector(".tp-range"), r = m.range;
    bar.hidden = r.in === null;
    m.root.dataset.rangeIn = r.in === null ? "" : String(r.in);
    m.root.dataset.rangeOut = r.out === null ? "" : String(r.out);
    if (r.in === null) return;
    const frames = lengthInFrames(m, Math.max(r.in, r.out || 0));
    const last = r.out === null ? r.in : r.out;
    const span = bar.querySelector(".tp-span");
    span.style.left = `${100 * r.in / frames}%`;
    span.style.width = `${Math.max(0.5, 100 * (last - r.in + 1) / frames)}%`;
    bar.querySelector(".tp-range-text").textContent =
        `${frameTimecode(r.in, m.fps)} – ${frameTimecode(last, m.fps)} (${last - r.in + 1} frames)`;
}

// The video's length in frames, else (no metadata yet) enough for the frames named.
function lengthInFrames(m, lastNamed) {
    return m.video.duration ? Math.max(1, Math.round(m.video.duration * m.fps)) : lastNamed + 1;
}

function renderMarks(m) {
    const strip = m.root.querySelector(".tp-marks"), marks = m.marks || [];
    strip.hidden = marks.length === 0;
    strip.replaceChildren();
    if (!marks.length) return;
    const frames = lengthInFrames(m, Math.max(...marks.map((k) => k.out ?? k.in)));
    for (const mark of marks) {
        const last = mark.out ?? mark.in, button = document.createElement("button");
        button.type = "button";
        button.className = "tp-mark" + (mark.drawn ? " tp-drawn" : "") + (mark.resolved ? " tp-resolved" : "");
        const left = Math.min(99.6, 100 * mark.in / frames);  // a mark past the end stays on the strip
        button.style.left = `${left}%`;
        button.style.width = `${Math.min(100 - left, 100 * (last - mark.in + 1) / frames)}%`;
        button.title = `${frameTimecode(mark.in, m.fps)} ${mark.label}`;  // text, never markup
        button.setAttribute("aria-label", button.title);
        button.dataset.in = String(mark.in);
        button.dataset.out = String(last);
        button.addEventListener("click", () => {
            m.video.pause();
            m.shapes = []; m.shownShapes = []; renderInk(m);
            m.clearRange();
            if (mark.out !== null && mark.out !== undefined) m.range = { in: mark.in, out: mark.out, loop: false };
            renderRange(m);
            seekFrame(m.video, mark.in, m.fps);
        });
        strip.appendChild(button);
    }
}

function setUpRange(m) {
    const root = m.root, video = m.video, loop = root.querySelector(".tp-loop");
    m.range = { in: null, out: null, loop: false };
    m.markIn = () => {
        m.range.in = m.shown;
        if (m.range.out !== null && m.range.out < m.range.in) m.range.out = null;
        renderRange(m);
    };
    m.markOut = () => {
        if (m.range.in === null || m.shown < m.range.in) m.range.in = m.shown;
        m.range.out = m.shown;
        renderRange(m);
    };
    m.clearRange = () => {
        m.range = { in: null, out: null, loop: false };
        loop.setAttribute("aria-pressed", "false");
        renderRange(m);
    };
    // The wrap is asked for while the range's last frame is on screen (the presented frame's own
    // callback), so the seek has a whole frame's time before the next one would be painted; browsers
    // without that callback check the time on each animation frame. Watched only while a loop plays.
    let watching = 0;
    const last = () => m.range.out ?? m.range.in;
    const looping = () => m.range.loop && m.range.in !== null && !video.paused;
    const restart = () => {
        const play = () => { if (m.range.loop) video.play(); };
        // Played before the seek lands, the frames after the old position would show first.
        video.addEventListener("seeked", play, { once: true });
        seekFrame(video, m.range.in, m.fps);
    };
    const wrapAt = (frame) => {
        if (last() === m.range.in) {  // a one-frame range: hold it
            video.pause();
            seekFrame(video, m.range.in, m.fps);
            return;
        }
        if (frame >= last()) video.currentTime = (m.range.in + 0.5) / m.fps;
    };
    const presented = (_now, meta) => {
        watching = 0;
        if (!looping()) return;
        wrapAt(Math.round(meta.mediaTime * m.fps));
        watching = video.requestVideoFrameCallback(presented);
    };
    const painted = () => {
        watching = 0;
        if (!looping()) return;
        if (video.currentTime >= (last() + 1) / m.fps) wrapAt(last());
        watching = requestAnimationFrame(painted);
    };
    const watch = () => {
        if (watching) return;
        watching = "requestVideoFrameCallback" in video
            ? video.requestVideoFrameCallback(presented) : requestAnimationFrame(painted);
    };
    video.addEventListener("play", watch);
    // A range to the video's last frame: the video ends there instead of showing a frame past it.
    video.addEventListener("ended", () => { if (m.range.loop && m.range.in !== null) restart(); });
    loop.addEventListener("click", () => {
        m.range.loop = !m.range.loop;
        loop.setAttribute("aria-pressed", String(m.range.loop));
        if (m.range.loop && video.paused) restart();
        watch();
    });
    root.querySelector(".tp-range-clear").addEventListener("click", m.clearRange);
    video.addEventListener("loadedmetadata", () => { renderRange(m); renderMarks(m); });
}
"""
