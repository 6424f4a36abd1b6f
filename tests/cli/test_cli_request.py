"""`dailies request TASK_ID`: what a task was asked for (prompt, inputs, parameters), from a live
service; and a clear word from a service that does not keep it."""

from __future__ import annotations

import json
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
from PIL import Image

from dailies.service.callers import KeyOptions
from tests.support.live_service import start_live_service

from .running import run

KEY = "cli-request-key"


@pytest.fixture(scope="module")
def service(tmp_path_factory):
    live = start_live_service(tmp_path_factory.mktemp("cli-request"), workers=0, api_keys={KEY: "studio"},
                              key_options={KEY: KeyOptions(name="alice")})
    yield live
    live.stop()


@pytest.fixture
def ark_env(monkeypatch, service):
    monkeypatch.setenv("ARK_BASE_URL", service.base_url)
    monkeypatch.setenv("ARK_API_KEY", KEY)
    return service


def test_request_shows_the_prompt_and_inputs_and_json_gives_the_thumbnail(ark_env, tmp_path):
    image = tmp_path / "first.png"
    Image.new("RGB", (640, 360), (10, 120, 200)).save(image)
    code, out, err = run("create", "--prompt", "a harbour at dawn --dur 5", "--ref-image", str(image),
                         "--ref-image", "https://img.example/boat.png", "--resolution", "480p")
    assert code == 0, err
    task_id = out.strip()

    code, out, err = run("request", task_id)
    assert code == 0, err
    lines = out.splitlines()
    assert lines[0].startswith(f"{task_id}  doubao-seedance-2-0-260128  created ") and lines[0].endswith(" by alice")
    assert "prompt: a harbour at dawn --dur 5" in lines
    assert any(line.startswith("content[1] image_url reference_image: inline image/png, 640x360, ") for line in lines)
    assert "content[2] image_url reference_image: https://img.example/boat.png" in lines
    assert any(line.startswith("parameters: ") and "resolution=480p" in line and "duration=5" in line
               for line in lines)

    code, out, _ = run("request", task_id, "--json")
    got = json.loads(out)
    first = got["content"][1]["image_url"]
    assert first["url"].startswith("data:image/jpeg;base64,") and first["inline"]["width"] == 640
    assert got["created_by"] == "alice" and got["prompt"] == "a harbour at dawn --dur 5"


def test_an_unknown_task_is_a_404(ark_env):
    code, _, err = run("request", "cgt-20250101000000-nope0")
    assert code == 1 and "NotFound.Task" in err


class _NoSuchPath(BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 - the name http.server calls
        self.send_response(404)
        self.send_header("Content-Type", "text/plain")
        self.end_headers()
        self.wfile.write(b"404 page not found")

    def log_message(self, *args):
        pass


def test_a_service_without_the_endpoint_says_so(monkeypatch):
    server = ThreadingHTTPServer(("127.0.0.1", 0), _NoSuchPath)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        monkeypatch.setenv("ARK_BASE_URL", f"http://127.0.0.1:{server.server_port}/api/v3")
        monkeypatch.setenv("ARK_API_KEY", "any")
        code, out, err = run("request", "cgt-20250101000000-abcde")
    finally:
        server.shutdown()
        server.server_close()
    assert code == 1 and out == ""
    assert "does not say what a task was asked for" in err and "/dailies/v1/tasks/ID/request" in err
