"""The reel's order as a list the person rearranges: a row is dragged (mouse, pen or touch on its handle),
or moved with its ↑ ↓ buttons (Alt+↑ / Alt+↓ while one of them has the focus); the reel is made in the
order shown. Each row is named by its shot label, with its last frame when one is at hand.

A Custom Components v2 component of our own (like components/common/timecode_player.py) rather than the
`streamlit-sortables` package, because that one is an iframe of text-only items with no keyboard moves,
while this list draws in the page, in the app's theme, with a frame per row and ↑ ↓ for keyboard users.

The list answers the whole order as a state value (`order`, kept across runs). What it answered may be
older than the picks (a version picked or dropped since): `arranged` reconciles the two, and is pure.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import streamlit as st


@dataclass(frozen=True)
class OrderRow:
    """One picked version as its row shows it."""

    task_id: str
    name: str  # its shot label (components/common/shot_labels.py)
    detail: str  # its short id and review status
    frame: str = ""  # a URL of its last frame, or "" when none is at hand


def arranged(picked: Sequence[str], answered: Sequence[str] | None) -> list[str]:
    """The reel's order: the picked versions in the order the list last answered (one dropped and picked
    again takes its place there), then those it never placed, in picking order; one not picked leaves."""
    chosen = set(picked)
    kept = [t for t in dict.fromkeys(answered or ()) if t in chosen]
    placed = set(kept)
    return kept + [t for t in picked if t not in placed]


_HTML = """
<div class="ro">
  <div class="ro-hint">Order in the reel: drag a row, or move it with ↑ ↓ (Alt+↑ / Alt+↓ on a focused button)</div>
  <ol class="ro-list" aria-label="Order in the reel"></ol>
  <div class="ro-live" aria-live="polite"></div>
</div>
"""

# The --st-* custom properties are the app's theme, which CCv2 sets on the component's host.
_CSS = """
.ro { font-family: var(--st-font); font-size: var(--st-base-font-size); color: var(--st-text-color); }
.ro-hint { font-size: 0.875em; opacity: 0.7; margin-bottom: 0.35rem; }
.ro-list { list-style: none; margin: 0; padding: 0; display: flex; flex-direction: column; gap: 0.25rem; }
.ro-row { display: flex; align-items: center; gap: 0.6rem; padding: 0.3rem 0.5rem;
          border: 1px solid var(--st-border-color); border-radius: var(--st-base-radius);
          background: var(--st-secondary-background-color); cursor: grab; user-select: none;
          -webkit-user-select: none; }
.ro-sorting, .ro-sorting .ro-row { cursor: grabbing; }
.ro-dragging { border-color: var(--st-primary-color); box-shadow: 0 2px 10px rgba(0, 0, 0, 0.35); }
/* Touch drags from the handle only, so a finger on the rest of the row still scrolls the page. */
.ro-handle { touch-action: none; opacity: 0.55; font-size: 1.1em; padding: 0.2rem 0.1rem; }
.ro-place { min-width: 1.5em; text-align: right; font-variant-numeric: tabular-nums; opacity: 0.8; }
.ro-frame { width: 64px; height: 36px; flex: none; object-fit: contain; background: #000;
            border-radius: calc(var(--st-base-radius) / 2); }
.ro-noframe { width: 64px; height: 36px; flex: none; border: 1px dashed var(--st-border-color);
              border-radius: calc(var(--st-base-radius) / 2); }
.ro-text { flex: 1; min-width: 0; }
/* A name takes two lines where one is too narrow (a phone): the part that tells versions apart is its end. */
.ro-name { display: -webkit-box; -webkit-box-orient: vertical; -webkit-line-clamp: 2; overflow: hidden;
           overflow-wrap: anywhere; }
.ro-detail { font-size: 0.8em; opacity: 0.65; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.ro-move { font: inherit; color: var(--st-text-color); background: var(--st-background-color);
           border: 1px solid var(--st-border-color); border-radius: var(--st-button-radius);
           min-width: 2.25rem; min-height: 2.25rem; cursor: pointer; }
.ro-move:hover:not([aria-disabled="true"]) { border-color: var(--st-primary-color); color: var(--st-primary-color); }
.ro-move:focus-visible { outline: 2px solid var(--st-primary-color); outline-offset: 1px; }
.ro-move[aria-disabled="true"] { opacity: 0.35; cursor: default; }
.ro-live { position: absolute; width: 1px; height: 1px; overflow: hidden; clip-path: inset(50%); }
"""

# The renderer runs on mount and again each time `data` changes, on the same DOM: listeners are added
# once per root (remembered in a WeakMap). A row is moved by moving its neighbours, so the row itself
# never leaves the document and keeps the focus (and the drag) it has.
_JS = r"""
const mounts = new WeakMap();

const idsOf = (m) => [...m.list.children].map((li) => li.dataset.task);

function build(row) {
    const li = document.createElement("li");
    li.className = "ro-row";
    li.dataset.task = row.id;
    li.dataset.sig = JSON.stringify(row);
    const handle = document.createElement("span");
    handle.className = "ro-handle";
    handle.setAttribute("aria-hidden", "true");
    handle.textContent = "⠿";
    const place = document.createElement("span");
    place.className = "ro-place";
    let frame;
    if (row.frame) {
        frame = document.createElement("img");
        frame.className = "ro-frame";
        frame.alt = "";
        frame.draggable = false;
        frame.loading = "lazy";
        frame.src = row.frame;
    } else {
        frame = document.createElement("span");
        frame.className = "ro-noframe";
    }
    const text = document.createElement("div");
    text.className = "ro-text";
    const name = document.createElement("div");
    name.className = "ro-name";
    name.textContent = row.name;
    const detail = document.createElement("div");
    detail.className = "ro-detail";
    detail.textContent = row.detail;
    text.append(name, detail);
    li.append(handle, place, frame, text);
    for (const [step, arrow, word] of [[-1, "↑", "up"], [1, "↓", "down"]]) {
        const button = document.createElement("button");
        button.type = "button";
        button.className = "ro-move";
        button.dataset.step = String(step);
        button.textContent = arrow;
        button.setAttribute("aria-label", `Move ${row.name} ${word}`);
        button.setAttribute("aria-keyshortcuts", step < 0 ? "Alt+ArrowUp" : "Alt+ArrowDown");
        li.append(button);
    }
    return li;
}

function number(m) {
    const rows = [...m.list.children];
    rows.forEach((li, i) => {
        li.querySelector(".ro-place").textContent = String(i + 1);
        li.querySelector('[data-step="-1"]').setAttribute("aria-disabled", String(i === 0));
        li.querySelector('[data-step="1"]').setAttribute("aria-disabled", String(i === rows.length - 1));
    });
}

function send(m, li) {
    number(m);
    const order = idsOf(m);
    if (order.join("\n") === m.sent) return;
    m.sent = order.join("\n");
    const name = li.querySelector(".ro-name").textContent;
    m.live.textContent = `${name}: ${order.indexOf(li.dataset.task) + 1} of ${order.length}`;
    m.api.setStateValue("order", order);
}

function move(m, li, step) {
    const other = step < 0 ? li.previousElementSibling : li.nextElementSibling;
    if (!other) return;
    m.list.insertBefore(other, step < 0 ? li.nextElementSibling : li);
    send(m, li);
}

function putBack(m, order) {
    for (const id of order) {
        const li = [...m.list.children].find((each) => each.dataset.task === id);
        if (li) m.list.append(li);
    }
    number(m);
}

function show(m, rows) {
    const focused = m.root.getRootNode().activeElement;
    const keep = focused && focused.closest ? focused.closest(".ro-row") : null;
    const old = new Map([...m.list.children].map((li) => [li.dataset.task, li]));
    const wanted = rows.map((row) => {
        const li = old.get(row.id);
        return li && li.dataset.sig === JSON.stringify(row) ? li : build(row);
    });
    for (const li of old.values()) if (!wanted.includes(li)) li.remove();
    // Appended in order from the first row that is out of place, so a row already in place (and the
    // focus in it) stays put.
    let start = 0;
    while (start < wanted.length && m.list.children[start] === wanted[start]) start++;
    for (const li of wanted.slice(start)) m.list.append(li);
    if (keep && wanted.includes(keep) && focused.isConnected) focused.focus();
    m.sent = rows.map((row) => row.id).join("\n");
    number(m);
}

function setUp(root) {
    const m = { root, list: root.querySelector(".ro-list"), live: root.querySelector(".ro-live"), api: null,
                sent: null, drag: null, pending: null };
    const list = m.list;
    list.addEventListener("click", (event) => {
        const button = event.target.closest("button.ro-move");
        if (!button || button.getAttribute("aria-disabled") === "true") return;
        move(m, button.closest(".ro-row"), Number(button.dataset.step));
    });
    list.addEventListener("keydown", (event) => {
        if (!event.altKey || (event.key !== "ArrowUp" && event.key !== "ArrowDown")) return;
        const li = event.target.closest(".ro-row");
        if (!li) return;
        event.preventDefault();
        move(m, li, event.key === "ArrowUp" ? -1 : 1);
    });
    // The pointer is captured by the list, not the row: the row moves in the list while it is dragged.
    list.addEventListener("pointerdown", (event) => {
        const li = event.target.closest(".ro-row");
        if (!li || event.button !== 0 || event.target.closest("button") || m.drag) return;
        if (event.pointerType === "touch" && !event.target.closest(".ro-handle")) return;
        m.drag = { li, pointer: event.pointerId, y: event.clientY, moving: false, before: idsOf(m) };
        list.setPointerCapture(event.pointerId);
        event.preventDefault();  // no text selection while dragging
    });
    list.addEventListener("pointermove", (event) => {
        const d = m.drag;
        if (!d || event.pointerId !== d.pointer) return;
        if (!d.moving) {
            if (Math.abs(event.clientY - d.y) < 4) return;  // a click, not yet a drag
            d.moving = true;
            d.li.classList.add("ro-dragging");
            list.classList.add("ro-sorting");
        }
        const middle = (el) => { const box = el.getBoundingClientRect(); return box.top + box.height / 2; };
        let before = d.li.previousElementSibling;
        while (before && event.clientY < middle(before)) {
            list.insertBefore(before, d.li.nextElementSibling);
            before = d.li.previousElementSibling;
        }
        let after = d.li.nextElementSibling;
        while (after && event.clientY > middle(after)) {
            list.insertBefore(after, d.li);
            after = d.li.nextElementSibling;
        }
        number(m);
    });
    list.addEventListener("pointerup", (event) => {
        const d = m.drag;
        if (!d || event.pointerId !== d.pointer) return;
        end(m);
        send(m, d.li);
        if (m.pending && idsOf(m).join("\n") === d.before.join("\n")) show(m, m.pending);  // sent while held
        m.pending = null;
    });
    list.addEventListener("pointercancel", () => { if (m.drag) cancel(m); });
    return m;
}

function end(m) {
    const d = m.drag;
    m.drag = null;
    d.li.classList.remove("ro-dragging");
    m.list.classList.remove("ro-sorting");
    if (m.list.hasPointerCapture(d.pointer)) m.list.releasePointerCapture(d.pointer);
}

// The rows go back where they were; what Python sent while the row was held is shown then.
function cancel(m) {
    putBack(m, m.drag.before);
    end(m);
    if (m.pending) show(m, m.pending);
    m.pending = null;
}

export default function (component) {
    const { data, parentElement } = component;
    const root = parentElement.querySelector(".ro");
    let m = mounts.get(root);
    if (!m) {
        m = setUp(root);
        mounts.set(root, m);
    }
    m.api = component;
    const rows = data.rows || [];
    if (m.drag) m.pending = rows;
    else show(m, rows);
}
"""

_list = st.components.v2.component("dailies.reel_order", html=_HTML, css=_CSS, js=_JS)


def _ignore() -> None:
    """CCv2 reports a state value only for names given an on_<name>_change callback."""


def _answered(key: str) -> list[str] | None:
    """The order the list last answered (its state value, kept across runs), if it answered one."""
    value = st.session_state.get(key)
    order = value.get("order") if isinstance(value, Mapping) else None
    if isinstance(order, list) and all(isinstance(t, str) for t in order):
        return order
    return None


def reel_order(rows: Sequence[OrderRow], *, key: str) -> list[str]:
    """Draw the list of `rows` (the picked versions, in picking order) as last arranged, and return the
    order shown: the reel's order."""
    by_id = {row.task_id: row for row in rows}
    order = arranged(list(by_id), _answered(key))
    shown = [by_id[t] for t in order]
    _list(key=key, data={"rows": [{"id": r.task_id, "name": r.name, "detail": r.detail, "frame": r.frame}
                                  for r in shown]},
          on_order_change=_ignore)
    return order
