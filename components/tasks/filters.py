"""The filters of the Tasks page, mapped one to one onto the list endpoint's query (spec 4.2).

Each widget keeps its value in `st.session_state["tasks.<name>"]` for the whole session
(`persist_state="session"`), so the filters survive the table's auto refresh and a visit to
another page, and in the page's address (`/tasks?status=failed&tier=flex`: components/common/address.py,
values not labels), so a link opens the same view. Changing a filter goes back to page 1: page 3 of
another filter means nothing.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import streamlit as st

from components.common.address import from_address, to_address
from components.tasks.rows import parse_task_ids, status_label
from components.tasks.state_keys import (
    ENDPOINT_KEY,
    MODEL_KEY,
    PAGE_KEY,
    PAGE_SIZE_KEY,
    STATUS_KEY,
    TASK_IDS_KEY,
    TIER_KEY,
)
from dailies.journal import Journal
from dailies.spec import limits as L
from dailies.spec.catalog import model_ids
from dailies.spec.statuses import LISTABLE_FILTERS

ALL_STATUSES = "all"
ANY_MODEL = "any"

TIER_HELP = {
    "default": "online inference",
    "flex": "offline inference; generation 2.0 has no flex tier",
}


@dataclass(frozen=True)
class TaskFilters:
    """What the table lists: the list endpoint's query, as the widgets set it."""

    status: str | None = None
    task_ids: tuple[str, ...] = ()
    model: str | None = None
    service_tier: str = "default"
    page_num: int = L.PAGE_NUM_DEFAULT
    page_size: int = L.PAGE_SIZE_DEFAULT

    def list_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of `client.tasks.list`."""
        return {
            "page_num": self.page_num,
            "page_size": self.page_size,
            "status": self.status,
            "task_ids": list(self.task_ids) or None,
            "model": self.model,
            "service_tier": self.service_tier,
        }

    def without_paging(self, page_size: int = L.PAGE_SIZE_MAX) -> TaskFilters:
        """The same filters, first page, `page_size` rows (the charts look at up to 500 tasks)."""
        return TaskFilters(self.status, self.task_ids, self.model, self.service_tier, 1, page_size)


def _back_to_first_page() -> None:
    st.session_state[PAGE_KEY] = 1


def model_options(journal: Journal) -> list[str]:
    """Catalog model ids, then the models and endpoint ids this dashboard has submitted to."""
    options = [ANY_MODEL, *model_ids()]
    return options + [model for model in journal.submitted_models() if model not in options]


def _number(low: int, high: int) -> Callable[[str], int | None]:
    def parse(text: str) -> int | None:
        return int(text) if text.isdigit() and low <= int(text) <= high else None
    return parse


def _from_address(models: list[str]) -> None:
    """The filters of a link (`?status=failed&model=…&endpoint=…&tier=flex&ids=…&page=2&per_page=50`);
    a value that is none of the widget's is left out."""
    from_address(STATUS_KEY, "status", lambda v: v if v in LISTABLE_FILTERS else None)
    from_address(MODEL_KEY, "model", lambda v: v if v in models else None)
    from_address(ENDPOINT_KEY, "endpoint", lambda v: v[:200])
    from_address(TIER_KEY, "tier", lambda v: v if v in ("default", "flex") else None)
    from_address(TASK_IDS_KEY, "ids", lambda v: v.replace(",", "\n")[:20_000])
    from_address(PAGE_KEY, "page", _number(L.PAGE_NUM_MIN, L.PAGE_NUM_MAX))
    from_address(PAGE_SIZE_KEY, "per_page", _number(L.PAGE_SIZE_MIN, L.PAGE_SIZE_MAX))


def _to_address(status: str, model: str, endpoint: str, tier: str, ids_text: str, page: int, page_size: int) -> None:
    to_address("status", None if status == ALL_STATUSES else status)
    to_address("model", None if model == ANY_MODEL else model)
    to_address("endpoint", endpoint.strip() or None)
    to_address("tier", None if tier == "default" else tier)
    to_address("ids", ",".join(parse_task_ids(ids_text)) or None)
    to_address("page", None if page == 1 else str(page))
    to_address("per_page", None if page_size == L.PAGE_SIZE_DEFAULT else str(page_size))


def render(journal: Journal) -> TaskFilters:
    """Draw the filter bar; return the filters it sets."""
    models = model_options(journal)
    _from_address(models)
    top = st.columns([2, 3])
    with top[0]:
        status = st.selectbox(
            "Status", [ALL_STATUSES, *LISTABLE_FILTERS], key=STATUS_KEY, persist_state="session",
            format_func=lambda s: "All statuses" if s == ALL_STATUSES else status_label(s),
            on_change=_back_to_first_page,
            help="`expired` is not a filter value of the API: expired tasks are listed only under All.",
        )
    with top[1]:
        model = st.selectbox(
            "Model", models, key=MODEL_KEY, persist_state="session",
            format_func=lambda m: "Any model" if m == ANY_MODEL else m, on_change=_back_to_first_page,
            help="The filter matches the model id or endpoint id a task was created with. The record shows "
                 "the model id even for tasks created through an endpoint (`ep-...`).",
        )
    # What a person looks for first is above; the API's own filters and paging wait behind this, opened
    # by itself while any of them is set (so a filter in force is never hidden).
    state = st.session_state
    in_force = bool(str(state.get(ENDPOINT_KEY) or "").strip() or state.get(TIER_KEY) == "flex"
                    or str(state.get(TASK_IDS_KEY) or "").strip() or (state.get(PAGE_KEY) or 1) != 1
                    or (state.get(PAGE_SIZE_KEY) or L.PAGE_SIZE_DEFAULT) != L.PAGE_SIZE_DEFAULT)
    more = st.expander("More filters: endpoint id, service tier, task ids, pages", expanded=in_force)
    api = more.columns([3, 3])
    with api[0]:
        endpoint = st.text_input(
            "…or endpoint id", key=ENDPOINT_KEY, persist_state="session", placeholder="ep-…",
            on_change=_back_to_first_page, help="Any model id or endpoint id; wins over the Model box when filled.",
        )
    with api[1]:
        tier = st.radio(
            "Service tier", ["default", "flex"], key=TIER_KEY, persist_state="session",
            horizontal=True,
            format_func=lambda t: f"{t} · {TIER_HELP[t].split(' ')[0]}", on_change=_back_to_first_page,
            help="default: " + TIER_HELP["default"] + ". flex: " + TIER_HELP["flex"] + ".",
        )
        st.caption("flex tasks are listed only under **flex**: the API lists one tier at a time and "
                   "defaults to `default`.")

    bottom = more.columns([5, 2, 2])
    with bottom[0]:
        ids_text = st.text_area(
            "Task ids", key=TASK_IDS_KEY, persist_state="session", height=68,
            placeholder="cgt-… one per line, or separated by commas", on_change=_back_to_first_page,
        )
    with bottom[1]:
        page = st.number_input("Page", min_value=L.PAGE_NUM_MIN, max_value=L.PAGE_NUM_MAX, step=1,
                               key=PAGE_KEY, persist_state="session")
    with bottom[2]:
        # Its default through the session, not value=: a link's page size is set there too.
        st.session_state.setdefault(PAGE_SIZE_KEY, L.PAGE_SIZE_DEFAULT)
        page_size = st.number_input("Per page", min_value=L.PAGE_SIZE_MIN, max_value=L.PAGE_SIZE_MAX, step=10,
                                    key=PAGE_SIZE_KEY, persist_state="session", on_change=_back_to_first_page)

    _to_address(status, model, endpoint, tier, ids_text, page, page_size)
    chosen_model = endpoint.strip() or (None if model == ANY_MODEL else model)
    return TaskFilters(
        status=None if status == ALL_STATUSES else status,
        task_ids=tuple(parse_task_ids(ids_text)),
        model=chosen_model,
        service_tier=tier,
        page_num=int(page),
        page_size=int(page_size),
    )
