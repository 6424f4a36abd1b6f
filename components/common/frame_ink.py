"""Drawing on a paused frame, inside the timecode player (issue 38): pen, arrow, rectangle, ellipse
and text in the palette of dailies/spec/drawings.py, with undo and clear. The shapes are kept in
coordinates relative to the picture (0 to 1), so they scale with any player size, and go to Python with
"Comment at" (the player's `comment` trigger); a comment's drawing handed back (`show`) is drawn over
its frame until the video plays again.

HTML, CSS and JavaScript for the player to include (components/common/timecode_player.py): one
Custom Components v2 module, so they are strings joined into it, apart here only to keep each file
about one thing. The limits are the spec module's, written into the script from there.
"""

from __future__ import annotations

from string import Template

from dailies.spec.drawings import COLOURS, MAX_POINTS, MAX_SHAPES, MAX_TEXT_CHARS

TOOLS = (("pen", "✏️", "Pen"), ("arrow", "↗", "Arrow"), ("rect", "▭", "Rectangle"), ("ellipse", "◯", "Ellipse"),
         ("text", "T", "Text: type it in the box, then click where it goes"))

HTML = (
    '<div class="tp-tools" hidden>'
    + "".join(f'<button type="button" class="tp-tool" data-tool="{name}" title="{title}">{icon}</button>'
              for name, icon, title in TOOLS)
    + f'<input class="tp-text" type="text" maxlength="{MAX_TEXT_CHARS}" placeholder="Text" size="8">'
    + "".join(f'<button type="button" class="tp-colour" data-colour="{c}" title="{c}" style="background:{c}">'
              "</button>" for c in COLOURS)
    + '<button type="button" class="tp-undo" title="Undo the last shape">↶</button>'
    + '<button type="button" class="tp-clear" title="Clear the drawing">✕</button>'
    + "</div>"
)

CSS = """
.tp-stage { position: relative; }
.tp-ink { position: absolute; inset: 0; width: 100%; height: 100%; pointer-events: none; }
.tp-drawing .tp-ink { pointer-events: auto; cursor: crosshair; }
.tp-tools { display: flex; align-items: center; gap: 0.25rem; flex-wrap: wrap; }
.tp-tools[hidden] { display: none; }
.tp-tool, .tp-undo, .tp-clear, .tp-draw { font: inherit; font-size: var(--st-base-font-size); min-height: 2rem;
    color: var(--st-text-color); background: var(--st-background-color); border: 1px solid var(--st-border-color);
    border-radius: var(--st-button-radius); padding: 0 0.375rem; cursor: pointer; }
.tp-tool[aria-pressed="true"], .tp-draw[aria-pressed="true"] { border-color: var(--st-primary-color);
    color: var(--st-primary-color); }
.tp-colour { width: 1.25rem; height: 1.25rem; border-radius: 50%; border: 1px solid var(--st-border-color);
             cursor: pointer; padding: 0; }
.tp-colour[aria-pressed="true"] { outline: 2px solid var(--st-primary-color); outline-offset: 1px; }
.tp-text { font: inherit; font-size: var(--st-base-font-size); min-height: 2rem; width: 7rem;
           border: 1px solid var(--st-border-color); border-radius: var(--st-button-radius); padding: 0 0.375rem; }
"""

JS = Template(r"""
const INK = { maxShapes: $max_shapes, maxPoints: $max_points, width: 0.006 };

// Where the picture is inside the <video> box (object-fit: contain letterboxes it).
function pictureBox(video) {
    const w = video.clientWidth, h = video.clientHeight;
    const vw = video.videoWidth || 16, vh = video.videoHeight || 9;
    const scale = Math.min(w / vw, h / vh);
    return { x: (w - vw * scale) / 2, y: (h - vh * scale) / 2, w: vw * scale, h: vh * scale };
}

function drawShape(g, s, box) {
    const X = (x) => box.x + x * box.w, Y = (y) => box.y + y * box.h;
    g.strokeStyle = g.fillStyle = s.colour;
    g.lineWidth = Math.max(1.5, (s.width || INK.width) * box.h);
    g.lineCap = g.lineJoin = "round";
    g.beginPath();
    if (s.kind === "pen") {
        s.points.forEach(([x, y], i) => (i ? g.lineTo(X(x), Y(y)) : g.moveTo(X(x), Y(y))));
        if (s.points.length === 1) g.lineTo(X(s.points[0][0]) + 0.5, Y(s.points[0][1]));
        g.stroke();
    } else if (s.kind === "rect") {
        g.strokeRect(X(Math.min(s.x1, s.x2)), Y(Math.min(s.y1, s.y2)), Math.abs(s.x2 - s.x1) * box.w,
                     Math.abs(s.y2 - s.y1) * box.h);
    } else if (s.kind === "ellipse") {
        g.ellipse(X((s.x1 + s.x2) / 2), Y((s.y1 + s.y2) / 2), Math.abs(s.x2 - s.x1) * box.w / 2,
                  Math.abs(s.y2 - s.y1) * box.h / 2, 0, 0, 2 * Math.PI);
        g.stroke();
    } else if (s.kind === "arrow") {
        const [x1, y1, x2, y2] = [X(s.x1), Y(s.y1), X(s.x2), Y(s.y2)];
        const angle = Math.atan2(y2 - y1, x2 - x1), head = Math.max(8, 0.04 * box.h);
        g.moveTo(x1, y1); g.lineTo(x2, y2);
        g.moveTo(x2 - head * Math.cos(angle - 0.45), y2 - head * Math.sin(angle - 0.45));
        g.lineTo(x2, y2);
        g.lineTo(x2 - head * Math.cos(angle + 0.45), y2 - head * Math.sin(angle + 0.45));
        g.stroke();
    } else if (s.kind === "text") {
        g.font = `$${Math.max(12, Math.round(0.06 * box.h))}px sans-serif`;
        g.textBaseline = "top";
        g.fillText(s.text, X(s.x), Y(s.y));
    }
}

function renderInk(m) {
    const canvas = m.ink, video = m.video;
    const ratio = window.devicePixelRatio || 1;
    canvas.width = Math.round(video.clientWidth * ratio);
    canvas.height = Math.round(video.clientHeight * ratio);
    const g = canvas.getContext("2d");
    g.setTransform(ratio, 0, 0, ratio, 0, 0);
    g.clearRect(0, 0, canvas.width, canvas.height);
    const box = pictureBox(video);
    for (const s of [...m.shownShapes, ...m.shapes]) drawShape(g, s, box);
    m.root.dataset.shapes = String(m.shownShapes.length + m.shapes.length);
}

function setUpInk(m) {
    const root = m.root, video = m.video, canvas = m.ink;
    const tools = root.querySelector(".tp-tools"), toggle = root.querySelector(".tp-draw");
    const text = root.querySelector(".tp-text");
    m.shapes = []; m.shownShapes = []; m.tool = "pen"; m.colour = "$first_colour"; m.live = null;
    const press = (selector, attribute, value) => {
        for (const b of root.querySelectorAll(selector)) {
            b.setAttribute("aria-pressed", String(b.dataset[attribute] === value));
        }
    };
    press(".tp-tool", "tool", m.tool); press(".tp-colour", "colour", m.colour);
    m.drawMode = (on) => {
        tools.hidden = !on;
        toggle.setAttribute("aria-pressed", String(on));
        root.classList.toggle("tp-drawing", on);
        if (on) video.pause();
    };
    toggle.addEventListener("click", () => m.drawMode(tools.hidden));
    for (const b of root.querySelectorAll(".tp-tool")) {
        b.addEventListener("click", () => { m.tool = b.dataset.tool; press(".tp-tool", "tool", m.tool); });
    }
    for (const b of root.querySelectorAll(".tp-colour")) {
        b.addEventListener("click", () => { m.colour = b.dataset.colour; press(".tp-colour", "colour", m.colour); });
    }
    root.querySelector(".tp-undo").addEventListener("click", () => { m.shapes.pop(); renderInk(m); });
    root.querySelector(".tp-clear").addEventListener("click", () => {
        m.shapes = []; m.shownShapes = []; renderInk(m);
    });
    const at = (event) => {
        const r = canvas.getBoundingClientRect(), box = pictureBox(video);
        const clamp = (v) => Math.min(1, Math.max(0, v));
        return [clamp((event.clientX - r.left - box.x) / box.w), clamp((event.clientY - r.top - box.y) / box.h)];
    };
    const round = (v) => Math.round(v * 10000) / 10000;
    canvas.addEventListener("pointerdown", (event) => {
        if (m.shapes.length >= INK.maxShapes) return;
        video.pause();
        const [x, y] = at(event).map(round);
        if (m.tool === "text") {
            const words = text.value.trim();
            if (words) {
                m.shapes.push({ kind: "text", x, y, text: words, colour: m.colour });
                text.value = "";
                renderInk(m);
            }
            return;
        }
        canvas.setPointerCapture(event.pointerId);
        m.live = m.tool === "pen" ? { kind: "pen", points: [[x, y]], colour: m.colour, width: INK.width }
            : { kind: m.tool, x1: x, y1: y, x2: x, y2: y, colour: m.colour, width: INK.width };
        m.shapes.push(m.live);
        renderInk(m);
    });
    canvas.addEventListener("pointermove", (event) => {
        if (!m.live) return;
        const [x, y] = at(event).map(round);
        if (m.live.kind === "pen") {
            const [px, py] = m.live.points[m.live.points.length - 1];
            const far = Math.hypot(x - px, y - py) > 0.002;
            if (far && m.live.points.length < INK.maxPoints) m.live.points.push([x, y]);
        } else { m.live.x2 = x; m.live.y2 = y; }
        renderInk(m);
    });
    const end = () => {
        const s = m.live;
        m.live = null;
        if (s && s.kind !== "pen" && Math.hypot(s.x2 - s.x1, s.y2 - s.y1) < 0.005) m.shapes.pop();  // a click, no shape
        renderInk(m);
    };
    canvas.addEventListener("pointerup", end);
    canvas.addEventListener("pointercancel", end);
    // A drawing belongs to its frame: playing on lets it go.
    video.addEventListener("play", () => { m.shapes = []; m.shownShapes = []; renderInk(m); });
    new ResizeObserver(() => renderInk(m)).observe(video);
    video.addEventListener("loadedmetadata", () => renderInk(m));
}
""").substitute(max_shapes=MAX_SHAPES, max_points=MAX_POINTS, first_colour=COLOURS[0])
