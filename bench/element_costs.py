"""What each Streamlit element type adds to a new session's full load, on its own page: a header and a
line of text (the bare app's Compose page) plus one element of the type, against the page without it.

    python bench/element_costs.py              # 5 loads of each page, cold and warm
    python bench/element_costs.py --loads 9

Streamlit loads each element type's script (and the modules it imports) the first time a page shows
one, and evaluates it before it draws the element; meanwhile the element is a skeleton. This bench
measures that cost per type with bench/page_loads.py's full loads (from the navigation's start until
the run has finished and nothing is a skeleton), so a page's floor can be read off the types it shows:
the dashboard's Compose form shows ten types, its Review cards eight (bench/README.md). Two pages
combine types: the least a composer needs (a model, a mode, a prompt, a button) and one of each type
Compose shows. The app is served as the dashboard is (dashboard/server.py's middleware). It prints
figures; it asserts nothing.
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
