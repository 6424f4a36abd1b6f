"""Compose in Chromium against the local service as a client of either region would use it: with
the BytePlus catalog chosen on Settings, with the Volcengine one, and with an endpoint id; each
task is submitted and the service's record names the model in the family that was used."""

from __future__ import annotations

import pytest

from .test_e2e import set_output, submit_one
from .ui import json_body, open_page, pick, screenshot, settle

pytestmark = [pytest.mark.browser, pytest.mark.slow]


def _record(product, task_id: str):
    with product.client() as client:
        return client.tasks.get(task_id)


def choose_catalog(tab, product, label: str) -> None:
    open_page(tab, product, "/settings")
    pick(tab, "Model ids this service speaks", label)


def compose_text(tab, product, model_label: str, prompt: str) -> None:
    # Within the session (a sidebar click, not a new page load), so the Settings choice holds.
    tab.get_by_role("link", name="Compose").first.click()
    settle(tab)
    pick(tab, "Model", model_label)
    tab.get_by_role("textbox", name="Prompt").fill(prompt)
    tab.get_by_role("textbox", name="Prompt").press("Control+Enter")
    settle(tab)
    set_output(tab)


def test_byteplus_catalog_submits_a_byteplus_id(page, product):
    choose_catalog(page, product, "BytePlus ModelArk ids (dreamina-…, seedance-…)")
    compose_text(page, product, "Seedance 2.0 fast · generation 2.0 — dreamina-seedance-2-0-fast-260128",
                 "a paper boat on a pond")
    # The exact body, shown before submitting, names the BytePlus id.
    assert '"dreamina-seedance-2-0-fast-260128"' in json_body(page)
    task_id = submit_one(page)
    screenshot(page, "catalog-byteplus")
    assert _record(product, task_id).model == "dreamina-seedance-2-0-fast-260128"


def test_volcengine_catalog_and_an_endpoint_id(page, product):
    choose_catalog(page, product, "Volcengine Ark ids (doubao-…)")
    compose_text(page, product, "Seedance 2.0 fast · generation 2.0 — doubao-seedance-2-0-fast-260128",
                 "a kite over dunes")
    task_id = submit_one(page)
    assert _record(product, task_id).model == "doubao-seedance-2-0-fast-260128"

    # Focus leaves the select box first: a click on a still-focused box after a rerun does not open it.
    page.get_by_role("heading", name="Compose").click()
    pick(page, "Model", "An endpoint id (ep-…)")
    page.get_by_role("textbox", name="Endpoint id").fill("ep-local-seedance-2-0-fast-260128")
    page.get_by_role("textbox", name="Endpoint id").press("Enter")
    settle(page)
    pick(page, "It serves", "Seedance 2.0 fast · generation 2.0")
    set_output(page)
    task_id = submit_one(page)
    screenshot(page, "catalog-endpoint")
    record = _record(product, task_id)
    assert record.model == "doubao-seedance-2-0-fast-260128"
