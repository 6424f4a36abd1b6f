"""The `dailies` command against a live service: create, list, get, wait, download, cancel,
keys, and the port check of `dailies up`."""

from __future__ import annotations

import json
import socket
import time

import av
import pytest
from PIL import Image

from dailies.cli import main
from dailies.launcher import PortTaken, check_port_free, run_up
from tests.support.live_service import start_live_service

from .running import run


@pytest.fixture(scope="module")
def service(tmp_path_factory, module_backend):
    live = start_live_service(tmp_path_factory.mktemp("cli-service"), workers=1, **module_backend.settings())
    yield live
    live.stop()


@pytest.fixture
def ark_env(monkeypatch, service):
    monkeypatch.setenv("ARK_BASE_URL", service.base_url)
    monkeypatch.setenv("ARK_API_KEY", service.api_key)
    return service


def test_create_wait_get_list_download_with_json(ark_env, tmp_path):
    image = tmp_path / "first.png"
    Image.new("RGB", (640, 360), (10, 120, 200)).save(image)
    code, out, err = run("create", "--prompt", "a harbour at dawn", "--first-frame", str(image),
                         "--resolution", "480p", "--duration", "4", "--return-last-frame", "true", "--wait", "--json")
    assert code == 0, err
    task = json.loads(out)
    assert task["status"] == "succeeded" and task["duration"] == 4 and task["content"]["last_frame_url"]

    code, out, _ = run("get", task["id"], "--json")
    assert json.loads(out)["id"] == task["id"]
    code, out, _ = run("list", "--status", "succeeded", "--json")
    assert task["id"] in {t["id"] for t in json.loads(out)["items"]}

    target = tmp_path / "clip.mp4"
    code, out, err = run("download", task["id"], "-o", str(target))
    assert code == 0 and "downloading clip.mp4" in err
    with av.open(str(target)) as container:
        assert container.streams.video[0].codec_context.width == 864
    code, _, _ = run("download", task["id"], "--last-frame", "-o", str(tmp_path / "last.png"))
    assert code == 0 and Image.open(tmp_path / "last.png").size == (864, 496)


@pytest.mark.parametrize("name", ["first", "first.jpg"])
def test_an_image_is_sent_as_the_type_its_bytes_say_whatever_its_name(ark_env, tmp_path, name):
    """A PNG saved without an extension went as application/octet-stream and was refused in words
    about a type the user never gave; one named .jpg went as a JPEG."""
    image = tmp_path / name
    Image.new("RGB", (640, 360), (10, 120, 200)).save(image, format="PNG")
    code, out, err = run("create", "--prompt", "a harbour at dawn", "--first-frame", str(image),
                         "--resolution", "480p", "--duration", "4", "--json")
    assert code == 0, err
    code, out, err = run("request", json.loads(out)["id"], "--json")
    assert code == 0, err
    assert '"data:image/png;base64,' in out or "image/png" in out


def test_create_refuses_an_invalid_request_before_sending(ark_env):
    code, _, err = run("create", "--prompt", "x", "--seed", "4", "--duration", "99")
    assert code == 2
    assert "seed" in err and "duration" in err


def test_a_wait_that_ends_before_its_task_says_how_to_follow_it_again(ark_env, monkeypatch):
    """The wait's timeout (exit 3), the service out of reach until the wait's end (4), Ctrl-C (130):
    the task goes on, and the message names it and `dailies wait` (exit 1 is the task failing)."""
    from dailies.cli.tasks import EXIT_INTERRUPTED, EXIT_UNREACHABLE, EXIT_WAIT_TIMEOUT
    from dailies.client import Client

    code, out, _ = run("create", "--prompt", "a slow kite", "--resolution", "480p", "--duration", "4")
    task_id = out.strip()
    code, _, err = run("wait", task_id, "--timeout", "0")
    assert code == EXIT_WAIT_TIMEOUT and f"`dailies wait {task_id}`" in err
    code, _, err = run("wait", task_id, "--timeout", "1", "--poll", "0.2", "--base-url", "http://127.0.0.1:9/api/v3")
    assert code == EXIT_UNREACHABLE and "did not answer" in err and f"`dailies wait {task_id}`" in err

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(Client, "wait", interrupted)
    code, _, err = run("create", "--prompt", "a kite, then Ctrl-C", "--resolution", "480p", "--duration", "4",
                       "--wait")
    assert code == EXIT_INTERRUPTED and "stopped waiting" in err and "`dailies wait cgt-" in err


def test_cancel_and_wait_progress_text(ark_env):
    code, out, _ = run("create", "--prompt", "a kite", "--resolution", "480p", "--duration", "4")
    task_id = out.strip()
    code, out, err = run("wait", task_id, "--poll", "0.2")
    assert code == 0 and f"{task_id}: succeeded" in err and "succeeded" in out
    code, out, err = run("cancel", task_id)
    assert code == 2 and out == ""
    assert f"task {task_id} is succeeded" in err and f"`dailies cancel --delete {task_id}`" in err
    assert run("get", task_id)[0] == 0  # still there
    code, out, _ = run("cancel", "--delete", task_id)
    assert code == 0 and out == f"{task_id}: deleted, its record and result files removed (it was succeeded)\n"
    code, _, err = run("get", task_id)
    assert code == 1 and ("404" in err or "not found" in err.lower())


def test_cancel_of_a_queued_task_says_it_cancelled_it(tmp_path, monkeypatch):
    """On a service with no render slot the task stays queued: cancel cancels it, and says so."""
    live = start_live_service(tmp_path, workers=0)
    try:
        monkeypatch.setenv("ARK_BASE_URL", live.base_url)
        monkeypatch.setenv("ARK_API_KEY", live.api_key)
        task_id = run("create", "--prompt", "never rendered")[1].strip()
        code, out, _ = run("cancel", task_id, "--json")
        assert code == 0
        assert json.loads(out) == {"id": task_id, "action": "cancelled", "previous_status": "queued",
                                   "deleted_or_cancelled": True}
        assert json.loads(run("get", task_id, "--json")[1])["status"] == "cancelled"
    finally:
        live.stop()


def test_a_task_that_ends_between_the_read_and_the_cancel_is_not_deleted(tmp_path, monkeypatch):
    """cancel reads the task (queued), then cancels it; a task that ended in between was deleted by the
    spec's DELETE, its result with it. On a Dailies service the cancel only cancels: refused (exit 2)."""
    from dailies.client import sync

    live = start_live_service(tmp_path, workers=0)
    try:
        monkeypatch.setenv("ARK_BASE_URL", live.base_url)
        monkeypatch.setenv("ARK_API_KEY", live.api_key)
        task_id = run("create", "--prompt", "ends meanwhile")[1].strip()
        store = live.app.state.services.store
        read = sync.Tasks.get

        def read_then_it_ends(self, asked_id):
            record = read(self, asked_id)
            if store.get_by_id(task_id).status == "queued":
                assert store.claim_next("w1", time.time()).id == task_id
                store.fail(task_id, "w1", time.time(), "InternalServiceError", "ended as the cancel was sent")
            return record

        monkeypatch.setattr(sync.Tasks, "get", read_then_it_ends)
        code, out, err = run("cancel", task_id)
        assert code == 2 and out == "" and f"task {task_id} is failed" in err
        assert store.get_by_id(task_id).status == "failed"  # still there: nothing deleted
    finally:
        live.stop()


def test_a_closed_pipe_ends_the_output_quietly(ark_env):
    """`dailies list | head`: the reader is gone before the list is printed (a pipe whose read end
    is closed), and the command stops without a traceback."""
    import os
    import subprocess
    import sys

    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        done = subprocess.run([sys.executable, "-m", "dailies.cli", "list", "--json"], stdout=write_end,
                              stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        os.close(write_end)
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr, done.stderr
    assert done.returncode == 141


def test_unreachable_service_is_a_clear_error(monkeypatch):
    monkeypatch.setenv("ARK_API_KEY", "k")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    code, _, err = run("list", "--base-url", f"http://127.0.0.1:{port}/api/v3")
    assert code == 1 and err.startswith("dailies:")


def test_keys_create_and_list_masks(tmp_path):
    code, out, _ = run("keys", "create", "--data-dir", str(tmp_path), "--project", "studio")
    key = out.split("key")[1].split()[0]
    code, out, _ = run("keys", "--data-dir", str(tmp_path))
    assert "project studio" in out and key not in out and "webhook secret whsec_" in out
    code, out, _ = run("keys", "--data-dir", str(tmp_path), "--show")
    assert key in out


def test_up_says_clearly_when_a_port_is_taken(tmp_path, capsys):
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        with pytest.raises(PortTaken, match=f"Port {port}"):
            check_port_free("127.0.0.1", port, "service")
        assert run_up(tmp_path, api_port=port, ui_port=port + 1) == 2
    assert f"Port {port}" in capsys.readouterr().err


def test_serve_on_a_taken_port_says_so_before_it_claims_anything(tmp_path):
    """It started its render slots, which claimed queued tasks, and only then failed to bind (exit 3)."""
    import sqlite3

    import httpx

    live = start_live_service(tmp_path, workers=0)  # a task waiting in the data directory's queue
    try:
        created = httpx.post(live.base_url + "/contents/generations/tasks", headers={
            "Authorization": f"Bearer {live.api_key}"}, json={
            "model": "doubao-seedance-2-0-260128", "content": [{"type": "text", "text": "waits"}]})
        task_id = created.json()["id"]
    finally:
        live.stop()
    from dailies.service.access import keys as key_store

    key_store.create_key(tmp_path, "tests")  # a service that would start, but for its port
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        code, _, err = run("serve", "--data-dir", str(tmp_path), "--port", str(port), "--workers", "1")
    assert code == 2 and f"port {port} on 127.0.0.1 is taken" in err
    with sqlite3.connect(tmp_path / "dailies.sqlite3") as db:
        assert db.execute("SELECT status FROM tasks WHERE id = ?", (task_id,)).fetchone() == ("queued",)


def test_a_port_left_in_time_wait_by_a_stopped_run_is_free():
    # The side that closes first keeps TIME_WAIT: a server that stopped while a client was connected.
    # Linux lets the port be bound again only if the old socket had SO_REUSEADDR too, as uvicorn's has.
    with socket.socket() as server:
        server.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        client = socket.create_connection(("127.0.0.1", port))
        accepted, _ = server.accept()
        accepted.close()
    client.close()
    check_port_free("127.0.0.1", port, "service")  # would raise without SO_REUSEADDR


@pytest.mark.slow
def test_up_starts_both_and_stops_both_on_sigterm(tmp_path):
    import signal
    import subprocess
    import sys
    import time

    import httpx

    from tests.support.live_service import free_port

    api_port, ui_port = free_port(), free_port()
    proc = subprocess.Popen([sys.executable, "-m", "dailies.cli", "up", "--data-dir", str(tmp_path),
                             "--api-port", str(api_port), "--ui-port", str(ui_port), "--workers", "1"],
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        banner = ""
        deadline = time.monotonic() + 90
        while "Press Ctrl-C" not in banner and time.monotonic() < deadline:
            line = proc.stdout.readline()
            assert line or proc.poll() is None, banner
            banner += line
        assert f"http://127.0.0.1:{ui_port}" in banner and f"http://127.0.0.1:{api_port}/api/v3" in banner
        key = next(iter(json.loads((tmp_path / "keys.json").read_text())["keys"]))["key"]
        listing = httpx.get(f"http://127.0.0.1:{api_port}/api/v3/contents/generations/tasks",
                            headers={"Authorization": f"Bearer {key}"})
        assert listing.status_code == 200
        assert httpx.get(f"http://127.0.0.1:{ui_port}/_stcore/health").status_code == 200
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(30) == 0
        for port in (api_port, ui_port):
            with pytest.raises(httpx.ConnectError):
                httpx.get(f"http://127.0.0.1:{port}/", timeout=2)
    finally:
        if proc.poll() is None:
            proc.kill()


# ---------- any model or endpoint id; the catalog's rules when the id is known ----------


def test_a_byteplus_id_with_text_commands_is_created_and_echoed(ark_env):
    code, out, err = run("create", "--model", "seedance-1-0-pro-fast-251015",
                         "--prompt", "a red fox trots through snow --rs 480p --dur 3 --seed 5", "--json")
    assert code == 0, err
    created = json.loads(out)
    code, out, err = run("get", created["id"], "--json")
    record = json.loads(out)
    assert (record["model"], record["resolution"], record["duration"], record["seed"]) == (
        "seedance-1-0-pro-fast-251015", "480p", 3, 5)


def test_a_bad_text_command_is_refused_before_sending(ark_env):
    code, out, err = run("create", "--model", "seedance-1-0-pro-250528", "--prompt", "a fox --rs 4k", "--json")
    assert code == 2 and out == ""
    assert "content[0].text" in err and "4k" in err


def test_no_local_check_leaves_the_judgement_to_the_service(ark_env):
    code, out, err = run("create", "--model", "seedance-1-0-pro-250528", "--prompt", "a fox --rs 4k",
                         "--no-local-check", "--json")
    # Sent: the refusal is the service's 400 (exit 1), not the local one (exit 2).
    assert code == 1 and out == ""
    assert "400" in err and "content[0].text" in err


def test_a_schema_error_is_refused_before_sending(ark_env):
    code, out, err = run("create", "--model", "ep-20990101000000-zzzzz", "--prompt", "x",
                         "--execution-expires-after", "5")
    assert code == 2 and out == ""
    assert "execution_expires_after" in err


def test_an_endpoint_id_is_sent_as_it_is(ark_env):
    code, out, err = run("create", "--model", "ep-local-seedance-2-0-260128", "--prompt", "a kite", "--json")
    assert code == 0, err
    code, out, _ = run("get", json.loads(out)["id"], "--json")
    assert json.loads(out)["model"] == "doubao-seedance-2-0-260128"


def test_an_unknown_endpoint_is_the_services_404(ark_env):
    code, out, err = run("create", "--model", "ep-20990101000000-zzzzz", "--prompt", "a kite", "--json")
    assert code != 0 and "InvalidEndpointOrModel.NotFound" in err + out


def test_a_shared_journal_database_without_a_bucket_is_warned_about():
    from dailies.launcher import JOURNAL_DATABASE_ENV, JOURNAL_STORAGE_ENV, journal_setting_warning

    assert journal_setting_warning({}) is None
    assert journal_setting_warning({JOURNAL_DATABASE_ENV: "postgresql://db/x", JOURNAL_STORAGE_ENV: "s3://b/p"}) is None
    assert "--storage" in journal_setting_warning({JOURNAL_DATABASE_ENV: "postgresql://db/x"})


def test_wait_arguments_out_of_range_are_refused_before_anything_is_sent(ark_env, capsys, monkeypatch):
    """`create --wait --poll 0` used to create the task, then die in the wait with a traceback and
    without its id: the numbers are checked as the arguments are read (exit 2), no client is made."""
    from dailies.cli import tasks as cli_client

    def no_client(*args, **kwargs):
        raise AssertionError("a client was made: something may have been sent")

    monkeypatch.setattr(cli_client, "make_client", no_client)
    for argv, option in ((("create", "-p", "poll zero", "--wait", "--poll", "0"), "--poll"),
                         (("create", "-p", "timeout below 0", "--wait", "--timeout", "-1"), "--timeout"),
                         (("create", "-p", "poll nan", "--wait", "--poll", "nan"), "--poll"),
                         (("wait", "cgt-x", "--poll", "-1"), "--poll"),
                         (("wait", "cgt-x", "--timeout", "-5"), "--timeout")):
        with pytest.raises(SystemExit) as stopped:
            main(list(argv))  # not run(): argparse's message goes to the real stderr, which capsys reads
        assert stopped.value.code == 2, argv
        assert f"argument {option}: must be" in capsys.readouterr().err


def test_body_with_other_content_options_is_refused_naming_them(ark_env, tmp_path):
    """--body is sent as it is: options of the content beside it used to be dropped without a word."""
    body = tmp_path / "body.json"
    body.write_text(json.dumps({"model": "doubao-seedance-2-0-260128", "resolution": "480p", "duration": 4,
                                "content": [{"type": "text", "text": "from body"}]}))
    code, out, err = run("create", "--body", str(body), "-p", "ignored prompt", "--resolution", "1080p",
                         "--model", "doubao-seedance-1-5-pro-251215", "--camera-fixed", "false", "--json")
    assert code == 2 and out == ""
    assert "--model, --prompt, --resolution, --camera-fixed would be ignored" in err
    code, out, err = run("create", "--body", str(body), "--no-local-check", "--json")
    assert code == 0, err
    assert json.loads(out)["id"].startswith("cgt-")


def test_ordinary_mistakes_are_one_line_and_exit_2(ark_env, tmp_path, monkeypatch):
    """A bad --body, an output path that cannot be written, a malformed base URL: each said in one line
    on stderr (exit 2) instead of a traceback, a download's path checked before the video is fetched."""
    bad = tmp_path / "bad.json"
    bad.write_text("{bad")
    code, out, _ = run("create", "--prompt", "a kite", "--resolution", "480p", "--duration", "4", "--wait")
    task_id = out.split()[0]
    assert code == 0
    for argv, said in (
        (("create", "--body", str(bad)), f"--body {bad}: The request body is not valid JSON: Expecting property name"),
        (("create", "--body", str(tmp_path / "none.json")), f"--body {tmp_path / 'none.json'}: No such file"),
        (("download", task_id, "-o", str(tmp_path / "dl" / "first.mp4")), f"there is no folder {tmp_path / 'dl'}"),
        (("download", task_id, "-o", str(tmp_path)), f"--output {tmp_path} is a folder"),
        (("report", "--task", task_id, "--pdf", str(tmp_path / "nodir" / "r.pdf"), "--data-dir", str(tmp_path)),
         f"--pdf {tmp_path / 'nodir' / 'r.pdf'}: there is no folder"),
        (("list", "--base-url", "ftp://x"), "--base-url: base_url must be an http(s) URL"),
    ):
        code, out, err = run(*argv)
        assert (code, out) == (2, ""), argv
        assert err.startswith("dailies: ") and said in err and err.count("\n") == 1, err
    assert list(tmp_path.iterdir()) == [bad]  # nothing downloaded, no journal made for the report
    monkeypatch.setenv("ARK_BASE_URL", "http://h?x=1")
    code, _, err = run("list")
    assert code == 2 and err == "dailies: ARK_BASE_URL: base_url must not carry a query or fragment, got 'http://h?x=1'\n"


def test_ctrl_c_in_any_command_is_one_line_and_exit_130(ark_env, monkeypatch):
    from dailies.cli import tasks as cli_client
    from dailies.service.access import keys

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(cli_client, "make_client", interrupted)
    code, out, err = run("list")
    assert (code, out, err) == (130, "", "\ndailies: interrupted\n")
    code, _, err = run("create", "--prompt", "a kite")
    assert code == 130 and "interrupted; the task may have been created" in err
    monkeypatch.setattr(keys, "list_projects", interrupted)
    assert run("keys")[:3:2] == (130, "\ndailies: interrupted\n")


def test_connection_mistakes_say_what_to_do_on_the_command_line(ark_env, monkeypatch):
    """No key: the options and commands of the CLI, not the client's `api_key=...`; a base URL
    without /api/v3 (every path a 404): a hint at the prefix."""
    code, _, err = run("list", "--base-url", ark_env.root)
    assert code == 1 and "404" in err and f"is the base URL {ark_env.root} right? it ends in /api/v3" in err
    code, _, err = run("get", "cgt-nope")
    assert code == 1 and "404" in err and "base URL" not in err  # a task that is not there: no hint
    monkeypatch.delenv("ARK_API_KEY")
    code, out, err = run("list")
    assert (code, out) == (2, "")
    assert "--api-key" in err and "ARK_API_KEY" in err and "dailies keys --show" in err and "api_key=" not in err


@pytest.mark.parametrize("argv", [["--help"], ["create", "--help"], ["wait", "--help"]])
def test_help_lists_the_exit_statuses(argv, capsys):
    with pytest.raises(SystemExit):
        main(argv)
    shown = capsys.readouterr().out
    assert "exit statuses:" in shown
    for status in ("0 ", "1 ", "2 ", "3 ", "4 ", "130 "):
        assert f"\n  {status}" in shown
