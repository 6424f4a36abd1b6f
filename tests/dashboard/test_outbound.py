"""A shared dashboard's server contacts, for a visitor, only public hosts, its own service's origin and the
origins the operator trusts (components/common/outbound.py): a service a visitor points Settings at cannot have the
server fetch an internal address (a cloud's metadata service, another port of the machine) and hand the
bytes back as a kept copy, nor a name that answers inward on a second lookup (DNS rebinding)."""

from __future__ import annotations

import httpx
import pytest

from components.common import keep, outbound
from dailies import netguard
from dailies.client import APIConnectionError, Client, DailiesError
from dailies.journal import Journal
from dailies.spec.models import TaskRecord
from tests.support.rebinding import rebinding_name

PUBLIC = "93.184.216.34"  # a public address (documentation's example.com)


@pytest.fixture
def team(monkeypatch):
    monkeypatch.setenv("DAILIES_DASHBOARD_TEAM", "1")
    monkeypatch.setenv("ARK_BASE_URL", "http://10.0.0.5:8000/api/v3")  # the operator's service
    monkeypatch.delenv(outbound.TRUSTED_HOSTS_ENV, raising=False)
    real = netguard.resolve
    names = {"visitor.example": PUBLIC}
    monkeypatch.setattr(netguard, "resolve",
                        lambda host, port=None, timeout=None: [netguard.ipaddress.ip_address(names[host])]
                        if host in names else real(host, port, timeout))


def test_the_operators_service_and_trusted_hosts_pass_public_hosts_pass_the_rest_is_refused(team, monkeypatch):
    assert outbound.address_problem("http://10.0.0.5:8000/api/v3") is None  # configured: trusted
    assert outbound.address_problem("https://visitor.example/api/v3") is None  # public
    for internal in ("http://169.254.169.254/latest/meta-data", "http://127.0.0.1:9/api/v3",
                     "http://10.0.0.9/api/v3", "http://localhost:8000/api/v3"):
        problem = outbound.address_problem(internal)
        assert problem is not None and outbound.TRUSTED_HOSTS_ENV in problem, internal
    monkeypatch.setenv(outbound.TRUSTED_HOSTS_ENV, "10.0.0.9, minio.internal:9000")
    assert outbound.address_problem("http://10.0.0.9/api/v3") is None
    assert outbound.address_problem("http://minio.internal:9000/bucket/x") is None


def test_trust_is_an_origin_never_a_host_on_any_port(team, monkeypatch):
    # The operator's service is 10.0.0.5:8000: its other ports are another place.
    for elsewhere in ("http://10.0.0.5:22/", "http://10.0.0.5:9000/api/v3", "https://10.0.0.5:8000/api/v3"):
        assert outbound.address_problem(elsewhere) is not None, elsewhere
        assert isinstance(outbound.transport_for(elsewhere, shared=True), outbound.PublicOnlyTransport), elsewhere
    monkeypatch.setenv(outbound.TRUSTED_HOSTS_ENV,
                       "https://minio.internal:9000, http://10.0.0.9, bucket.internal, 10.0.0.7:7000, not a url")
    trusted = ["https://minio.internal:9000/b/x", "http://10.0.0.9:80/x", "http://bucket.internal/x",
               "https://bucket.internal:443/x", "http://10.0.0.7:7000/x", "https://10.0.0.7:7000/x"]
    refused = ["http://minio.internal:9000/b/x", "https://minio.internal/b/x", "http://10.0.0.9:8080/x",
               "https://10.0.0.9/x", "http://bucket.internal:8080/x", "http://10.0.0.7/x"]
    assert [u for u in trusted if not outbound.is_trusted(u)] == []
    assert [u for u in refused if outbound.is_trusted(u)] == []


def test_a_visitors_result_on_another_local_port_is_never_fetched(tmp_path, monkeypatch):
    """Under `dailies up --team` the service is 127.0.0.1:<its port>; another local port (here a real
    server on 127.0.0.1) stays out of reach, however a visitor's service names it."""
    monkeypatch.setenv("DAILIES_DASHBOARD_TEAM", "1")
    monkeypatch.setenv("ARK_BASE_URL", "http://127.0.0.1:8000/api/v3")
    with rebinding_name(monkeypatch, "unused.rebind.example", public_lookups=0) as local:
        other_port = f"http://127.0.0.1:{local.port}"
        assert outbound.address_problem(f"{other_port}/api/v3") is not None
        transport = outbound.transport_for("https://visitor.example/api/v3", shared=True)
        with Client(base_url="https://visitor.example/api/v3", api_key="k", transport=transport,
                    max_retries=0) as client:
            with pytest.raises(APIConnectionError, match="not allowed"):
                client.download(f"{other_port}/secret", tmp_path / "x.mp4")
        # A base URL on that port, saved anyway, gets the guard too.
        with Client(base_url=f"{other_port}/api/v3", api_key="k", max_retries=0,
                    transport=outbound.transport_for(f"{other_port}/api/v3", shared=True)) as client:
            with pytest.raises(APIConnectionError, match="not allowed"):
                client.download(f"{other_port}/secret", tmp_path / "x.mp4")
    assert local.reached == []


def test_keep_fetches_from_the_address_it_checked_not_a_second_answer(tmp_path, monkeypatch):
    """A result URL whose name answers a public address to the check and loopback after it (DNS
    rebinding): the download goes to the public address checked; the loopback server is never reached
    and nothing is kept."""
    monkeypatch.setenv("DAILIES_DASHBOARD_TEAM", "1")
    monkeypatch.setenv("ARK_BASE_URL", "http://127.0.0.1:8000/api/v3")
    journal = Journal(tmp_path / "journal.sqlite3")
    with rebinding_name(monkeypatch, "media.rebind.example", public_lookups=1) as inside:
        base = f"http://media.rebind.example:{inside.port}/api/v3"
        record = TaskRecord.model_validate({
            "id": "cgt-20270115080000-abcde", "model": "doubao-seedance-2-0-260128", "status": "succeeded",
            "created_at": 1_800_000_000, "updated_at": 1_800_000_090,
            "content": {"video_url": f"http://media.rebind.example:{inside.port}/result.mp4"}})
        with Client(base_url=base, api_key="k", max_retries=0, timeout=3,
                    transport=outbound.transport_for(base, shared=True)) as client:
            with pytest.raises(DailiesError):  # the public address (unreachable, or no such file there)
                keep.keep_result(client, journal, record, now=1_800_000_100)
    assert inside.reached == [] and inside.lookups == ["media.rebind.example"]
    assert journal.kept(record.id) == {}


def test_a_visitors_connection_refuses_a_result_url_or_a_redirect_to_an_internal_address(team, tmp_path):
    seen: list[str] = []

    def visitor_service(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        if request.url.path == "/result.mp4":  # a result link that redirects inside the network
            return httpx.Response(302, headers={"Location": "http://169.254.169.254/latest/meta-data/"})
        return httpx.Response(200, content=b"\x00\x00\x00\x18ftypmp42")

    transport = outbound.transport_for("https://visitor.example/api/v3", shared=True)
    assert isinstance(transport, outbound.PublicOnlyTransport)
    transport.inner = httpx.MockTransport(visitor_service)
    with Client(base_url="https://visitor.example/api/v3", api_key="k", transport=transport, max_retries=0) as client:
        client.download("https://visitor.example/ok.mp4", tmp_path / "ok.mp4")
        assert (tmp_path / "ok.mp4").read_bytes().startswith(b"\x00\x00\x00\x18ftyp")
        for url in ("http://169.254.169.254/latest/meta-data/", "https://visitor.example/result.mp4"):
            with pytest.raises(APIConnectionError, match="not allowed"):
                client.download(url, tmp_path / "x.mp4")
    assert not any("169.254" in url for url in seen)  # never sent
    assert not (tmp_path / "x.mp4").exists()


def test_only_a_shared_dashboards_visitors_are_guarded(team):
    assert outbound.transport_for("http://10.0.0.5:8000/api/v3", shared=True) is None  # the operator's own
    assert outbound.transport_for("https://visitor.example/api/v3", shared=False) is None  # single-user


def test_a_services_link_is_drawn_only_as_a_link_never_as_a_path_on_the_server():
    # st.video and st.image read any other string as a file of the dashboard's machine and serve it.
    assert outbound.browser_url("https://cdn.example/v.mp4?sig=1") == "https://cdn.example/v.mp4?sig=1"
    for local in ("/etc/passwd", "secrets.toml", "file:///etc/passwd", "../x.png", "http:/etc/passwd", "", None):
        assert outbound.browser_url(local) is None, local
    assert outbound.browser_url("data:image/jpeg;base64,AAAA", data=True) is not None
    assert outbound.browser_url("data:image/jpeg;base64,AAAA") is None


def _save_page(url: str) -> None:
    import streamlit as st

    from components.common import connection

    st.write(connection.save(url, "sk-visitor") or "saved")
    st.write(connection.current().base_url)


@pytest.mark.parametrize("url, saved", [("http://169.254.169.254/api/v3", False),
                                         ("http://10.0.0.5:9000/api/v3", False),  # the service's host, not its port
                                         ("https://visitor.example/api/v3", True)])
def test_settings_will_not_save_an_internal_base_url_on_a_team_dashboard(team, tmp_path, monkeypatch, url, saved):
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("DAILIES_DATA_DIR", str(tmp_path))
    at = AppTest.from_function(_save_page, args=(url,), default_timeout=30).run()
    assert not at.exception
    answer, base_url = (m.value for m in at.markdown)
    assert (answer == "saved") is saved and (base_url == url) is saved
    if not saved:
        assert "not allowed" in answer and outbound.TRUSTED_HOSTS_ENV in answer


def test_a_result_link_that_names_a_file_of_the_dashboards_machine_is_not_played(tmp_path):
    from components.common import player

    secret = tmp_path / "secret.mp4"
    secret.write_bytes(b"\x00\x00\x00\x18ftypmp42 the operator's file")
    record = TaskRecord.model_validate({
        "id": "cgt-20270115080000-abcde", "model": "doubao-seedance-2-0-260128", "status": "succeeded",
        "created_at": 1_800_000_000, "updated_at": 1_800_000_090,
        "content": {"video_url": str(secret), "last_frame_url": "/etc/hostname"}})
    for name in ("video.mp4", "last_frame.png"):
        choice = player.choose(record, {}, 1_800_000_100, name)
        assert choice.source == "none" and choice.url is None, name


def _stored_inputs_page(path: str) -> None:
    from components.tasks import detail as task_detail
    from dailies.spec.models import TaskRequest

    task_detail._stored_inputs(TaskRequest.model_validate({
        "id": "cgt-20270115080000-abcde", "model": "doubao-seedance-2-0-260128", "created_at": 1_800_000_000,
        "content": [{"type": "image_url", "image_url": {"url": path}},
                    {"type": "image_url", "image_url": {"url": "data:image/png;base64,iVBORw0KGgo="}}]}))


def test_a_stored_inputs_path_is_not_read_from_the_dashboards_machine(tmp_path):
    from PIL import Image
    from streamlit.testing.v1 import AppTest

    secret = tmp_path / "secret.png"
    Image.new("RGB", (4, 4), "red").save(secret)
    at = AppTest.from_function(_stored_inputs_page, args=(str(secret),), default_timeout=30).run()
    assert not at.exception
    assert [i.proto.imgs[0].url[:5] for i in at.get("image")] == ["data:"]  # the thumbnail only
