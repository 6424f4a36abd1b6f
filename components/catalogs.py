"""Which model ids the dashboard offers: those of the catalog the connected service speaks.

A Volcengine Ark host speaks `doubao-*` ids, a BytePlus ModelArk host `dreamina-*`/`seedance-*`
ids; the local service and unknown hosts (proxies, gateways) take both, unless the person says on
Settings which catalog their gateway speaks.
"""

from __future__ import annotations

import streamlit as st

from dailies.spec.catalog import Region, model_ids, region_of_host

CATALOG_KEY = "settings.catalog"
AUTO = "auto"
BOTH = "both"
CHOICES = (AUTO, Region.VOLCENGINE.value, Region.BYTEPLUS.value, BOTH)
CHOICE_LABELS = {
    AUTO: "From the service address (Volcengine, BytePlus, or both for any other host)",
    Region.VOLCENGINE.value: "Volcengine Ark ids (doubao-…)",
    Region.BYTEPLUS.value: "BytePlus ModelArk ids (dreamina-…, seedance-…)",
    BOTH: "Both catalogs",
}


def region_for(base_url: str, choice: str = AUTO) -> Region | None:
    """The region whose ids to offer; None offers both."""
    if choice == BOTH:
        return None
    if choice in (Region.VOLCENGINE.value, Region.BYTEPLUS.value):
        return Region(choice)
    return region_of_host(base_url)


def offered_model_ids(base_url: str, choice: str = AUTO) -> list[str]:
    return model_ids(region_for(base_url, choice))


def current_choice() -> str:
    choice = st.session_state.get(CATALOG_KEY, AUTO)
    return choice if choice in CHOICES else AUTO
