"""--log-format json (DAILIES_LOG_FORMAT): the formatter (dailies/log_format.py), and each kind of
process started with it, every line of its log an object with time, level, logger and message."""

from __future__ import annotations

import json
import logging
import os
import signal
import subprocess
import sys
import time
from datetime import datetime

import httpx
import pytest

from dailies import log_format
from dailies.cli import main
from dailies.launcher import wait_until_up
from dailies.log_format import JsonFormatter
from tests.support.processes import Serve, Worker
from tests.support.servers import free_port
from tests.support.waiting import wait_for

FIELDS = {"time", "level", "logger", "message"}


def _record(message: str, *args, exc_info=None, **extra) -> logging.LogRecord:
    record = logging.getLogger("dailies.test").makeRecord("dailies.test", logging.WARNING, __file__, 1, message,
                                                          args, exc_info, extra=extra or None)
    record.created = 1_767_225_600.25  # 2026-01-01T00:00:00.250Z
    return record


def test_a_record_is_one_json_line_with_the_fields():
    line = JsonFormatter().format(_record("task %s\nfailed: %s", "cgt-1", '"quoted"'))
    assert "\n" not in line
    assert json.loads(line) == {"time": "2026-01-01T00:00:00.250Z", "level": "WARNING", "logger": "dailies.test",
                                "message": 'task cgt-1\nfailed: "quoted"'}


def test_the_time_is_iso_8601_in_utc():
    parsed = datetime.fromisoformat(log_format.iso_utc(time.time()))
    assert parsed.utcoffset().total_seconds() == 0 and abs(parsed.timestamp() - time.time()) < 5


def test_request_and_task_ids_come_from_the_context_or_the_record():
    formatter = JsonFormatter()
    assert "request_id" not in json.loads(formatter.format(_record("x")))
    token = log_format.request_id.set("req-1")
    try:
        with log_format.for_task("cgt-7"):
            entry = json.loads(formatter.format(_record("x")))
            assert (entry["request_id"], entry["task_id"]) == ("req-1", "cgt-7")
        assert "task_id" not in json.loads(formatter.format(_record("x")))
    finally:
        log_format.request_id.reset(token)
    assert json.loads(formatter.format(_record("x", task_id="cgt-9")))["task_id"] == "cgt-9"


def test_an_exception_is_a_field():
    try:
        raise ValueError("broken")
    except ValueError:
        entry = json.loads(JsonFormatter().format(_record("failed", exc_info=sys.exc_info())))
    assert entry["message"] == "failed"
    assert entry["exception"].startswith("Traceback") and "ValueError: broken" in entry["exception"]


def test_the_format_is_text_or_json_and_nothing_else(monkeypatch, capsys):
    assert log_format.log_format(" JSON ") == "json" and log_format.log_format("text") == "text"
    with pytest.raises(ValueError):
        log_format.log_format("yaml")
    monkeypatch.setenv("DAILIES_LOG_FORMAT", "yaml")  # checked with every setting at start (dailies/config.py)
    assert main(["worker", "--slots", "1"]) == 2
    assert "DAILIES_LOG_FORMAT: Input should be 'text' or 'json'" in capsys.readouterr().err


# ---------- each kind of process ----------

def json_lines(text: str) -> list[dict]:
    """Every line of `text` as an object with the fields (an AssertionError names a line that is not)."""
    entries = []
    for line in text.splitlines():
        try:
            entry = json.loads(line)
        except ValueError:
            raise AssertionError(f"not a JSON line: {line!r}\n--- the whole log:\n{text}") from None
        assert isinstance(entry, dict) and FIELDS <= entry.keys(), line
        datetime.fromisoformat(entry["time"])
        entries.append(entry)
    assert entries, "no lines at all"
    return entries


KEY = "log-test-key"
SLOW = {"model": "doubao-seedance-2-0-260128", "resolution": "1080p", "duration": 12}


def _create(serve: Serve, body: dict) -> str:
    answer = httpx.post(f"{serve.base_url}/contents/generations/tasks", headers={"Authorization": f"Bearer {KEY}"},
                        json=body, timeout=10)
    assert answer.status_code == 200, answer.text
    return answer.json()["id"]


@pytest.mark.slow
def test_serve_logs_json_lines_with_request_ids(tmp_path):
    serve = Serve(tmp_path, workers=1, api_keys=f"studio:{KEY}", extra_args=("--log-format", "json"))
    try:
        task_id = _create(serve, {"model": "doubao-seedance-2-0-260128", "content": [{"type": "text", "text": "x"}]})
        answer = httpx.get(f"{serve.base_url}/contents/generations/tasks/{task_id}",
                           headers={"Authorization": f"Bearer {KEY}"})
        request_id = answer.headers["x-request-id"]
        assert httpx.get(f"{serve.base_url}/contents/generations/tasks/nope", headers={
            "Authorization": "Bearer wrong"}).status_code == 401
        wait_for(lambda: httpx.get(f"{serve.base_url}/contents/generations/tasks/{task_id}", headers={
            "Authorization": f"Bearer {KEY}"}).json()["status"] != "queued", "the task's first move", 60)
    finally:
        assert serve.terminate(60) == 0
    entries = json_lines(serve.output())
    logged = [e for e in entries if e.get("request_id") == request_id]
    assert len(logged) == 1 and logged[0]["logger"] == "dailies.http" and f"/tasks/{task_id} -> 200" in \
        logged[0]["message"]
    assert all(e["request_id"] for e in entries if e["logger"] == "dailies.http")
    # A task's state changes name it: the create (in its request) and every move after it.
    [created] = [e for e in entries if e["message"].startswith(f"task {task_id} created")]
    assert created["task_id"] == task_id and created["request_id"]
    moved = [e for e in entries if e["message"].startswith(f"task {task_id} ->")]
    assert moved and all(e.get("task_id") == task_id for e in moved), moved


@pytest.mark.slow
def test_worker_logs_json_lines_with_task_ids(tmp_path):
    api = Serve(tmp_path, workers=0, api_keys=f"studio:{KEY}")
    try:
        task_id = _create(api, {**SLOW, "content": [{"type": "text", "text": "a long take"}]})
        worker = Worker(tmp_path, extra_args=("--log-format", "json", "--grace-period", "0"), wait=False)
        deadline = time.monotonic() + 60
        while httpx.get(f"{api.base_url}/contents/generations/tasks/{task_id}",
                        headers={"Authorization": f"Bearer {KEY}"}).json()["status"] != "running":
            assert worker.alive() and time.monotonic() < deadline, worker.output()
            time.sleep(0.2)
        assert worker.terminate(60) == 0
    finally:
        api.stop()
    entries = json_lines(worker.output())
    assert any(e["message"].startswith("worker started") for e in entries)
    stopped = [e for e in entries if e.get("task_id") == task_id]
    assert any("stopped by shutdown" in e["message"] for e in stopped), entries


def _stop_group(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)


@pytest.mark.slow
def test_dashboard_and_its_streamlit_log_json_lines(tmp_path):
    port = free_port()
    err_path, out_path = tmp_path / "stderr", tmp_path / "stdout"
    env = {**os.environ, "DAILIES_LOG_FORMAT": "json", "ARK_BASE_URL": "http://127.0.0.1:9/api/v3",
           "ARK_API_KEY": "dashboard-log-key-000", "DAILIES_DATABASE_URL": "postgresql://127.0.0.1:9/none"}
    env.pop("DAILIES_STORAGE", None)
    with open(err_path, "w") as err, open(out_path, "w") as out:
        # A shared journal database without a bucket: the warning `dailies dashboard` itself gives.
        proc = subprocess.Popen([sys.executable, "-m", "dailies", "dashboard", "--ui-port", str(port),
                                 "--data-dir", str(tmp_path / "data")], env=env, stdout=out, stderr=err,
                                start_new_session=True)
        try:
            wait_until_up(f"http://127.0.0.1:{port}/_stcore/health", proc, "dashboard", timeout=90)
            time.sleep(1)
        finally:
            _stop_group(proc)
    entries = json_lines(err_path.read_text())
    loggers = {e["logger"] for e in entries}
    assert "dailies.cli" in loggers  # this process's own line (the journal warning)
    welcome = [e for e in entries if e["logger"] == "streamlit.cli"]
    assert any("You can now view your Streamlit app" in e["message"] for e in welcome)
    assert any(f"http://127.0.0.1:{port}" in e["message"] for e in welcome)
    assert out_path.read_text() == ""


@pytest.mark.slow
def test_up_logs_json_lines_its_service_and_its_dashboard(tmp_path):
    api_port, ui_port = free_port(), free_port()
    err_path = tmp_path / "stderr"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DAILIES_DATABASE", "DAILIES_STORAGE"))}
    with open(err_path, "w") as err:
        proc = subprocess.Popen([sys.executable, "-m", "dailies", "up", "--log-format", "json", "--data-dir",
                                 str(tmp_path / "data"), "--api-port", str(api_port), "--ui-port", str(ui_port),
                                 "--slots", "1"], env=env, stdout=subprocess.DEVNULL, stderr=err,
                                start_new_session=True)
        try:
            wait_until_up(f"http://127.0.0.1:{ui_port}/_stcore/health", proc, "dashboard", timeout=90)
            key = json.loads((tmp_path / "data" / "keys.json").read_text())["keys"][0]["key"]
            assert httpx.get(f"http://127.0.0.1:{api_port}/api/v3/contents/generations/tasks",
                             headers={"Authorization": f"Bearer {key}"}).status_code == 200
            time.sleep(1)
        finally:
            _stop_group(proc)
    assert any(e["logger"] == "streamlit.cli" for e in json_lines(err_path.read_text()))
    service = json_lines((tmp_path / "data" / "service.log").read_text())
    assert any(e["logger"] == "dailies.http" and e.get("request_id") for e in service)
