"""What operators expect of every exposition (issue 36): the standard process and garbage-collector
figures on an API node's `/metrics` and on a worker's `--metrics-port`, and on an API node the
duration of each answered request by method, route template (never the raw path) and status."""

from __future__ import annotations

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families
from sqlalchemy.exc import OperationalError

from tests.conftest import Backend
from tests.service.conftest import TASKS, FakeGenerator, service_env, text_body
from tests.support.processes import Worker
from tests.support.servers import free_port
from tests.support.waiting import wait_for

pytestmark = pytest.mark.anyio

DURATIONS = "dailies_http_request_duration_seconds"
TASK = f"{TASKS}/{{task_id}}"


def families_of(text: str) -> dict:
    return {f.name: f for f in text_string_to_metric_families(text)}


def request_counts(text: str) -> dict[tuple[str, str, str], float]:
    """(method, route, status) -> requests counted, from an exposition."""
    return {(s.labels["method"], s.labels["route"], s.labels["status"]): s.value
            for s in families_of(text)[DURATIONS].samples if s.name == f"{DURATIONS}_count"}


def assert_standard_figures(text: str) -> None:
    names = {s.name for f in text_string_to_metric_families(text) for s in f.samples}
    for name in ("process_cpu_seconds_total", "process_resident_memory_bytes", "process_start_time_seconds",
                 "process_open_fds", "python_gc_objects_collected_total", "python_gc_collections_total",
                 "python_info"):
        assert name in names, f"{name} missing from the exposition"


@pytest.fixture
async def node(tmp_path):
    """An API node in this process (SQLite: what is measured does not depend on the backend)."""
    async with service_env(tmp_path, Backend("sqlite"), FakeGenerator()) as made:
        yield made


async def test_an_api_nodes_metrics_have_the_process_and_gc_figures(node):
    response = await node.client.get("/metrics")
    assert response.status_code == 200
    assert_standard_figures(response.text)


async def test_requests_are_timed_by_route_template_and_status_never_by_raw_path(node):
    created = await node.create(text_body())
    assert created.status_code == 200, created.text
    task_id = created.json()["id"]
    assert (await node.get(task_id)).status_code == 200
    assert (await node.get("cgt-20990101000000-nosuchtask")).status_code == 404  # a route took it
    assert (await node.client.get("/no/such/path/12345")).status_code == 404
    assert (await node.client.delete("/metrics")).status_code == 405
    assert (await node.client.request("BREW", "/coffee/pot-7")).status_code == 404  # any token is a method
    exposition = (await node.client.get("/metrics")).text
    counts = request_counts(exposition)
    assert counts == {("POST", TASKS, "200"): 1, ("GET", TASK, "200"): 1, ("GET", TASK, "404"): 1,
                      ("GET", "unmatched", "404"): 1, ("DELETE", "/metrics", "405"): 1,
                      ("other", "unmatched", "404"): 1}
    assert task_id not in exposition and "12345" not in exposition and "BREW" not in exposition
    # Buckets for an API: from a few milliseconds to tens of seconds, each request in one of them.
    buckets = [s for s in families_of(exposition)[DURATIONS].samples
               if s.name == f"{DURATIONS}_bucket" and s.labels["route"] == TASKS]
    bounds = sorted(float(s.labels["le"]) for s in buckets)
    assert bounds[0] <= 0.005 and 10 <= bounds[-2] <= 120 and bounds[-1] == float("inf")
    assert max(s.value for s in buckets) == 1
    # /metrics is timed too: the scrape above shows on the next one.
    assert request_counts((await node.client.get("/metrics")).text)[("GET", "/metrics", "200")] == 1


async def test_outages_and_unexpected_errors_are_timed_with_their_status(tmp_path, monkeypatch):
    """A 503 of an outage (answered inside the request log) and a 500 of a bug (an exception that
    goes on up through the request log to the 500 handler) are counted like any other answer."""
    async with service_env(tmp_path, Backend("sqlite"), FakeGenerator()) as node:
        dead = OperationalError("SELECT", {}, Exception("server closed the connection unexpectedly"))
        monkeypatch.setattr(node.services.tasks, "list", lambda *a, **k: (_ for _ in ()).throw(dead))
        assert (await node.list()).status_code == 503
        monkeypatch.setattr(node.services.tasks, "get", lambda *a, **k: (_ for _ in ()).throw(RuntimeError("bug")))
        transport = httpx.ASGITransport(app=node.app, raise_app_exceptions=False)
        async with httpx.AsyncClient(transport=transport, base_url="http://testserver") as client:
            answer = await client.get(f"{TASKS}/cgt-1", headers={"Authorization": "Bearer key-a"})
            assert answer.status_code == 500
            counts = request_counts((await client.get("/metrics")).text)
        assert counts[("GET", TASKS, "503")] == 1
        assert counts[("GET", TASK, "500")] == 1


def test_a_workers_metrics_port_has_the_process_and_gc_figures(tmp_path):
    port = free_port()
    worker = Worker(tmp_path / "worker", extra_args=("--metrics-port", str(port)))
    try:
        text = wait_for(lambda: _scrape(f"http://127.0.0.1:{port}/metrics"), "the worker's metrics")
        assert_standard_figures(text)
        assert "dailies_render_slots 1.0" in text
        assert DURATIONS not in text  # a worker answers no request: no empty histogram
    finally:
        worker.stop()


def _scrape(url: str) -> str | None:
    try:
        return httpx.get(url, timeout=5).text
    except httpx.HTTPError:
        return None
