"""What each Streamlit element type adds to a new session's full load, on its own page: a header and a
line of text (the bare app's Compose page) plus one element of the type, against the page without it.

    python bench/element_costs.py              # 5 loads of each page, cold and warm
    python bench/element_costs.py --loads 9

Streamlit loads each element type's script (and the modules it imports) the first time a page shows
one, and evaluates it before it draws the element; meanwhile the element is a skeleton. This bench
measures that cost per type with bench/page_loads.py's full loads (from the navigation's start until
the run has finished and nothing is a skeleton), so a page's floor can be read off the types it shows:
the dashboard's Compose form shows ten types, its Review cards eight (bench/README.md). Four pages
combine types: the least a composer needs (a model, a mode, a prompt, a button); one of each type
Compose shows; a composer with the rest of the form behind popovers; and Compose's first view as the
dashboard draws it, every control and its help, with nothing behind it. The app is served as the
dashboard is (dashboard/server.py's middleware). It prints figures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import importlib.util
import re
import statistics
import sys
import tempfile
from pathlib import Path


def _dashboard_bench():
    """bench/dashboard.py, loaded by path: `import dashboard` is the dashboard package."""
    spec = importlib.util.spec_from_file_location("bench_dashboard", Path(__file__).resolve().parent / "dashboard.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


dashboard_bench = _dashboard_bench()  # its app runner, page watcher and browser flags
page_loads = dashboard_bench.page_loads

# One page per element type, each a header, a line of text and one element of that type; "text" has
# none. The types are those the dashboard's pages show on a first run (views/ and components/).
ELEMENTS_APP = '''
"""One page per element type (bench/element_costs.py)."""
import streamlit as st

ELEMENTS = {
    "text": lambda: None,
    "selectbox": lambda: st.selectbox("Model", ["a", "b"]),
    "radio": lambda: st.radio("Mode", ["x", "y"], horizontal=True),
    "text_area": lambda: st.text_area("Prompt"),
    "text_input": lambda: st.text_input("URL"),
    "number_input": lambda: st.number_input("Hours", 1, 48, 24),
    "checkbox": lambda: st.checkbox("Auto"),
    "slider": lambda: st.slider("Duration", 2, 12, 5),
    "metric": lambda: st.metric("Tokens", "108,900"),
    "button": lambda: st.button("Submit"),
    "html": lambda: st.html("<b>html</b>"),
    "code": lambda: st.code('{"a": 1}', language="json"),
    "json": lambda: st.json({"a": 1, "b": [1, 2]}),
    "video": lambda: st.video("https://example.invalid/clip.mp4"),
    "feedback": lambda: st.feedback("stars"),
    "segmented_control": lambda: st.segmented_control("Version", ["v1", "v2"], default="v1"),
    "multiselect": lambda: st.multiselect("Compare", ["a", "b"]),
    "pagination": lambda: st.pagination(20),
    "expander": lambda: st.expander("More").write("inside"),
    "popover": lambda: st.popover("More").write("inside"),
    "dataframe": lambda: st.dataframe({"id": list(range(100))}),
    "least_composer": lambda: least_composer(),
    "compose_types": lambda: compose_types(),
    "popover_composer": lambda: popover_composer(),
    "compose_replica": lambda: compose_replica(),
}


def least_composer():
    """The least a composer needs on a first look: a model, a mode, a prompt and a button."""
    st.selectbox("Model", ["a", "b"])
    st.radio("Mode", ["x", "y"], horizontal=True)
    st.text_area("Prompt")
    st.button("Submit")


def compose_types():
    """One of each type the dashboard's Compose page shows on a first run."""
    least_composer()
    st.checkbox("Auto")
    st.slider("Duration", 2, 12, 5)
    st.number_input("Seed", -1, 9, -1)
    st.text_input("URL")
    st.metric("Tokens", "108,900")
    st.html("<b>html</b>")


def popover_composer():
    """A composer whose first view is the least one plus what it needs to say what it will send: the
    model's capabilities, the prompt's length, the request as metrics and JSON (markdown), and the rest
    of the form behind four popovers (drawn only when opened)."""
    form, request = st.columns([3, 2], gap="large")
    with form:
        least_composer()
        st.caption("480p-4k · 4-15 s or the model's choice · references: images, videos, audio")
        st.caption("0 English words · 0 Chinese characters")
        for column, name in zip(st.columns(4), ("Output", "Options", "Delivery", "Variations")):
            column.popover(name).write("inside")
        st.caption("720p · adaptive · 5 s · sound on · no watermark · gives up after 48 h · 1 task")
    with request:
        st.subheader("Request")
        for label, value in (("Video frame", "1280×720"), ("Estimated tokens", "108,900"), ("Cost", "¥5.01")):
            st.markdown(f"{label}<br><span style='font-size:2rem'>{value}</span>", unsafe_allow_html=True)
        st.markdown("<pre>{\\"model\\": \\"doubao-seedance-2-0-260128\\"}</pre>", unsafe_allow_html=True)


def compose_replica():
    """Compose's first view as the dashboard draws it (every control, its help and the field messages),
    with nothing behind it: Streamlit's own floor for the page."""
    form, request = st.columns([3, 2], gap="large")
    with form:
        st.subheader("Model and mode")
        st.selectbox("Model", ["Seedance 2.0", "Seedance 1.0 Pro"], help="h")
        st.caption("480p-4k · 4-15 s or the model's choice · references: images, videos, audio")
        st.radio("Mode", ["Text only", "First frame", "First and last frame", "References"], horizontal=True)
        st.text_area("Prompt", placeholder="Describe the shot")
        st.error("- the prompt is empty")
        st.subheader("Output")
        left, right = st.columns(2)
        left.selectbox("Resolution", ["720p", "1080p"])
        right.selectbox("Ratio", ["adaptive", "16:9"], help="h")
        st.checkbox("Let the model choose the length (-1)")
        st.slider("Duration (seconds)", 4, 15, 5, help="h")
        st.subheader("Options")
        left, right = st.columns(2)
        left.number_input("Priority (0-9)", 0, 9, None, placeholder="not set", help="h")
        right.toggle("Generate sound", True, help="h")
        for name in ("Web search tool", "Watermark", "Return the last frame"):
            right.checkbox(name, help="h")
        st.subheader("Delivery")
        left, right = st.columns(2)
        left.number_input("Give up after (hours)", 1, 48, 48, help="h")
        right.text_input("Callback URL (optional)", help="h")
        left.text_input("Safety identifier (optional)", help="h")
        st.subheader("Variations")
        st.radio("Vary by", ["One prompt per line", "Same request again"], horizontal=True)
        st.number_input("How many tasks", 1, 10, 1)
    with request:
        st.subheader("Request")
        st.metric("Video frame", "1280×720", "16:9", delta_color="off", help="h")
        left, right = st.columns(2)
        left.metric("Estimated tokens", "108,900", "per task", delta_color="off", help="h")
        right.metric("Estimated cost", "¥5.01", "per task", delta_color="off", help="h")
        st.error("1 problem to fix before sending")
        st.button("Submit", type="primary", disabled=True, use_container_width=True)
        st.html("<pre>{\\"model\\": \\"doubao-seedance-2-0-260128\\"}</pre>")


def page_of(name):
    def page():
        st.header("Compose")
        st.write("A line of text, as a bare page shows it.")
        ELEMENTS[name]()
    return page


st.set_page_config(page_title="Element costs", layout="wide")
# Every measured page below the root, so each pays alike what Streamlit's page does before it connects
# there (a first probe of /<page>/_stcore/health, a 404, and 100 ms); the root page is not measured.
st.navigation([st.Page(page_of(name), title=name, url_path=name) for name in ELEMENTS]
              + [st.Page(lambda: st.write("The root page (not measured)."), title="root", url_path="root",
                         default=True)]).run()
'''
NAMES = re.findall(r'^    "(\w+)": lambda', ELEMENTS_APP, flags=re.MULTILINE)
# The app behind the dashboard's own middleware (dashboard/server.py), which spares every page below the
# root Streamlit's first probe of /<page>/_stcore/health (a 404 and a 100 ms wait before it connects).
SERVER = '''
import streamlit as st
from starlette.middleware import Middleware

from dashboard.server_address import ServerAddressHint

app = st.App(%r, middleware=[Middleware(ServerAddressHint, page_paths=%r, base_url_path=lambda: "")])
'''


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--loads", type=int, default=5, help="loads of each page, cold and warm (default 5)")
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    from dailies.launcher import stop_processes

    workdir = Path(tempfile.mkdtemp(prefix="dailies-bench-elements-"))
    script, log = workdir / "elements_app.py", workdir / "runs.jsonl"
    script.write_text(ELEMENTS_APP)
    server = workdir / "elements_server.py"  # served as the dashboard is: every page connects on the first try
    server.write_text(SERVER % (script.name, NAMES))
    app = dashboard_bench.start_dashboard(workdir, "http://127.0.0.1:9/api/v3", log, None, script=server)
    try:
        targets = [page_loads.Target(name, f"/{name}") for name in NAMES]
        apps = [page_loads.App("elements", app.url, lambda since: [])]
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path=dashboard_bench.CHROMIUM, args=dashboard_bench.CHROMIUM_ARGS)
            try:
                def new_context(b):
                    return dashboard_bench.load_context(b, no_media=False)

                page_loads.measure_loads(browser, apps, targets, 1, new_context, dashboard_bench.READ_LOG)
                results = page_loads.measure_loads(browser, apps, targets, args.loads, new_context,
                                                   dashboard_bench.READ_LOG)
            finally:
                browser.close()
        text = {kind: results[("elements", "text", kind)] for kind in ("cold", "warm")}
        print(f"a header and a line of text, plus one element of each type: median of {args.loads} full loads "
              f"(ms from the navigation's start); {dashboard_bench.service_bench.load_average()}")
        print(f"{'element':<20}{'cold':>7}{'ratio':>7}{'warm':>7}{'ratio':>7}{'run→ready':>11}")
        for name in NAMES:
            cold, warm = results[("elements", name, "cold")], results[("elements", name, "warm")]
            ready = statistics.median(load.finished - load.started for load in warm.loads)
            print(f"{name:<20}{cold.median('finished'):>7.0f}"
                  f"{cold.median('finished') / text['cold'].median('finished'):>7.2f}"
                  f"{warm.median('finished'):>7.0f}{warm.median('finished') / text['warm'].median('finished'):>7.2f}"
                  f"{ready:>11.0f}")
        print("ratio: to the page without the element (text); run→ready: warm, from the first run's start until "
              "the page was ready.")
    finally:
        stop_processes([app.process])


if __name__ == "__main__":
    main()
