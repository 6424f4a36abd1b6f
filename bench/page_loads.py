"""Full page loads for bench/dashboard.py: each page and deep link of the dashboard opened as a new
Streamlit session, against a bare Streamlit app of the same shape served by the same Streamlit in the
same run.

A load lasts from the navigation's start (the page's clock begins there: `performance.now()` is 0 at
the navigation's time origin, so the Playwright driver's own delays do not count) until the page has
received `script_finished` for the last run of the new session (no other run starting within the
grace period, not counted) and shows nothing stale, no skeleton and no running indicator (the page
notes the moment it last turned quiet, so a page quiet again by the time the driver looks is timed
to that moment, not to the run's end).

- cold: a new browser context (no HTTP cache, no cookies), a new tab, `goto`;
- warm: a reload of that tab (the browser's cache holds Streamlit's scripts, styles and fonts).

Both are new Streamlit sessions: a reload closes the old WebSocket and opens a new one.
"""

from __future__ import annotations

import re
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass, field

# The bare app: the dashboard's four addresses, each a header and a line of text, the list pages a
# header and a 100-row table, as a bare `st.navigation` app draws them. Written to a file and run
# with the dashboard's own `streamlit run` flags.
BARE_APP = '''
"""A bare Streamlit app of the dashboard's shape (bench/page_loads.py)."""
import pandas as pd
import streamlit as st


def text(title):
    st.header(title)
    st.write("A line of text, as a bare page shows it.")


def table(title):
    st.header(title)
    st.dataframe(pd.DataFrame({"id": [f"cgt-{i:05d}" for i in range(100)], "status": ["succeeded"] * 100,
                               "tokens": list(range(100))}), hide_index=True)


st.set_page_config(page_title="Bare", layout="wide")
st.navigation([
    st.Page(lambda: text("Compose"), title="Compose", url_path="compose", default=True),
    st.Page(lambda: table("Tasks"), title="Tasks", url_path="tasks"),
    st.Page(lambda: table("Review"), title="Review", url_path="review"),
    st.Page(lambda: text("Settings"), title="Settings", url_path="settings"),
]).run()
'''

# The bare form app: the same four addresses, each page showing the element types the dashboard's page
# of that name shows on a first run (Streamlit loads each type's script when a page first uses it, and
# a page waits for them: see bench/README.md), with nothing behind them: no service, no journal, no
# custom component. Its load is the floor Streamlit itself sets for such a page; the table gives the
# dashboard's ratio to it beside the ratio to the bare app.
BARE_FORM_APP = '''
"""A bare Streamlit app with the dashboard's element types on each page (bench/page_loads.py)."""
import json

import pandas as pd
import streamlit as st

VIDEO = "https://example.invalid/clip.mp4"


def compose():
    st.header("Compose")
    left, right = st.columns([3, 2])
    with left:
        st.subheader("Model and mode")
        st.selectbox("Model", ["Seedance 2.0", "Seedance 1.5 Pro"])
        st.radio("Mode", ["Text only", "First frame", "First and last frame", "References"], horizontal=True)
        st.text_area("Prompt", placeholder="Describe the shot")
        st.subheader("Output")
        st.selectbox("Resolution", ["480p", "720p", "1080p"])
        st.checkbox("Let the model choose the length")
        st.slider("Duration (seconds)", 4, 15, 5)
        st.number_input("Seed", -1, 2**32 - 1, -1)
        st.text_input("Callback URL")
        st.checkbox("Watermark")
        st.toggle("Generate sound", value=True)
    with right:
        st.subheader("Request")
        st.metric("Video frame", "1280x720")
        st.metric("Estimated tokens", "108,900")
        st.error("content[0].text: the prompt is empty")
        st.button("Submit", disabled=True)
        # The JSON body as the dashboard shows it: preformatted HTML (st.code's highlighter costs far more).
        st.html("<pre>" + json.dumps({"model": "doubao-seedance-2-0-260128", "content": []}, indent=2) + "</pre>")


def filters():
    cols = st.columns(4)
    cols[0].selectbox("Status", ["All", "Succeeded"])
    cols[1].text_input("Task ids")
    cols[2].number_input("Page size", 1, 500, 100)
    cols[3].radio("Tier", ["All", "default", "flex"], horizontal=True)
    st.text_area("Ids", height=68)


def tasks():
    st.header("Tasks")
    filters()
    st.dataframe(pd.DataFrame({"id": [f"cgt-{i:05d}" for i in range(100)], "status": ["succeeded"] * 100,
                               "tokens": list(range(100))}), hide_index=True)


def review():
    st.header("Review")
    cols = st.columns(5)
    for col, label in zip(cols, ("Show", "Made by", "Batch"), strict=False):
        col.selectbox(label, ["All"])
    cols[3].multiselect("Compare", ["a", "b"])
    cols[4].button("Refresh")
    for label in ("Reel", "Report", "Share"):
        with st.expander(label):
            st.write("Opened on demand.")
    st.pagination(26, key="page")
    for row in range(2):
        for i, col in enumerate(st.columns(3)):
            with col.container(border=True):
                st.video(VIDEO)
                st.markdown("**a prompt**")
                st.caption("details")
                st.segmented_control("Version", ["v1"], default="v1", key=f"v{row}{i}")
                st.selectbox("Status", ["Needs review", "Approved"], key=f"s{row}{i}")
                st.feedback("stars", key=f"f{row}{i}")
                st.text_area("Comment", key=f"c{row}{i}", height=68)
                st.button("Post", key=f"p{row}{i}")


def settings():
    st.header("Settings")
    with st.form("key"):
        st.text_input("API key", type="password")
        st.text_input("Your name")
        st.form_submit_button("Save")
    st.selectbox("Catalog", ["Volcengine", "BytePlus"])
    st.button("Forget this key")


st.set_page_config(page_title="Bare form", layout="wide")
st.navigation([
    st.Page(compose, title="Compose", url_path="compose", default=True),
    st.Page(tasks, title="Tasks", url_path="tasks"),
    st.Page(review, title="Review", url_path="review"),
    st.Page(settings, title="Settings", url_path="settings"),
]).run()
'''

# The page watcher's events that belong to runs (it also notes sent messages and the socket's opening).
RUN_EVENTS = ("start", "finish", "rerun")
GRACE_MS = 350
TIMEOUT_S = 60.0


@dataclass(frozen=True)
class Target:
    name: str
    path: str  # below the app's root, with the query


@dataclass
class Load:
    """One full load as the page saw it, in ms from the navigation's start."""

    finished: float
    events: list  # the page watcher's (ms, kind) pairs
    socket: float  # the page opened Streamlit's WebSocket (its scripts had loaded and run)
    started: float  # the first run's `new_session` arrived
    runs: int  # runs the session made (script_finished messages, reruns included)


@dataclass
class LoadTimes:
    loads: list[Load] = field(default_factory=list)
    script_ms: list[float] = field(default_factory=list)  # the server's runs of each load, summed

    def median(self, attribute: str) -> float:
        return statistics.median(getattr(load, attribute) for load in self.loads)


def settled_at(events: list) -> float:
    """When the page last settled: the last run's `script_finished`, or the last moment it stopped
    showing anything stale, a skeleton or the running indicator (the watcher's "quiet"), if later."""
    return max(at for at, kind in events if kind in ("finish", "quiet"))


def wait_loaded(tab, read_log: str) -> Load:
    """Until the new session's last run has finished and the page is quiet (see the module)."""
    deadline = time.monotonic() + TIMEOUT_S
    while time.monotonic() < deadline:
        tab.wait_for_timeout(10)
        log = tab.evaluate(read_log, 0)
        runs = [e for e in log["events"] if e[1] in RUN_EVENTS]
        if not runs or runs[-1][1] != "finish" or log["now"] - runs[-1][0] < GRACE_MS:
            continue
        while not log["quiet"] and time.monotonic() < deadline:
            tab.wait_for_timeout(10)
            log = tab.evaluate(read_log, 0)
        finished = settled_at(log["events"])
        socket = next((e[0] for e in log["events"] if e[1] == "socket"), float("nan"))
        started = next(e[0] for e in runs if e[1] == "start")
        return Load(finished, log["events"], socket, started, sum(e[1] == "finish" for e in runs))
    raise TimeoutError("the page did not finish loading")


@dataclass
class App:
    """A served app and its run log (the server's script runs, timed; see bench/dashboard.py)."""

    name: str
    url: str
    runs_since: Callable[[float], list[dict]]


def measure_loads(browser, apps: list[App], targets: list[Target], repeat: int, new_context: Callable,
                  read_log: str, timeline: bool = False) -> dict[tuple[str, str, str], LoadTimes]:
    """(app, target, "cold" | "warm") -> its loads. The apps take turns at each target, so a change in
    the machine's load touches both alike."""
    out: dict[tuple[str, str, str], LoadTimes] = {}
    for _ in range(repeat):
        for target in targets:
            for app in apps:
                context = new_context(browser)
                try:
                    tab = context.new_page()
                    tab.set_default_timeout(60_000)
                    for kind in ("cold", "warm"):
                        since = time.time()
                        if kind == "cold":
                            tab.goto(app.url + target.path)
                        else:
                            tab.reload()
                        load = wait_loaded(tab, read_log)
                        times = out.setdefault((app.name, target.name, kind), LoadTimes())
                        times.loads.append(load)
                        runs = app.runs_since(since)
                        times.script_ms.append(sum(r["ms"] for r in runs if "ms" in r))
                        if timeline:
                            print(f"  {app.name:<8}{target.name:<15}{kind:<5}{load.finished:6.0f} ms  page: "
                                  + " ".join(f"{kind}@{at:.0f}" for at, kind in load.events)
                                  + "  server: " + " ".join(describe(run, since) for run in runs))
                finally:
                    context.close()
    return out


def describe(run: dict, since: float) -> str:
    """A server run-log line for --timeline: 'run@120+40 (cpu 20, http 9)' in ms from the navigation's
    call, or 'after+1' (Streamlit's own work once a script is done)."""
    if "after_ms" in run:
        return f"after+{run['after_ms']:.0f}"
    return f"run@{(run['at'] - since) * 1000:.0f}+{run['ms']:.0f} (cpu {run['cpu_ms']:.0f}, http {run['http_ms']:.0f})"


def report(results: dict[tuple[str, str, str], LoadTimes], targets: list[Target], page_goal: float,
           link_goal: float) -> None:
    """The table: per target and kind, Dailies and bare (median ms from the navigation's start), their
    ratio against the goal, the bare form app's and Dailies' ratio to it, and where Dailies' time goes
    (socket open, first run's start, script)."""
    print(f"{'load':<16}{'kind':<6}{'dailies':>8}{'bare':>6}{'ratio':>7}{'goal':>6}  {'form':>5}{'/form':>6}  "
          f"{'socket':>7}{'1st run':>8}{'script':>7}{'runs':>5}  {'bare: socket':>12}{'1st run':>8}{'script':>7}")
    for target in targets:
        goal = link_goal if "?" in target.path else page_goal
        for kind in ("cold", "warm"):
            ours, bare = results[("dailies", target.name, kind)], results[("bare", target.name, kind)]
            form = results.get(("form", target.name, kind))
            ratio = ours.median("finished") / bare.median("finished")
            flag = "" if ratio <= goal else " >"
            form_cells = (f"{form.median('finished'):>5.0f}{ours.median('finished') / form.median('finished'):>6.2f}"
                          if form else f"{'':>11}")
            print(f"{target.name:<16}{kind:<6}{ours.median('finished'):>8.0f}{bare.median('finished'):>6.0f}"
                  f"{ratio:>7.2f}{goal:>5.1f}{flag:<2} {form_cells}  "
                  f"{ours.median('socket'):>7.0f}{ours.median('started'):>8.0f}"
                  f"{statistics.median(ours.script_ms):>7.0f}{ours.median('runs'):>5.0f}  "
                  f"{bare.median('socket'):>12.0f}{bare.median('started'):>8.0f}"
                  f"{statistics.median(bare.script_ms):>7.0f}")
    print("ms from the navigation's start, medians; form: the bare form app (the page's element types, nothing "
          "behind them), /form: Dailies' ratio to it; socket: the page opened Streamlit's WebSocket; 1st run: the "
          "session's first run began (new_session); script: the server's script runs of the load, summed.")


def browser_profile(browser, url: str, new_context: Callable, read_log: str) -> tuple[float, float, list]:
    """The browser's main thread over a warm load of `url` (a reload after a first load), sampled by
    Chromium's own profiler (CDP `Profiler`): (busy ms, load ms, [(where, ms)] largest first). "Where" is
    the script file a sample was in (Streamlit's chunks by name), or Chromium's own categories:
    "(program)" is native work (style, layout, paint, parsing and compiling scripts), "(garbage
    collector)" the JavaScript heap's."""
    context = new_context(browser)
    try:
        tab = context.new_page()
        tab.goto(url)
        wait_loaded(tab, read_log)
        cdp = context.new_cdp_session(tab)
        cdp.send("Profiler.enable")
        cdp.send("Profiler.setSamplingInterval", {"interval": 250})
        cdp.send("Profiler.start")
        tab.reload()
        load = wait_loaded(tab, read_log)
        profile = cdp.send("Profiler.stop")["profile"]
    finally:
        context.close()
    frames = {node["id"]: node["callFrame"] for node in profile["nodes"]}
    spent: dict[str, float] = {}
    for sample, delta in zip(profile["samples"], profile["timeDeltas"], strict=True):
        frame = frames[sample]
        where = frame["url"].rsplit("/", 1)[-1].split("?")[0] or frame["functionName"] or "(native)"
        where = re.sub(r"\.[\w-]{8}\.js$", ".js", where)  # Streamlit's chunks without their content hash
        spent[where] = spent.get(where, 0.0) + delta / 1000
    spent.pop("(idle)", None)
    return sum(spent.values()), load.finished, sorted(spent.items(), key=lambda item: -item[1])


def report_browser_profiles(profiles: dict[str, tuple[float, float, list]], top: int = 8) -> None:
    print("\nthe browser's main thread over one warm load (Chromium's sampling profiler; busy = not idle, from "
          "the reload until sampling stopped):")
    for name, (busy, finished, spent) in profiles.items():
        parts = ", ".join(f"{where} {ms:.0f}" for where, ms in spent[:top])
        print(f"  {name:<24} load {finished:5.0f} ms, busy {busy:5.0f} ms: {parts}")
