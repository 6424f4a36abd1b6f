"""A team dashboard's server contacts, for a visitor, only public hosts, its own service and the hosts
the operator trusts (components/outbound.py): a service a visitor points Settings at cannot have the
server fetch an internal address (a cloud's metadata service) and hand the bytes back as a kept copy."""

from __future__ import annotations

import httpx
import pytest

from components import outbound
from dailies import netguard
from dailies.client import APIConnectionError, Client

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
    monkeypatch.setenv(outbound.TRUSTED_HOSTS_ENV, "10.0.0.9, minio.internal")
    assert outbound.address_problem("http://10.0.0.9/api/v3") is None
    assert outbound.address_problem("http://minio.internal:9000/bucket/x") is None


def test_a_visitors_connection_refuses_a_result_url_or_a_redirect_to_an_internal_address(team, tmp_path):
    seen: list[str] = []

    def visitor_service(request: httpx.Request) -> httpx.Response:
        seen.append(str(request.url))
        if request.url.path == "/result.mp4":  # a result link that redirects inside the network
            return httpx.Response(302, headers={"Location": "http://169.254.169.254/latest/meta-data/"})
        return httpx.Response(200, content=b"\x00\x00\x00\x18ftypmp42")

    transport = outbound.transport_for("https://visitor.example/api/v3", team=True)
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


def test_only_a_team_dashboards_visitors_are_guarded(team):
    assert outbound.transport_for("http://10.0.0.5:8000/api/v3", team=True) is None  # the operator's own
    assert outbound.transport_for("https://visitor.example/api/v3", team=False) is None  # single-user


def _save_page(url: str) -> None:
    import streamlit as st

    from components import connection

    st.write(connection.save(url, "sk-visitor") or "saved")
    st.write(connection.current().base_url)


@pytest.mark.parametrize("url, saved", [("http://169.254.169.254/api/v3", False),
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
