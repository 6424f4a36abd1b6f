"""The live "Request" panel of Compose: what the form would send, whether it may, and its cost.

Every problem is listed at once with its field path, as the API's `param` names it; the size and
tokens come from `dailies.spec.pixels`; the JSON is the exact body (data URLs shortened on screen,
exact in the download).
"""

from __future__ import annotations

import json

import streamlit as st

from components.compose_body import Plan, body_size, shown_body


def render(plan: Plan) -> None:
    """Draw the panel for one plan."""
    st.subheader("Request")
    _estimate(plan)
    if plan.problems:
        count = len(plan.problems)
        lines = "\n".join(f"- `{p.path or 'request'}`: {p.message}" for p in plan.problems)
        st.error(f"**{count} problem{'s' if count != 1 else ''} to fix before sending**\n\n{lines}")
    else:
        n = len(plan.bodies)
        st.success(f"Ready to send {n} task{'s' if n != 1 else ''}: the shared rules found no problem.")


def _estimate(plan: Plan) -> None:
    est = plan.estimate
    cols = st.columns(2)
    if est.width:
        cols[0].metric("Video frame", f"{est.width}×{est.height}", est.ratio, delta_color="off", delta_arrow="off",
                       help="Pixel size of the video, from the model, resolution and ratio.")
    else:
        cols[0].metric("Video frame", "—")
    if est.tokens_each is not None:
        total = f"{est.tokens_total:,}"
        per = f"{est.tokens_each:,} × {est.count}" if est.count > 1 else "per task"
        cols[1].metric("Estimated tokens", total, per, delta_color="off", delta_arrow="off",
                       help="width × height × frames ÷ 1024 (frames = 24 per second + 1); "
                            "a draft costs 0.6 of that.")
    else:
        cols[1].metric("Estimated tokens", "—")
    if est.notes:
        st.caption(" · ".join(est.notes))


def render_json(plan: Plan) -> None:
    """The exact body of the first task, and how many more the batch holds."""
    if not plan.bodies:
        return
    first = plan.bodies[0]
    st.markdown("**JSON body**")
    st.code(json.dumps(shown_body(first), indent=2, ensure_ascii=False), language="json", wrap_lines=True)
    more = len(plan.bodies) - 1
    if more:
        # Escaped: a line starting with "+ " would be drawn as a bullet list.
        st.caption(f"\\+ {more} more: {_differences(plan)}")
    if shown_body(first) != first:
        st.caption(f"Base64 images are shortened above; the exact body is {body_size(first) / 1024:,.0f} KB.")
        # Built only when clicked: the exact body may be tens of megabytes.
        st.download_button("Download the exact JSON", lambda: json.dumps(first, ensure_ascii=False, indent=2),
                           file_name="request.json", mime="application/json", key="compose.download_json")


def _differences(plan: Plan) -> str:
    rest = plan.tasks[1:]
    if len({t.prompt for t in plan.tasks}) > 1:
        return "the same request with the prompts " + "; ".join(f"“{t.prompt[:40]}”" for t in rest)
    seeds = [t.seed for t in rest]
    if any(s is not None and s != -1 for s in seeds):
        return "the same request with seeds " + ", ".join(str(s) for s in seeds)
    if seeds and seeds[0] == -1:
        return "the same request again (the service picks each seed)"
    return "the same request again"
