"""Knowing when the app is done: the browser's side of Streamlit's WebSocket, read as it passes.

A script run is Streamlit's unit of work. The server says when one starts (a ForwardMsg carrying
`new_session`) and when the session stops running (`session_status_changed` with
`script_is_running` false); the page asks for one with a BackMsg carrying `rerun_script`. An init
script wraps the page's WebSocket and keeps those three facts in `window.__dailiesRuns`, reading only
the messages' top-level protobuf tags (field numbers from streamlit/proto, checked by
tests/browser/test_script_runs.py against the installed Streamlit), so a test waits exactly until no
run is asked for or going, instead of for a fixed quiet time after the last one it could see.
"""

from __future__ import annotations

from string import Template

# ForwardMsg: new_session = 4, script_finished = 6 (FINISHED_EARLY_FOR_RERUN = 2: st.rerun, or a rerun
# asked mid-run, so another run follows), session_status_changed = 9 (SessionStatus.script_is_running
# = 2); BackMsg: rerun_script = 11.
FORWARD_NEW_SESSION = 4
FORWARD_SCRIPT_FINISHED = 6
FINISHED_EARLY_FOR_RERUN = 2
FORWARD_SESSION_STATUS = 9
STATUS_SCRIPT_IS_RUNNING = 2
BACK_RERUN_SCRIPT = 11

RUN_TRACKER = Template("""(() => {
  if (window.__dailiesRuns) return;
  const runs = window.__dailiesRuns = { open: false, opened: 0, running: false, asked: false, started: 0,
                                       changed: Date.now() };
  const note = () => { runs.changed = Date.now(); };
  // The top-level fields of a protobuf message: [field number, wire type, start, end] of each value.
  function fields(bytes) {
    const out = []; let i = 0;
    const varint = () => { let v = 0, shift = 0, b;
      do { b = bytes[i++]; v += (b & 0x7f) * 2 ** shift; shift += 7; } while (b & 0x80 && i < bytes.length);
      return v; };
    while (i < bytes.length) {
      const tag = varint(), field = Math.floor(tag / 8), wire = tag & 7, start = i;
      if (wire === 0) varint();
      else if (wire === 1) i += 8;
      else if (wire === 2) { const n = varint(); out.push([field, wire, i, i + n]); i += n; continue; }
      else if (wire === 5) i += 4;
      else break;  // groups are not used by Streamlit's messages
      out.push([field, wire, start, i]);
    }
    return out;
  }
  const bytesOf = (data) => data instanceof ArrayBuffer ? new Uint8Array(data)
    : ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : null;
  function received(data) {
    const bytes = bytesOf(data);
    if (!bytes) return;
    for (const [field, , start, end] of fields(bytes)) {
      if (field === $new_session) { runs.asked = false; runs.running = true; runs.started += 1; note(); }
      // A run stopped for a rerun: the next one is as good as asked for.
      if (field === $finished && bytes[start] === $for_rerun && end - start === 1) { runs.asked = true; note(); }
      if (field === $status) {
        const inner = bytes.subarray(start, end);
        let running = false;
        for (const [f, w, s] of fields(inner)) if (f === $is_running && w === 0) running = inner[s] !== 0;
        runs.running = running; note();
      }
    }
  }
  const Native = window.WebSocket;
  class Tracked extends Native {
    constructor(...args) {
      super(...args);
      this.addEventListener("open", () => { runs.open = true; runs.opened += 1; note(); });
      this.addEventListener("close", () => { runs.open = false; note(); });
      this.addEventListener("message", (e) => received(e.data));
    }
    send(data) {
      const bytes = bytesOf(data);
      if (bytes && fields(bytes).some(([f]) => f === $rerun)) { runs.asked = true; note(); }
      return super.send(data);
    }
  }
  window.WebSocket = Tracked;
})();""").substitute(new_session=FORWARD_NEW_SESSION, finished=FORWARD_SCRIPT_FINISHED,
                         for_rerun=FINISHED_EARLY_FOR_RERUN, status=FORWARD_SESSION_STATUS,
                         is_running=STATUS_SCRIPT_IS_RUNNING, rerun=BACK_RERUN_SCRIPT)

# Quiet: connected, no run going or asked for since `since` (ms since the epoch: when the test's
# action was done) and for `ms` (a widget asks for its run a moment after the click; a run that reruns
# itself, st.rerun, says "not running" and "started" a moment apart), and Streamlit's busy signs gone.
QUIET = """([ms, since]) => { const runs = window.__dailiesRuns;
  if (!runs || !runs.open || runs.running || runs.asked) return false;
  if (Date.now() - Math.max(runs.changed, since || 0) < ms) return false;
  return !document.querySelector('[data-testid="stStatusWidget"], [data-stale="true"]'); }"""


def is_tracked(tab) -> bool:
    return bool(tab.evaluate("() => Boolean(window.__dailiesRuns)"))
