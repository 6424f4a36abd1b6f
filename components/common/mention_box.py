"""`@name` completed as it is typed in a comment box: after an `@`, a list of the project's people whose
name (or a word of it) starts with what follows; ↑ ↓ choose, Enter or Tab (or a click) puts `@Name ` in
the box, Escape closes the list (not the popover around the box).

Streamlit's text area sends its value only when it loses focus, so the list lives in the browser: one
listener for the page, installed once, and per box the people it may name. The name goes into the box
through the textarea's own value setter and an `input` event, as typing would, so Streamlit keeps it.
The matching rule is dailies.spec.mentions.completions', written again in JavaScript (the Chromium test
types and checks it against the Python rule's answer).
"""

from __future__ import annotations

import json
import re
import threading
import time

import streamlit as st

from components.common import connection, members
from dailies.journal import Journal
from dailies.spec.mentions import MAX_COMPLETIONS

PEOPLE_MAX_AGE_S = 60  # someone new to the project is offered within a minute; each card does not ask
_people: dict[str, tuple[float, list[str]]] = {}
_lock = threading.Lock()

_SCRIPT = """<script>(() => {
  const registry = window.__dailiesMentions || (window.__dailiesMentions = { people: {}, installed: false });
  registry.people[__KEY__] = __PEOPLE__;
  if (registry.installed) return;
  registry.installed = true;
  const list = document.createElement("div");
  list.className = "dailies-mentions";
  list.setAttribute("role", "listbox");
  Object.assign(list.style, { position: "fixed", zIndex: 100000, display: "none", minWidth: "10rem",
    background: "var(--background-color, #fff)", color: "inherit", border: "1px solid rgba(128,128,128,.5)",
    borderRadius: "0.5rem", padding: "0.25rem 0", boxShadow: "0 4px 16px rgba(0,0,0,.25)", font: "inherit" });
  document.body.appendChild(list);
  let box = null, names = [], chosen = 0;
  const peopleOf = (target) => {
    for (let node = target; node; node = node.parentElement) {
      for (const name of node.classList || []) {
        if (name.startsWith("st-key-") && registry.people[name.slice(7)]) return registry.people[name.slice(7)];
      }
    }
    return null;
  };
  const typing = (text) => {  // dailies.spec.mentions.typing_mention
    const at = text.lastIndexOf("@");
    if (at === -1 || (at > 0 && /[\\p{L}\\p{N}_]/u.test(text[at - 1]))) return null;
    const partial = text.slice(at + 1);
    return partial.includes("\\n") || partial.length > 64 ? null : partial;
  };
  const matches = (partial, people) => {  // dailies.spec.mentions.completions
    const wanted = partial.toLowerCase().trim();
    const fold = (p) => p.toLowerCase();  // code-point order of the folded names, as Python's sorted()
    const sorted = [...new Set(people)].sort((a, b) => (fold(a) < fold(b) ? -1 : fold(a) > fold(b) ? 1 : 0));
    const first = sorted.filter((p) => fold(p).startsWith(wanted));
    const later = sorted.filter((p) => !first.includes(p) && fold(p).split(/\\s+/).some((w) => w.startsWith(wanted)));
    return first.concat(later).slice(0, __LIMIT__);
  };
  const close = () => { list.style.display = "none"; names = []; };
  const draw = () => {
    list.replaceChildren(...names.map((name, i) => {
      const item = document.createElement("div");
      item.setAttribute("role", "option");
      item.setAttribute("aria-selected", String(i === chosen));
      item.textContent = "@" + name;
      Object.assign(item.style, { padding: "0.25rem 0.75rem", cursor: "pointer",
        background: i === chosen ? "rgba(128,128,128,.25)" : "transparent" });
      item.addEventListener("mousedown", (event) => { event.preventDefault(); pick(name); });
      return item;
    }));
    const where = box.getBoundingClientRect();
    Object.assign(list.style, { display: names.length ? "block" : "none", left: `${where.left}px`,
      top: `${where.bottom + 2}px` });
  };
  const pick = (name) => {
    const caret = box.selectionStart, before = box.value.slice(0, caret);
    const after = box.value.slice(caret).replace(/^[\\p{L}\\p{N}_]*/u, "");  // the rest of the word typed
    const partial = typing(before);
    const head = partial === null ? before : before.slice(0, before.length - partial.length - 1);
    const value = `${head}@${name} ${after}`;
    Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, "value").set.call(box, value);
    box.dispatchEvent(new Event("input", { bubbles: true }));
    const end = head.length + name.length + 2;
    box.setSelectionRange(end, end);
    close();
  };
  // Offered for the mention that ends at the caret, wherever the caret went (typing, arrows, a click).
  const offer = (event) => {
    const target = event.target;
    if (!(target instanceof HTMLTextAreaElement)) return;
    const people = peopleOf(target);
    if (!people) return;
    box = target;
    const partial = typing(target.value.slice(0, target.selectionStart));
    names = partial === null ? [] : matches(partial, people);
    chosen = 0;
    if (names.length) draw(); else close();
  };
  document.addEventListener("input", offer, true);
  document.addEventListener("click", offer, true);
  document.addEventListener("keyup", (event) => {
    if (["ArrowLeft", "ArrowRight", "Home", "End", "PageUp", "PageDown"].includes(event.key)) offer(event);
  }, true);
  document.addEventListener("keydown", (event) => {
    if (!names.length || event.target !== box || event.isComposing) return;  // an IME's Enter is its own
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      chosen = (chosen + (event.key === "ArrowDown" ? 1 : names.length - 1)) % names.length;
      draw();
    } else if (event.key === "Enter" || event.key === "Tab") {
      pick(names[chosen]);
    } else if (event.key === "Escape") {
      close();
    } else return;
    event.preventDefault();
    event.stopPropagation();
  }, true);
  document.addEventListener("focusout", (event) => { if (event.target === box) close(); }, true);
})();</script>"""


def mention_completion(box_key: str, people: list[str]) -> None:
    """Complete `@name` in the text area of widget key `box_key` with `people`'s names."""
    st.html(completion_script(box_key, people), unsafe_allow_javascript=True)


def completion_script(box_key: str, people: list[str]) -> str:
    """The page's script for one box. Names are anyone's: as JSON with <, >, & and the JavaScript line
    separators escaped, so none can close the script element or break its string, and put in one
    pass, so a name holding a placeholder's word is never replaced in turn."""
    values = {"__KEY__": _script_json(box_key.replace(".", "-")),  # as Streamlit writes a key into a class
              "__PEOPLE__": _script_json(people), "__LIMIT__": str(MAX_COMPLETIONS)}
    return re.sub("__KEY__|__PEOPLE__|__LIMIT__", lambda found: values[found.group(0)], _SCRIPT)


def _script_json(value: object) -> str:
    text = json.dumps(value)
    for raw, escaped in (("<", "\\u003c"), (">", "\\u003e"), ("&", "\\u0026"), ("\u2028", "\\u2028"),
                         ("\u2029", "\\u2029")):
        text = text.replace(raw, escaped)
    return text


def people_of(journal: Journal) -> list[str]:
    """The project's people: the journal's (journal.people, read at most once a minute per scope for
    every session of the process) and the member names of its keys on a Dailies service
    (components/common/members.py)."""
    scope = journal.scope.name if journal.scope is not None else ""
    with _lock:
        at, known = _people.get(scope, (float("-inf"), []))
    if time.monotonic() - at >= PEOPLE_MAX_AGE_S:
        known = journal.people()
        with _lock:
            _people[scope] = (time.monotonic(), known)
    return sorted(set(known) | set(service_members()), key=str.casefold)


def service_members() -> list[str]:
    """The member names the service gives for the current connection's project (none known yet, or
    none there: [])."""
    conn = connection.current()
    return members.members(connection.client(), conn.cache_id) if conn.usable else []
