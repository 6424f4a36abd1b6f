"""The live "Request" panel of Compose: what the form would send, whether it may, and its cost.

Every problem is listed at once with its field path, as the API's `param` names it; the size and
tokens come from `dailies.spec.pixels`; the JSON is the exact body (data URLs shortened on screen,
exact in the download).

The body is preformatted text (`st.html`), not `st.code`: st.code's syntax highlighter is a 1.5 MB
script that every new page load starts anew, ~140 ms of the browser's main thread, and React then holds
the reveal of the page's other lazily loaded widgets for another 300 ms after it. Compose is the page
a link to Dailies opens first (bench/dashboard.py, full loads).
"""

from __future__ import annotations

import html
import json
import re

import streamlit as st

from components.common import costs
from components.common.shot_labels import distinct_labels
from components.compose.body import Plan, body_size, shown_body
from components.compose.field_words import in_words
from components.compose.state_keys import DOWNLOAD_JSON_KEY
from dailies.spec.prices import NoPrice


def render(plan: Plan) -> None:
    """Draw the panel for one plan."""
    st.subheader("Request")
    _estimate(plan)
    if plan.mistakes:
        count = len(plan.mistakes)
        lines = "\n".join(f"- {in_words(p, plan.paths)}" for p in plan.mistakes)
        st.error(f"**{count} problem{'s' if count != 1 else ''} to fix before sending**\n\n{lines}")
    if plan.unwritten:
        st.info("**Write a prompt to send**: what the shot shows, how the camera moves, the light and sound.")
    elif not plan.mistakes:
        n = len(plan.bodies)
        st.success(f"Ready to send {n} task{'s' if n != 1 else ''}: the shared rules found no problem.")


def _estimate(plan: Plan) -> None:
    est = plan.estimate
    # The frame on a row of its own: in half of the request column "1280×720" was cut to "1280×…" on a
    # laptop (1280 px), and it is how a person checks what `adaptive` became. Tokens and cost below.
    if est.width:
        st.metric("Video frame", f"{est.width}×{est.height}", est.ratio, delta_color="off", delta_arrow="off",
                  help="Pixel size of the video, from the model, resolution and ratio.")
    else:
        st.metric("Video frame", "—")
    cols = st.columns(2)
    if est.tokens_each is not None:
        total = f"{est.tokens_total:,}"
        per = f"{est.tokens_each:,} × {est.count}" if est.count > 1 else "per task"
        cols[0].metric("Estimated tokens", total, per, delta_color="off", delta_arrow="off",
                       help="width × height × frames ÷ 1024 (frames = 24 per second + 1); "
                            "a draft costs 0.6 of that.")
    else:
        cols[0].metric("Estimated tokens", "—")
    # A request not complete yet (an input still to choose) is not priced yet: "—", not "no price".
    incomplete = isinstance(plan.cost_each, NoPrice) and bool(plan.mistakes)
    if plan.cost_each is not None and not incomplete:
        each = plan.cost_each
        total = costs.times(each, est.count)
        per = f"{costs.cost_text(each).removeprefix('≈ ')} × {est.count}" if est.count > 1 else "per task"
        cols[1].metric("Estimated cost", costs.cost_text(total).removeprefix("≈ "),
                       per if not isinstance(each, NoPrice) else None, delta_color="off", delta_arrow="off",
                       help=costs.why(each) + " Billed on success from the real usage; a list price, in the "
                                              "currency of the model's family.")
    else:
        cols[1].metric("Estimated cost", "—", help="Priced once the request is complete: fix what is listed below.")
    if est.notes:
        st.caption(" · ".join(est.notes))


def render_json(plan: Plan) -> None:
    """The exact body of the first task, and how many more the batch holds."""
    if not plan.bodies:
        return
    first = plan.bodies[0]
    with st.expander("JSON body (what is sent)"):
        st.html(json_block(json.dumps(shown_body(first), indent=2, ensure_ascii=False)))
    more = len(plan.bodies) - 1
    if more:
        # Escaped: a line starting with "+ " would be drawn as a bullet list.
        st.caption(f"\\+ {more} more: {_differences(plan)}")
    if shown_body(first) != first:
        st.caption(f"Base64 images are shortened above; the exact body is {body_size(first) / 1024:,.0f} KB.")
        # Built only when clicked: the exact body may be tens of megabytes.
        st.download_button("Download the exact JSON", lambda: json.dumps(first, ensure_ascii=False, indent=2),
                           file_name="request.json", mime="application/json", key=DOWNLOAD_JSON_KEY)


# Wrapped like st.code(wrap_lines=True), on a tint that reads on the light and the dark theme.
_JSON_BLOCK = ('<pre data-dailies="json-body" style="white-space: pre-wrap; overflow-wrap: break-word; margin: 0; '
               'padding: 0.75rem 1rem; border-radius: 0.5rem; background: rgba(128, 128, 128, 0.12); '
               'font-size: 0.875rem">{}</pre>')
_JSON_BLOCK_TEXT = re.compile(r"^<pre data-dailies=\"json-body\"[^>]*>(.*)</pre>$", re.DOTALL)


def json_block(text: str) -> str:
    """The HTML of the JSON body panel: `text` escaped, preformatted, wrapped."""
    return _JSON_BLOCK.format(html.escape(text, quote=False))


def json_block_text(block: str) -> str | None:
    """The text of a JSON body panel (`json_block`), or None for other HTML."""
    found = _JSON_BLOCK_TEXT.match(block)
    return html.unescape(found.group(1)) if found else None


def _differences(plan: Plan) -> str:
    rest = plan.tasks[1:]
    if len({t.prompt for t in plan.tasks}) > 1:
        labels = distinct_labels([t.prompt for t in plan.tasks], [t.seed for t in plan.tasks])
        return "the same request with the prompts " + "; ".join(f"“{label}”" for label in labels[1:])
    seeds = [t.seed for t in rest]
    if any(s is not None and s != -1 for s in seeds):
        return "the same request with seeds " + ", ".join(str(s) for s in seeds)
    if seeds and seeds[0] == -1:
        return "the same request again (the service picks each seed)"
    return "the same request again"
