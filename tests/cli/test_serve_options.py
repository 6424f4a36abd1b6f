"""`dailies --version` and `python -m dailies` (the version written once), `serve --slots` (and the old
`--workers`), and `serve --forwarded-allow-ips`: result URLs as the client sees them through a proxy."""

from __future__ import annotations

import subprocess
import sys
import time
import tomllib
from pathlib import Path

import httpx
import pytest

from dailies import __version__
from dailies.cli import build_parser, main
from dailies.cli.processes import default_slots, serve_settings
from dailies.service.api.forwarded import TrustedProxies, forwarded_host
from tests.support.processes import Serve

ROOT = Path(__file__).resolve().parents[2]


# ---------- one version ----------

def test_python_m_dailies_prints_the_version():
    done = subprocess.run([sys.executable, "-m", "dailies", "--version"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == f"dailies {__version__}"


def test_the_openapi_document_the_user_agent_and_the_metadata_read_the_one_version(tmp_path):
    from dailies.client._base import USER_AGENT
    from dailies.service.api.app import create_app
    from dailies.service.settings import Settings

    app = create_app(Settings(data_dir=tmp_path, workers=0, api_keys={"k": "p"}), start_background=False)
    assert app.openapi()["info"]["version"] == __version__
    assert USER_AGENT == f"dailies-client/{__version__}"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"] and project["project"]["dynamic"] == ["version"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "dailies.__version__"}


# ---------- render slots ----------

def _serve(tmp_path: Path, *flags: str):
    return serve_settings(build_parser().parse_args(["serve", "--data-dir", str(tmp_path), *flags]))


def test_serve_takes_slots_and_the_old_workers_with_a_line_saying_so(tmp_path, capsys):
    assert _serve(tmp_path).workers == default_slots()
    assert _serve(tmp_path, "--slots", "3").workers == 3
    assert _serve(tmp_path, "--slots", "0").workers == 0
    assert capsys.readouterr().err == ""
    assert _serve(tmp_path, "--workers", "2").workers == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "--workers is deprecated, use --slots" in err
    with pytest.raises(SystemExit) as exited:
        _serve(tmp_path, "--slots", "1", "--workers", "2")
    assert exited.value.code == 2 and "not allowed with argument" in capsys.readouterr().err


def test_serve_help_says_slots_and_not_workers(capsys):
    with pytest.raises(SystemExit):
        main(["serve", "--help"])
    out = capsys.readouterr().out
    assert "--slots" in out and "--workers" not in out and "--forwarded-allow-ips" in out


def test_up_passes_slots_to_its_serve(monkeypatch, tmp_path, capsys):
    from dailies import launcher

    seen = {}
    monkeypatch.setattr(launcher, "run_up", lambda *a, **k: seen.update(k) or 0)
    assert main(["up", "--data-dir", str(tmp_path), "--slots", "2"]) == 0 and seen["slots"] == 2
    assert main(["up", "--data-dir", str(tmp_path), "--workers", "1"]) == 0 and seen["slots"] == 1
    assert "--workers is deprecated" in capsys.readouterr().err
    command = launcher.serve_command(tmp_path, "127.0.0.1", 8000, 2)
    assert command[command.index("--slots") + 1] == "2" and "--workers" not in command


# ---------- forwarded headers ----------

def test_trusted_proxies_are_addresses_networks_or_any():
    trusted = TrustedProxies("10.0.0.0/8, 192.168.1.7,::1")
    assert "10.2.3.4" in trusted and "192.168.1.7" in trusted and "::1" in trusted
    assert "192.168.1.8" not in trusted and "127.0.0.1" not in trusted and None not in trusted
    assert "203.0.113.9" in TrustedProxies("*") and "127.0.0.1" in TrustedProxies(["127.0.0.1"])


@pytest.mark.parametrize(("values", "host"), [
    ([b"dailies.example.com"], b"dailies.example.com"),
    ([b"dailies.example.com:8443"], b"dailies.example.com:8443"),
    ([b"evil.example, proxy.example.com"], b"proxy.example.com"),  # the nearest proxy's
    ([b"a.example", b"b.example"], b"b.example"),
    ([b"[2001:db8::1]:443"], b"[2001:db8::1]:443"),
    ([b"user@evil.example"], None),
    ([b"evil.example/path"], None),
    ([b"evil example"], None),
    ([], None),
])
def test_forwarded_host_is_the_last_value_and_only_a_host(values, host):
    assert forwarded_host([(b"host", b"127.0.0.1:8000"), *((b"x-forwarded-host", v) for v in values)]) == host


PROXY = "127.0.0.2"  # the proxy's address: a loopback address other than the one trusted by default
KEY = "proxy-test-key"


def _task(root: str, task_id: str, local_address: str, headers: dict[str, str]) -> dict:
    transport = httpx.HTTPTransport(local_address=local_address)
    with httpx.Client(transport=transport, timeout=10) as http:
        answer = http.get(f"{root}/api/v3/contents/generations/tasks/{task_id}",
                          headers={"Authorization": f"Bearer {KEY}", **headers})
    assert answer.status_code == 200, answer.text
    return answer.json()


@pytest.mark.slow
def test_result_urls_are_the_clients_through_a_trusted_proxy_only(tmp_path):
    proxied = {"X-Forwarded-Proto": "https", "X-Forwarded-Host": "dailies.example.com",
               "X-Forwarded-For": "203.0.113.9"}
    behind = Serve(tmp_path, workers=1, api_keys=f"studio:{KEY}", extra_args=("--forwarded-allow-ips", PROXY))
    default = None
    try:
        default = Serve(tmp_path, workers=0, api_keys=f"studio:{KEY}")  # the same tasks, the default trust
        created = httpx.post(f"{behind.base_url}/contents/generations/tasks", headers={
            "Authorization": f"Bearer {KEY}"}, json={"model": "doubao-seedance-2-0-260128", "resolution": "480p",
                                                     "duration": 4, "content": [{"type": "text", "text": "a quay"}]})
        assert created.status_code == 200, created.text
        task_id = created.json()["id"]
        deadline = time.monotonic() + 120
        while (task := _task(behind.root, task_id, "127.0.0.1", {}))["status"] != "succeeded":
            assert task["status"] in ("queued", "running") and time.monotonic() < deadline, task
            time.sleep(0.3)

        through_proxy = _task(behind.root, task_id, PROXY, proxied)["content"]["video_url"]
        assert through_proxy.startswith("https://dailies.example.com/"), through_proxy
        # The same headers from an address not named: not believed (the option replaces the default).
        not_named = _task(behind.root, task_id, "127.0.0.1", proxied)["content"]["video_url"]
        assert not_named.startswith(f"http://127.0.0.1:{behind.port}/"), not_named
        # Without the option, the proxy's headers are not believed either.
        untrusted = _task(default.root, task_id, PROXY, proxied)["content"]["video_url"]
        assert untrusted.startswith(f"http://127.0.0.1:{default.port}/"), untrusted
        # The result URL as given through the proxy is the one the service serves (path and signature).
        direct = httpx.get(through_proxy.replace("https://dailies.example.com", behind.root), timeout=10)
        assert direct.status_code == 200 and direct.content[4:8] == b"ftyp"
    finally:
        behind.stop()
        if default is not None:
            default.stop()
