"""Dashboard speed in Chromium: how long each page and interaction takes, with 1,000 tasks on the
service and 300 submissions in the dashboard's journal.

    python bench/dashboard.py                  # 7 repetitions of each interaction, about two minutes
    python bench/dashboard.py --repeat 15      # steadier percentiles
    python bench/dashboard.py --timeline       # each interaction's messages and runs, in ms from the press
    python bench/dashboard.py --profile DIR    # also a pyinstrument profile of every script run, in DIR
    python bench/dashboard.py --skip-interactions --loads 5 --browser-profile   # full loads only

What runs, all on 127.0.0.1:
1. The service (`dailies serve --workers 0`) on a data directory filled beforehand with `--tasks`
   task rows of one project (bench/service.py's `synthetic_rows`: spread over the last 7 days, mixed
   models, tiers and statuses), each succeeded task with a small real video (and last frame) in its
   result folder. The queued and running rows `synthetic_rows` makes (the newest) are turned into
   succeeded ones (`--active` keeps them): with no worker they would stay active and the Tasks page
   would refresh itself every 3 s.
2. The dashboard (`streamlit run dashboard/app.py`, as `dailies dashboard` starts it) with a journal
   of `--journal` submissions (the newest tasks), a few dozen verdicts and batches of four. It runs in
   this script's child process with a timer around each script run (page runs and fragment runs):
   one JSON line per run in a log, with its wall time, its thread's CPU time and the garbage
   collection meanwhile (the "script" and "cpu" columns).
3. Chromium (Debian's, through Playwright) opens the dashboard and performs each interaction
   `--repeat` times. An interaction lasts from the press until the page has received Streamlit's
   `script_finished` for the last run the press caused (no other run starting within a short grace
   period, not counted) and shows nothing stale, no skeleton and no running indicator. Both ends are
   taken inside the page (an init script listens for the press and wraps the page's WebSocket), so
   the delays of the Playwright driver do not count.

4. Then full loads (bench/page_loads.py): every page and deep link opened as a new session, cold (a
   new browser context) and warm (a reload), from the dashboard and from a bare Streamlit app of the
   same shape started here with the same flags, taking turns; the table gives their ratio.

Goals (issue 16): each page's script run under 250 ms at p50, each interaction under 150 ms; a full
load within 1.5x of the bare app's (a deep link 2x), cold and warm.
This script prints figures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
BENCH = ROOT / "bench"


def _load_bench_module(name: str):
    """bench/<name>.py, loaded by path: with bench/ on sys.path, `import dashboard` (the dashboard
    package, which the launcher finds the app by) would find this file instead, so bench/ is on the
    path only while the module imports its own neighbours."""
    import importlib.util

    sys.path[:] = [str(ROOT), *(p for p in sys.path if Path(p or ".").resolve() != BENCH)]
    spec = importlib.util.spec_from_file_location(f"bench_{name}", BENCH / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != BENCH]
    return module


service_bench = _load_bench_module("service")  # synthetic task rows, free ports, percentiles
page_loads = _load_bench_module("page_loads")  # full loads of every page, and the bare app

API_KEY = "bench-dashboard-key"
PROJECT = "bench"  # the project of synthetic_rows
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--mute-audio"]
PAGE_GOAL_MS = 250
INTERACTION_GOAL_MS = 150
# After a run finishes, another may follow (an st.rerun, a widget the frontend reports back): the
# interaction is over once none has started for this long. Not counted in the interaction's time.
GRACE_S = 0.35
TIMEOUT_S = 60.0
RUN_LOG_ENV = "DAILIES_BENCH_RUN_LOG"
PROFILE_ENV = "DAILIES_BENCH_PROFILE_DIR"


# ---------- data ----------


def tiny_results(folder: Path) -> tuple[Path, Path]:
    """A real 1 s H.264 video (160x90) and a PNG last frame, made once and linked into every result folder."""
    import av
    import numpy as np
    from PIL import Image

    from dailies.spec.results import LAST_FRAME_NAME, VIDEO_NAME

    folder.mkdir(parents=True, exist_ok=True)
    video, frame = folder / VIDEO_NAME, folder / LAST_FRAME_NAME
    with av.open(str(video), "w") as out:
        stream = out.add_stream("libx264", rate=24)
        stream.width, stream.height, stream.pix_fmt = 160, 90, "yuv420p"
        for index in range(24):
            picture = np.full((90, 160, 3), (40 + index * 8, 90, 160), np.uint8)
            for packet in stream.encode(av.VideoFrame.from_ndarray(picture, format="rgb24")):
                out.mux(packet)
        for packet in stream.encode():
            out.mux(packet)
    Image.new("RGB", (160, 90), (200, 90, 160)).save(frame)
    return video, frame


def finish_active_rows(rows: list[dict], now: int) -> None:
    """Turn the queued and running rows (the newest) into tasks that succeeded a minute or two after
    their creation, with the render outputs of a succeeded row of the same request (and their own
    seed): with no worker they would stay active, and the Tasks page would refresh itself every 3 s."""
    from dailies.spec.statuses import ACTIVE, TaskStatus

    outputs = {row["request"]: row for row in rows if row["status"] == TaskStatus.SUCCEEDED}
    for row in rows:
        done = outputs.get(row["request"])
        if row["status"] not in ACTIVE or done is None:
            continue
        finished = min(now - 1, row["created_at"] + 90)
        result = json.loads(done["result"]) | {"seed": row["seed"]}
        row.update(status=TaskStatus.SUCCEEDED.value, result=json.dumps(result), video_file=done["video_file"],
                   last_frame_file=done["last_frame_file"], started_at=min(finished, row["created_at"] + 5),
                   finished_at=finished, updated_at=finished, worker_id=done["worker_id"],
                   heartbeat_at=float(finished), attempts=1)


def fill_service(data_dir: Path, count: int, keep_active: bool) -> list[dict]:
    """`count` task rows in the service's database and their result files; returns the rows, oldest first."""
    import random

    from dailies.service.db.engine import make_engine
    from dailies.service.db.tables import tasks
    from dailies.service.db.writer import writer
    from dailies.service.storage.files import ResultFiles

    now = int(time.time())
    rows = service_bench.synthetic_rows(count, now, random.Random(16))
    if not keep_active:
        finish_active_rows(rows, now)
    files = ResultFiles(data_dir / "files")
    video, frame = tiny_results(data_dir / "bench-source")
    for row in rows:
        if row["video_file"]:
            folder = files.dir_for(row["id"])
            folder.mkdir(parents=True, exist_ok=True)
            os.link(video, folder / row["video_file"])
            if row["last_frame_file"]:
                os.link(frame, folder / row["last_frame_file"])
    engine = make_engine(data_dir / "dailies.sqlite3")
    try:
        with writer(engine).begin() as conn:
            conn.execute(tasks.insert(), rows)
    finally:
        engine.dispose()
    return rows


def fill_journal(data_dir: Path, api_url: str, rows: list[dict], count: int) -> None:
    """Submissions for the newest `count` tasks (prompt, request), in batches of four, some reviewed."""
    from dailies.journal import Journal, Scope, Submission

    journal = Journal(data_dir / "dashboard" / "journal.sqlite3").scoped(Scope.of(api_url, API_KEY))
    try:
        newest = rows[::-1][:count]
        batch = None
        for index, row in enumerate(newest):
            request = json.loads(row["request"])
            if index % 4 == 0:
                batch = journal.new_batch(f"bench batch {index // 4}", "text")
            journal.record_submission(Submission(
                task_id=row["id"], batch_id=batch, submitted_at=row["created_at"], base_url=api_url,
                model=request["model"], mode="text", prompt=request["content"][0]["text"], request=request))
            if index % 7 == 0 and row["status"] == "succeeded":
                journal.set_status(row["id"], "approved" if index % 2 else "changes_requested")
                journal.rate(row["id"], index % 5 + 1)
                journal.add_comment(row["id"], f"bench note {index}", timecode=1.0)
    finally:
        journal.close()


# ---------- the two servers ----------


@dataclass
class Child:
    """A server child process, stopped by `dailies.launcher.stop_processes` (always called)."""

    process: subprocess.Popen
    url: str


def start_child(command: list[str], env: dict[str, str], url: str, health: str, log: Path) -> Child:
    from dailies.launcher import stop_processes, wait_until_up

    with log.open("w") as out:
        process = subprocess.Popen(command, env=env, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT)
    try:
        wait_until_up(url + health, process, log.stem, timeout=120)
    except RuntimeError:
        stop_processes([process])
        print(log.read_text()[-2000:], file=sys.stderr)
        raise
    return Child(process, url)


def start_service(data_dir: Path) -> Child:
    port = service_bench.free_port()
    env = dict(os.environ, DAILIES_API_KEYS=f"{PROJECT}:{API_KEY}")
    command = [sys.executable, "-m", "dailies.cli", "serve", "--data-dir", str(data_dir), "--port", str(port),
               "--slots", "0", "--log-file", str(data_dir / "service.log")]
    return start_child(command, env, f"http://127.0.0.1:{port}", "/healthz", data_dir / "service.out")


def start_dashboard(data_dir: Path, api_url: str, run_log: Path, profile_dir: Path | None,
                    script: Path | None = None) -> Child:
    """The dashboard (or, given `script`, another app run the same way: the bare app) with its runs timed."""
    from dailies.launcher import dashboard_env

    port = service_bench.free_port()
    env = dashboard_env(dict(os.environ), api_url, API_KEY, data_dir, team=False)
    env[RUN_LOG_ENV] = str(run_log)
    if profile_dir is not None:
        env[PROFILE_ENV] = str(profile_dir)
    command = [sys.executable, __file__, "--role", "dashboard", "--port", str(port)]
    if script is not None:
        command += ["--script", str(script)]
    log = data_dir / f"{'dashboard' if script is None else script.stem}.out"
    return start_child(command, env, f"http://127.0.0.1:{port}", "/_stcore/health", log)


def serve_dashboard(port: int, script: Path | None) -> None:
    """The dashboard as `dailies dashboard` runs it (or `script` with the same flags), with every
    script run timed (child process)."""
    from streamlit.web import cli

    from dailies.launcher import streamlit_command

    install_run_timer(Path(os.environ[RUN_LOG_ENV]), os.environ.get(PROFILE_ENV))
    command = streamlit_command(port)
    if script is not None:
        command[command.index("run") + 1] = str(script)
    sys.argv = ["streamlit", *command[command.index("streamlit") + 1:]]
    cli.main(prog_name="streamlit")


class Meters:
    """What a run's timer reads at its start and end, besides the clocks: time in garbage collection
    (any thread: a collection holds the GIL) and time waiting for the service (the typed client's
    HTTP exchanges, this thread's)."""

    def __init__(self) -> None:
        self.collecting = 0.0
        self._collection_began = 0.0
        self._waits = threading.local()

    def install(self) -> None:
        import gc

        from dailies.client import sync

        gc.callbacks.append(self._on_collection)
        send = sync.Client._send

        def timed_send(client, *args, **kwargs):
            started = time.perf_counter()
            try:
                return send(client, *args, **kwargs)
            finally:
                self._waits.total = self.waiting() + time.perf_counter() - started

        sync.Client._send = timed_send

    def waiting(self) -> float:
        return getattr(self._waits, "total", 0.0)

    def _on_collection(self, phase: str, info: dict) -> None:
        if phase == "start":
            self._collection_began = time.perf_counter()
        else:
            self.collecting += time.perf_counter() - self._collection_began


def install_run_timer(log: Path, profile_dir: str | None) -> None:
    """Time each script run (a page run or a fragment run, widget callbacks included) where Streamlit's
    script runner executes it; append one JSON line to `log` for each: when it began ("at"), its wall
    time ("ms"), the CPU time of its thread ("cpu_ms": on a busy machine the two part), its wait for
    the service ("http_ms"), garbage collection meanwhile ("gc_ms"), whether it was a fragment's run,
    and the page. Then a line {"at", "after_ms"} for Streamlit's own work after each run (stale
    widgets, orphaned media files), before the browser hears that the run has finished."""
    from streamlit.runtime.scriptrunner import script_runner

    execute, finish = script_runner.exec_func_with_error_handling, script_runner.ScriptRunner._on_script_finished
    meters, lock, numbers = Meters(), threading.Lock(), iter(range(1_000_000))
    meters.install()

    def write(line: dict) -> int:
        with lock, log.open("a") as out:
            out.write(json.dumps(line) + "\n")
            return next(numbers)

    def timed(func, ctx):
        profiler = start_profiler() if profile_dir else None
        at, started, cpu = time.time(), time.perf_counter(), time.thread_time()
        collected, waited = meters.collecting, meters.waiting()
        try:
            return execute(func, ctx)
        finally:
            ms = (time.perf_counter() - started) * 1000
            page = ctx.pages_manager.get_pages().get(ctx.page_script_hash, {}).get("url_pathname") or "compose"
            kind = "fragment" if ctx.fragment_ids_this_run else "page"
            number = write({"at": at, "ms": round(ms, 1), "cpu_ms": round((time.thread_time() - cpu) * 1000, 1),
                            "http_ms": round((meters.waiting() - waited) * 1000, 1),
                            "gc_ms": round((meters.collecting - collected) * 1000, 1),
                            "fragment": kind == "fragment", "page": page})
            if profiler is not None:
                profiler.stop()
                Path(profile_dir, f"{number:04d}-{page}-{kind}-{ms:.0f}ms.txt").write_text(
                    profiler.output_text(unicode=True, color=False, show_all=False))

    def timed_finish(runner, *args, **kwargs):
        at, started = time.time(), time.perf_counter()
        try:
            return finish(runner, *args, **kwargs)
        finally:
            write({"at": at, "after_ms": round((time.perf_counter() - started) * 1000, 1)})

    script_runner.exec_func_with_error_handling = timed
    script_runner.ScriptRunner._on_script_finished = timed_finish


def start_profiler():
    from pyinstrument import Profiler

    profiler = Profiler(interval=0.0005, async_mode="disabled")
    profiler.start()
    return profiler


# ---------- the browser ----------


# Streamlit's websocket, watched from inside the page (an init script): when the person pressed, when
# the page sent its messages, when it received each run's start (`new_session`) and end
# (`script_finished`), all on the page's own clock (ms), so the delays of the Playwright driver and
# its events do not count.
PAGE_WATCHER = """
(() => {
  const NEW_SESSION = %d, SCRIPT_FINISHED = %d, EARLY_FOR_RERUN = %d, NOISY = '%s';
  const log = window.__runs = {presses: [], events: []};
  document.addEventListener('pointerdown', () => log.presses.push(performance.now()), true);
  // The moments the page stops showing anything stale, a skeleton or the running indicator, noted as
  // they happen: a page that is quiet again by the time the driver looks was not quiet all along.
  let noisy = false;
  new MutationObserver(() => {
    const now = document.querySelector(NOISY) !== null;
    if (noisy && !now) log.events.push([performance.now(), 'quiet']);
    noisy = now;
  }).observe(document, {subtree: true, childList: true, attributes: true, attributeFilter: ['data-stale']});
  // The top-level fields of a protobuf message: field number -> its value (varints) or 0.
  function topFields(bytes) {
    const out = new Map();
    let i = 0;
    const varint = () => {
      let shift = 0, value = 0, b;
      do { b = bytes[i++]; value += (b & 0x7f) * 2 ** shift; shift += 7; } while (b & 0x80);
      return value;
    };
    while (i < bytes.length) {
      const tag = varint(), field = Math.floor(tag / 8), wire = tag & 7;
      if (wire === 0) out.set(field, varint());
      else if (wire === 2) { const length = varint(); i += length; out.set(field, 0); }
      else if (wire === 1) { i += 8; out.set(field, 0); }
      else if (wire === 5) { i += 4; out.set(field, 0); }
      else break;
    }
    return out;
  }
  function note(at, buffer) {
    const fields = topFields(new Uint8Array(buffer));
    if (fields.has(NEW_SESSION)) log.events.push([at, 'start']);
    else if (fields.has(SCRIPT_FINISHED))
      log.events.push([at, fields.get(SCRIPT_FINISHED) === EARLY_FOR_RERUN ? 'rerun' : 'finish']);
  }
  const Native = window.WebSocket;
  window.WebSocket = class extends Native {
    constructor(...args) {
      super(...args);
      if (String(args[0]).includes('_stcore/stream')) {
        this.addEventListener('open', () => log.events.push([performance.now(), 'socket']));
        this.addEventListener('message', (event) => {
          const at = performance.now();
          if (event.data instanceof ArrayBuffer) note(at, event.data);
          else if (event.data instanceof Blob) event.data.arrayBuffer().then((b) => note(at, b));
        });
      }
    }
    send(data) {
      log.events.push([performance.now(), 'sent']);
      return super.send(data);
    }
  };
})();
"""
NOISY = ('[data-stale="true"], [data-testid="stSkeleton"], [data-testid="stAppSkeleton"], '
         '[data-testid="stStatusWidget"]')
QUIET_DOM = f"""!document.querySelector('{NOISY}')"""
READ_LOG = f"""(mark) => ({{now: performance.now(), quiet: {QUIET_DOM},
    presses: window.__runs.presses.filter((t) => t >= mark), events: window.__runs.events.filter((e) => e[0] >= mark)}})
"""


def page_watcher() -> str:
    from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

    fields = ForwardMsg.DESCRIPTOR.fields_by_name
    return PAGE_WATCHER % (fields["new_session"].number, fields["script_finished"].number,
                           ForwardMsg.ScriptFinishedStatus.FINISHED_EARLY_FOR_RERUN, NOISY)


def page_now(tab) -> float:
    return tab.evaluate("performance.now()")


@dataclass
class Done:
    """An interaction as the page saw it, in ms of the page's clock."""

    pressed: float
    finished: float
    events: list[tuple[float, str]]

    @property
    def ms(self) -> float:
        return self.finished - self.pressed


def wait_done(tab, mark: float) -> Done:
    """From the press after `mark` until the run(s) it caused are over and the page is quiet: the
    last run's `script_finished`, or the last moment the page stopped showing stale elements,
    skeletons or the running indicator if later."""
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        tab.wait_for_timeout(10)
        log = tab.evaluate(READ_LOG, mark)
        events = [tuple(e) for e in log["events"]]
        runs = [e for e in events if e[1] in page_loads.RUN_EVENTS]
        if not log["presses"] or not runs or runs[-1][1] != "finish":
            continue  # nothing yet, a run in progress, or one that stopped for a rerun
        if log["now"] - runs[-1][0] < GRACE_S * 1000:
            continue
        while not log["quiet"] and time.monotonic() < deadline:
            tab.wait_for_timeout(10)
            log = tab.evaluate(READ_LOG, mark)
        events = [tuple(e) for e in log["events"]]
        return Done(log["presses"][0], page_loads.settled_at(events), events)
    raise TimeoutError("the run did not finish")


def settle(tab) -> None:
    """Wait until no run has started or finished for a second (between measured steps; not timed)."""
    while True:
        tab.wait_for_timeout(200)
        log = tab.evaluate(READ_LOG, 0)
        last = max((e[0] for e in log["events"] if e[1] in page_loads.RUN_EVENTS), default=0.0)
        if log["now"] - last > 1000 and log["quiet"]:
            return


def click(tab, locator) -> float:
    """Click the middle of `locator` with the mouse; the page's clock just before (ms)."""
    locator.wait_for(state="visible")
    locator.scroll_into_view_if_needed()
    box = locator.bounding_box()
    mark = page_now(tab)
    tab.mouse.click(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    return mark


@dataclass
class Timing:
    name: str
    browser_ms: list[float] = field(default_factory=list)
    script_ms: list[float] = field(default_factory=list)  # summed over the runs of one interaction
    script_cpu_ms: list[float] = field(default_factory=list)  # the same runs' CPU time
    runs: list[int] = field(default_factory=list)


def describe(line: dict, pressed: float) -> str:
    """A line of the run log for --timeline: 'run@12+40 (cpu 20, http 9, gc 0)', or 'after+1' (Streamlit's
    own work once the script is done, before the browser hears of it)."""
    if "after_ms" in line:
        return f"after+{line['after_ms']:.0f}"
    return (f"run@{(line['at'] - pressed) * 1000:.0f}+{line['ms']:.0f} (cpu {line['cpu_ms']:.0f}, "
            f"http {line['http_ms']:.0f}, gc {line['gc_ms']:.0f})")


class Session:
    """One Chromium tab on the dashboard, with the run log read alongside."""

    def __init__(self, tab, ui_url: str, run_log: Path, timeline: bool = False) -> None:
        self.tab, self.ui_url, self.run_log, self.timeline = tab, ui_url, run_log, timeline
        self.timings: dict[str, Timing] = {}

    def measure(self, name: str, action: Callable[[], float]) -> None:
        """Run `action` (which clicks and returns the page's clock just before), wait for the page, record."""
        wall, page = time.time(), page_now(self.tab)
        done = wait_done(self.tab, action())
        pressed = wall + (done.pressed - page) / 1000  # the press, on the clock of the run log
        lines = [r for r in self._runs() if wall - 0.01 <= r["at"] <= time.time()]
        runs = [r for r in lines if "ms" in r]
        timing = self.timings.setdefault(name, Timing(name))
        timing.browser_ms.append(done.ms)
        timing.script_ms.append(sum(r["ms"] for r in runs))
        timing.script_cpu_ms.append(sum(r["cpu_ms"] for r in runs))
        timing.runs.append(len(runs))
        if self.timeline:
            events = " ".join(f"{kind}@{at - done.pressed:.0f}" for at, kind in done.events)
            server = " ".join(describe(line, pressed) for line in lines)
            print(f"  {name:<20} {done.ms:6.0f} ms  page: {events}  server: {server}")
        settle(self.tab)

    def _runs(self) -> list[dict]:
        if not self.run_log.exists():
            return []
        return [json.loads(line) for line in self.run_log.read_text().splitlines() if line.strip()]

    def nav(self, title: str):
        return self.tab.locator('[data-testid="stSidebarNav"]').get_by_text(title, exact=True)

    def open_page(self, title: str) -> float:
        return click(self.tab, self.nav(title))


def interactions(session: Session, repeat: int) -> None:
    tab = session.tab
    tab.goto(session.ui_url + "/tasks")
    tab.get_by_role("heading", name="Tasks", exact=True).wait_for(timeout=120_000)
    settle(tab)
    # One untimed pass over every page first: the first run of each page in a fresh server imports its
    # modules and fills caches, which a person meets once per server, not per visit.
    for title in ("Compose", "Review", "Tasks"):
        click(tab, session.nav(title))
        settle(tab)

    for _ in range(repeat):
        for title in ("Compose", "Tasks", "Review"):
            session.measure(f"open {title}", lambda title=title: session.open_page(title))

    # Review: a review status and a star on the cards of the first page, each a different card (a card
    # met again gets the other status, so every pick changes something).
    for index in range(repeat):
        status = "Approved" if (index // 6) % 2 == 0 else "Changes requested"
        session.measure("status (Approved)", lambda index=index, status=status: pick_card_status(tab, index % 6,
                                                                                                 status))
    for index in range(repeat):
        star = tab.locator('[data-testid="stFeedback"]').nth(index % 6).locator("button, [role=radio]").nth(
            index % 5)
        session.measure("star", lambda star=star: click(tab, star))

    click(tab, session.nav("Tasks"))
    settle(tab)
    for index in range(repeat):
        session.measure("filter (status)", lambda index=index: pick_status(tab, "✅ succeeded" if index % 2 == 0
                                                                          else "All statuses"))
    for _ in range(repeat):
        session.measure("refresh (Tasks)", lambda: click(tab, tab.get_by_role("button", name="⟳ Refresh")))
    for index in range(repeat):
        session.measure("open a task (row)", lambda index=index: click_row(tab, index % 10))
        click(tab, tab.get_by_role("button", name="✖ Close"))
        settle(tab)


def pick_card_status(tab, card: int, option: str) -> float:
    """Choose `option` in the review status of the `card`-th card on Review."""
    box = tab.get_by_role("combobox", name="Status").nth(card)
    box.scroll_into_view_if_needed()  # its list opens below it: a box at the window's edge opens none
    box.click()
    return click(tab, tab.get_by_role("option", name=option, exact=True))


def pick_status(tab, option: str) -> float:
    tab.get_by_role("combobox", name="Status").click()
    return click(tab, tab.get_by_role("option", name=option, exact=True))


def click_row(tab, row: int) -> float:
    """Click the row marker of row `row` of the task table (the grid draws on a canvas)."""
    grid = tab.locator('[data-testid="stDataFrame"]').first
    grid.scroll_into_view_if_needed()
    box = grid.bounding_box()
    row_height = header_height = 35
    mark = page_now(tab)
    tab.mouse.click(box["x"] + 15, box["y"] + header_height + row_height * row + row_height / 2)
    return mark


# ---------- report ----------


def percentile(values: list[float], q: float) -> float:
    return service_bench.percentile(sorted(values), q)


def report(timings: dict[str, Timing], page_runs: dict[str, list[dict]]) -> None:
    print(f"{'interaction':<22}{'n':>4}{'p50 ms':>9}{'p95 ms':>9}{'script p50':>12}{'script p95':>12}"
          f"{'cpu p50':>9}{'runs':>6}{'goal':>7}")
    for timing in timings.values():
        goal = PAGE_GOAL_MS if timing.name.startswith("open ") and "task" not in timing.name else INTERACTION_GOAL_MS
        p50 = statistics.median(timing.browser_ms)
        flag = "" if p50 <= goal else "  > goal"
        print(f"{timing.name:<22}{len(timing.browser_ms):>4}{p50:>9.0f}{percentile(timing.browser_ms, 0.95):>9.0f}"
              f"{statistics.median(timing.script_ms):>12.0f}{percentile(timing.script_ms, 0.95):>12.0f}"
              f"{statistics.median(timing.script_cpu_ms):>9.0f}{statistics.median(timing.runs):>6.0f}{goal:>7}{flag}")
    print()
    print("script runs by page (every run in the measured part, page runs and fragment runs apart);")
    print("cpu: the script thread's CPU time; http: its wait for the service; gc: garbage collection during the run")
    print(f"{'page':<22}{'n':>4}{'p50 ms':>9}{'p95 ms':>9}{'cpu p50':>9}{'cpu p95':>9}{'http p50':>10}{'gc p95':>8}")
    for name, runs in sorted(page_runs.items()):
        wall, cpu, http, collected = ([run[k] for run in runs] for k in ("ms", "cpu_ms", "http_ms", "gc_ms"))
        print(f"{name:<22}{len(runs):>4}{statistics.median(wall):>9.0f}{percentile(wall, 0.95):>9.0f}"
              f"{statistics.median(cpu):>9.0f}{percentile(cpu, 0.95):>9.0f}{statistics.median(http):>10.0f}"
              f"{percentile(collected, 0.95):>8.0f}")


def runs_by_page(run_log: Path, since: float) -> dict[str, list[dict]]:
    out: dict[str, list[dict]] = {}
    for line in run_log.read_text().splitlines():
        run = json.loads(line)
        if run["at"] >= since and "ms" in run:
            out.setdefault(f"{run['page']} ({'fragment' if run['fragment'] else 'page'})", []).append(run)
    return out


LOAD_GOAL, DEEP_LINK_GOAL = 1.5, 2.0


def load_targets(task_id: str, pages: list[str] | None = None) -> list:
    Target = page_loads.Target
    return [t for t in [Target("Compose", "/"), Target("Tasks", "/tasks"), Target("Review", "/review"),
            Target("Settings", "/settings"), Target("Tasks ?task=", f"/tasks?task={task_id}"),
            Target("Review ?task=", f"/review?task={task_id}")] if not pages or t.name.split()[0] in pages]


def full_loads(browser, ui_url: str, run_log: Path, bare_url: str, bare_log: Path, form_url: str, form_log: Path,
               task_id: str, repeat: int, no_media: bool, timeline: bool, pages: list[str] | None = None) -> dict:
    """Every page and deep link of the dashboard, of the bare app and of the bare form app, each load a
    new session (cold and warm: bench/page_loads.py), after one untimed round (a page's first run in a
    fresh server imports its modules, once per server)."""
    if repeat <= 0:
        return {}

    def runs_since(log: Path):
        return lambda since: [r for r in Session(None, "", log)._runs() if r["at"] >= since]

    def new_context(browser):
        return load_context(browser, no_media)

    apps = [page_loads.App("dailies", ui_url, runs_since(run_log)),
            page_loads.App("bare", bare_url, runs_since(bare_log)),
            page_loads.App("form", form_url, runs_since(form_log))]
    targets = load_targets(task_id, pages)
    page_loads.measure_loads(browser, apps, targets, 1, new_context, READ_LOG)
    return page_loads.measure_loads(browser, apps, targets, repeat, new_context, READ_LOG, timeline)


def load_context(browser, no_media: bool):
    """A new browser context (nothing cached) with the page watcher, for one full load and its reload."""
    context = browser.new_context(viewport={"width": 1440, "height": 1000})
    context.add_init_script(page_watcher())
    if no_media:
        context.route("**/files/**", lambda route: route.abort())
    return context


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", type=int, default=1000, help="tasks on the service (default 1000)")
    parser.add_argument("--journal", type=int, default=300, help="submissions in the journal (default 300)")
    parser.add_argument("--repeat", type=int, default=7, help="repetitions of each interaction (default 7)")
    parser.add_argument("--loads", type=int, default=5,
                        help="full loads of each page and deep link, cold and warm, per app (default 5; 0: none)")
    parser.add_argument("--skip-interactions", action="store_true", help="only the full loads")
    parser.add_argument("--pages", nargs="+", metavar="PAGE",
                        help="full loads of these pages only (their deep links included), e.g. --pages Review")
    parser.add_argument("--browser-profile", action="store_true",
                        help="also sample the browser's main thread over one warm load of each page, both apps")
    parser.add_argument("--active", action="store_true", help="keep the queued and running rows (the Tasks "
                                                               "page then refreshes itself every 3 s)")
    parser.add_argument("--profile", type=Path, help="write a pyinstrument profile of every script run here")
    parser.add_argument("--timeline", action="store_true",
                        help="print each interaction's websocket messages and script runs, in ms from the click")
    parser.add_argument("--no-media", action="store_true",
                        help="the browser does not load result videos and images (to tell their cost apart)")
    parser.add_argument("--keep", action="store_true", help="keep the temporary folder (printed)")
    parser.add_argument("--role", choices=("dashboard",), help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--script", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.role == "dashboard":
        serve_dashboard(args.port, args.script)
        return

    from playwright.sync_api import sync_playwright

    from dailies.launcher import stop_processes

    workdir = Path(tempfile.mkdtemp(prefix="dailies-bench-dashboard-"))
    children: list[Child] = []
    try:
        service_dir = workdir / "service"
        service_dir.mkdir()
        rows = fill_service(service_dir, args.tasks, args.active)
        service = start_service(service_dir)
        children.append(service)
        api_url = f"{service.url}/api/v3"
        dashboard_dir = workdir / "dashboard"
        fill_journal(dashboard_dir, api_url, rows, args.journal)
        if args.profile:
            args.profile.mkdir(parents=True, exist_ok=True)
        run_log = workdir / "runs.jsonl"
        dashboard = start_dashboard(dashboard_dir, api_url, run_log, args.profile)
        children.append(dashboard)
        bare_script, bare_log = workdir / "bare_app.py", workdir / "bare_runs.jsonl"
        bare_script.write_text(page_loads.BARE_APP)
        bare = start_dashboard(dashboard_dir, api_url, bare_log, None, script=bare_script)
        children.append(bare)
        form_script, form_log = workdir / "bare_form_app.py", workdir / "bare_form_runs.jsonl"
        form_script.write_text(page_loads.BARE_FORM_APP)
        form = start_dashboard(dashboard_dir, api_url, form_log, None, script=form_script)
        children.append(form)
        newest_succeeded = next(r["id"] for r in reversed(rows) if r["status"] == "succeeded")
        statuses = {s: sum(r["status"] == s for r in rows) for s in {r["status"] for r in rows}}
        print(f"{len(rows)} tasks ({', '.join(f'{n} {s}' for s, n in sorted(statuses.items()))}), "
              f"{args.journal} journal entries; python {sys.version.split()[0]}, {os.cpu_count()} CPUs, "
              f"{service_bench.load_average()}")
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            try:
                context = browser.new_context(viewport={"width": 1440, "height": 1000})
                context.add_init_script(page_watcher())
                if args.no_media:
                    context.route("**/files/**", lambda route: route.abort())
                tab = context.new_page()
                tab.set_default_timeout(60_000)
                session = Session(tab, dashboard.url, run_log, args.timeline)
                measured_from = time.time()
                if not args.skip_interactions:
                    interactions(session, args.repeat)
                context.close()
                loads = full_loads(browser, dashboard.url, run_log, bare.url, bare_log, form.url, form_log,
                                   newest_succeeded, args.loads, args.no_media, args.timeline, args.pages)
                profiles = {}
                if args.browser_profile:
                    for target in load_targets(newest_succeeded):
                        for name, url in (("dailies", dashboard.url), ("bare", bare.url)):
                            profiles[f"{name} {target.name}"] = page_loads.browser_profile(
                                browser, url + target.path, lambda b: load_context(b, args.no_media), READ_LOG)
            finally:
                browser.close()
        if not args.skip_interactions:
            print()
            report(session.timings, runs_by_page(run_log, measured_from))
        if loads:
            print(f"\nfull loads: a new session per load, median of {args.loads}; ratio = Dailies / the bare app "
                  f"(goal: a page {LOAD_GOAL}x, a deep link {DEEP_LINK_GOAL}x); {service_bench.load_average()}")
            page_loads.report(loads, load_targets(newest_succeeded, args.pages), LOAD_GOAL, DEEP_LINK_GOAL)
        if profiles:
            page_loads.report_browser_profiles(profiles)
        if args.keep:
            print(f"\nkept: {workdir}")
    finally:
        stop_processes([child.process for child in children])
        if not args.keep:
            shutil.rmtree(workdir, ignore_errors=True)


if __name__ == "__main__":
    main()
