"""Compose against services of either region: the model list follows the catalog the service
speaks, an endpoint id can be sent with the rules of the model it serves, and text commands in the
prompt are judged while typing, by the same rules as the service."""

from __future__ import annotations

import pytest

from components.common import catalogs
from components.compose.form import BY_ENDPOINT, ENDPOINT_ID, ENDPOINT_RULES, MODEL
from dailies.client import Client
from dailies.spec.catalog import Region, model_ids

from .test_compose import (
    body,
    compose,
    created_ids,
    panel_problems,
    rerun,
    send,
    setup,
    submit_button,
)


@pytest.fixture
def api(dashboard_env):
    with Client(base_url=dashboard_env.base_url, api_key=dashboard_env.api_key) as c:
        yield c


def offered(at) -> list[str]:
    return list(at.selectbox(key=MODEL).options)


@pytest.mark.parametrize(("choice", "expected"), [
    (catalogs.AUTO, model_ids()),  # the local service speaks both
    (Region.BYTEPLUS.value, model_ids(Region.BYTEPLUS)),
    (Region.VOLCENGINE.value, model_ids(Region.VOLCENGINE)),
    (catalogs.BOTH, model_ids()),
])
def test_the_model_list_follows_the_chosen_catalog(dashboard_env, choice, expected):
    at = compose(**{catalogs.CATALOG_KEY: choice})
    options = offered(at)
    assert options == [_label(m) for m in expected] + ["An endpoint id (ep-…)"]
    assert at.selectbox(key=MODEL).value in expected


def _label(model_id: str) -> str:
    from components.compose.body import model_label
    from dailies.spec.catalog import find_model

    return f"{model_label(find_model(model_id))} — {model_id}"


@pytest.mark.parametrize(("url", "region"), [
    ("https://ark.cn-beijing.volces.com/api/v3", Region.VOLCENGINE),
    ("https://ark.ap-southeast.bytepluses.com/api/v3", Region.BYTEPLUS),
    ("http://127.0.0.1:8000/api/v3", None),
    ("https://my-gateway.example.org/v1", None),
])
def test_the_catalog_of_a_host(url, region):
    assert catalogs.region_for(url) is region
    assert catalogs.offered_model_ids(url) == model_ids(region)
    # A gateway's catalog chosen on Settings wins over the host.
    assert catalogs.region_for(url, Region.BYTEPLUS.value) is Region.BYTEPLUS


def test_a_byteplus_task_is_submitted_and_echoed_in_its_family(api):
    at = compose(**{catalogs.CATALOG_KEY: Region.BYTEPLUS.value})
    at = setup(at, model="dreamina-seedance-2-0-fast-260128", mode="text", prompt="a paper boat on a pond")
    assert body(at)["model"] == "dreamina-seedance-2-0-fast-260128"
    send(at)
    [task_id] = created_ids(at)
    assert api.tasks.get(task_id).model == "dreamina-seedance-2-0-fast-260128"


def test_an_endpoint_id_is_sent_with_the_rules_of_the_model_it_serves(api):
    at = compose(**{catalogs.CATALOG_KEY: Region.VOLCENGINE.value})
    at.selectbox(key=MODEL).set_value(BY_ENDPOINT)
    rerun(at)
    at.text_input(key=ENDPOINT_ID).input("ep-local-seedance-1-0-pro-250528")
    at.selectbox(key=ENDPOINT_RULES).set_value("doubao-seedance-1-0-pro-250528")
    rerun(at)
    # 1.0 Pro's controls: frames may replace the duration; no audio, no draft toggle.
    keys = {w.key for kind in ("radio", "toggle", "checkbox") for w in getattr(at, kind)}
    assert "compose.length_by" in keys and "compose.draft" not in keys and "compose.generate_audio" not in keys
    at = setup(at, mode="text", prompt="a kite over dunes")
    assert body(at)["model"] == "ep-local-seedance-1-0-pro-250528"
    assert not submit_button(at).disabled, panel_problems(at)
    send(at)
    [task_id] = created_ids(at)
    record = api.tasks.get(task_id)
    assert record.model == "doubao-seedance-1-0-pro-250528"
    listed = api.tasks.list(model="ep-local-seedance-1-0-pro-250528", task_ids=[task_id])
    assert [t.id for t in listed.items] in ([task_id], [])  # [] only within the creation second


def test_text_commands_in_the_prompt_are_checked_while_typing(dashboard_env):
    at = setup(compose(), model="doubao-seedance-1-5-pro-251215", mode="text",
               prompt="a lighthouse at dusk --rs 4k")
    assert submit_button(at).disabled
    assert "4k" in panel_problems(at)
    at.text_area(key="compose.prompt").input("a lighthouse at dusk --rs 720p --dur 9")
    rerun(at)
    # The form's own duration (4 s) and the text's 9 s disagree: named, Submit stays off.
    assert submit_button(at).disabled and "--dur 9" in panel_problems(at)
    at.text_area(key="compose.prompt").input("a lighthouse at dusk --rs 480p")
    rerun(at)
    assert not submit_button(at).disabled, panel_problems(at)


def test_a_gateway_offers_the_catalog_of_its_upstreams_region_and_says_what_it_is(monkeypatch, tmp_path):
    """A Dailies gateway on a host the address does not place: Compose asks it what it is and offers
    the ids of its upstream's region; Settings says it is a gateway, with its keys' health by name."""
    from streamlit.testing.v1 import AppTest

    from dailies.service.gateway.forwarding import UpstreamKey
    from tests.support.live_service import start_live_service

    from .test_compose import APP

    gateway = start_live_service(tmp_path / "gateway", workers=0, api_keys={"member-key-1": "studio"},
                                 upstream_url="https://ark.ap-southeast.bytepluses.com/api/v3",
                                 upstream_keys=[UpstreamKey("main", "ark-not-a-real-key-0001")])
    try:
        monkeypatch.setenv("ARK_BASE_URL", gateway.base_url)
        monkeypatch.setenv("ARK_API_KEY", "member-key-1")
        monkeypatch.setenv("DAILIES_DATA_DIR", str(tmp_path / "dashboard-data"))
        at = compose()
        assert offered(at) == [_label(m) for m in model_ids(Region.BYTEPLUS)] + ["An endpoint id (ep-…)"]
        settings = AppTest.from_file(APP, default_timeout=30)
        settings.switch_page("views/settings.py").run()
        assert not settings.exception
        said = " ".join(i.value for i in settings.info)
        assert "gateway" in said and "byteplus" in said and "main ok" in said
        assert "ark-not-a-real-key" not in said
        assert any("the byteplus catalog" in c.value for c in settings.caption)
    finally:
        gateway.stop()
