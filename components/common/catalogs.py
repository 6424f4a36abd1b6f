"""Which model ids the dashboard offers: those of the catalog the connected service speaks.

A Volcengine Ark host speaks `doubao-*` ids, a BytePlus ModelArk host `dreamina-*`/`seedance-*`
ids. Any other host is asked what it is (`client.service_info()`, a Dailies service's
`/dailies/v1/service`): a Dailies gateway offers the catalog of its upstream's region; the local
service, a gateway to another Dailies and unknown hosts take both, unless the person says on Settings
which catalog their gateway speaks.
"""

from __future__ import annotations

import time

import streamlit as st

from components.common import connection
from components.common.state_keys import CATALOG_KEY
from dailies.client import Client, DailiesError
from dailies.spec.catalog import Region, model_ids, region_of_host
from dailies.spec.models import ServiceInfo

AUTO = "auto"
BOTH = "both"
CHOICES = (AUTO, Region.VOLCENGINE.value, Region.BYTEPLUS.value, BOTH)
CHOICE_LABELS = {
    AUTO: "From the service address (Volcengine, BytePlus, or both for any other host)",
    Region.VOLCENGINE.value: "Volcengine Ark ids (doubao-…)",
    Region.BYTEPLUS.value: "BytePlus ModelArk ids (dreamina-…, seedance-…)",
    BOTH: "Both catalogs",
}


def region_for(base_url: str, choice: str = AUTO, upstream_region: str | None = None) -> Region | None:
    """The region whose ids to offer; None offers both. `upstream_region`: a gateway's, as it says."""
    if choice == BOTH:
        return None
    if choice in (Region.VOLCENGINE.value, Region.BYTEPLUS.value):
        return Region(choice)
    by_host = region_of_host(base_url)
    if by_host is None and upstream_region in (Region.VOLCENGINE.value, Region.BYTEPLUS.value):
        return Region(upstream_region)
    return by_host


def offered_model_ids(base_url: str, choice: str = AUTO, upstream_region: str | None = None) -> list[str]:
    return model_ids(region_for(base_url, choice, upstream_region))


# What a host said it is, per connection, for a few minutes: asked once, not on every run.
SERVICE_INFO_MAX_AGE_S = 300
_service_infos: dict[str, tuple[float, ServiceInfo | None]] = {}


def service_info(client: Client | None) -> ServiceInfo | None:
    """What the connected service says it is (None: not a Dailies service, or no answer); only asked
    of hosts the address does not already place (not Ark's, not ModelArk's)."""
    if client is None or region_of_host(client.base_url) is not None:
        return None
    key = connection.current().cache_id  # base URL + key fingerprint, as every dashboard cache
    cached = _service_infos.get(key)
    if cached is not None and time.monotonic() - cached[0] < SERVICE_INFO_MAX_AGE_S:
        return cached[1]
    try:
        info = client.service_info()
    except DailiesError:
        info = None  # another service (404), or one that does not answer now: both catalogs
    if len(_service_infos) > 256:
        _service_infos.clear()
    _service_infos[key] = (time.monotonic(), info)
    return info


def upstream_region(client: Client | None) -> str | None:
    info = service_info(client)
    return info.upstream.region if info is not None and info.upstream is not None else None


def current_choice() -> str:
    choice = st.session_state.get(CATALOG_KEY, AUTO)
    return choice if choice in CHOICES else AUTO
