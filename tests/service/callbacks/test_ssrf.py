"""Callback URLs that resolve to private, link-local or loopback addresses are refused: at create
(400 naming callback_url) and again at delivery, since what a name resolves to can change."""

from __future__ import annotations

import pytest

from dailies.service.settings import Settings
from tests.service.conftest import text_body

pytestmark = pytest.mark.anyio


def assert_refused(response, fragment: str) -> None:
    assert response.status_code == 400, response.text
    error = response.json()["error"]
    assert error["code"] == "InvalidParameter"
    assert error["param"] == "callback_url"
    assert "callback_url" in error["message"] and fragment in error["message"]


@pytest.mark.parametrize(("url", "reason"), [
    ("http://10.0.0.5/hook", "private"),
    ("http://192.168.1.10:8080/hook", "private"),
    ("http://172.16.3.4/hook", "private"),
    ("http://169.254.169.254/latest/meta-data", "link-local"),
    ("http://[fe80::1]/hook", "link-local"),
    ("http://[::ffff:10.0.0.1]/hook", "private"),
    ("http://0.0.0.0:9/hook", "unspecified"),
])
async def test_private_and_link_local_are_refused_at_create(env, url, reason):
    assert_refused(await env.create(_body(url)), reason)
    assert env.receiver.deliveries() == []


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/hook", "http://127.5.6.7/hook", "http://[::1]:9/hook",
                                 "http://localhost:9/hook"])
async def test_loopback_is_refused_when_not_allowed(open_env, url):
    async with open_env(allow_loopback_callbacks=False) as env:
        assert_refused(await env.create(_body(url)), "loopback")


async def test_loopback_is_refused_by_default_and_delivered_when_allowed(open_env, tmp_path):
    """Hole 4: a loopback callback let any member make the node POST to its own ports and read in the
    log what answered. Refused unless the operator (or `dailies up`, one person's machine) allows it."""
    default = Settings(data_dir=tmp_path).allow_loopback_callbacks
    assert default is False
    async with open_env(allow_loopback_callbacks=default) as env:
        assert_refused(await env.create(_body(env.receiver.url("/local"))), "loopback")
    async with open_env(allow_loopback_callbacks=True) as env:
        task_id = await env.create_task(env.receiver.url("/local"))
        assert [e["status_code"] for e in await env.settled(task_id, events=1)] == [200]


def test_dailies_serve_refuses_loopback_callbacks_unless_asked(tmp_path, capsys):
    from dailies.cli import build_parser
    from dailies.cli.processes import serve_settings

    def settings(*flags: str):
        return serve_settings(build_parser().parse_args(["serve", "--data-dir", str(tmp_path), *flags]))

    assert settings().allow_loopback_callbacks is False
    assert settings("--allow-loopback-callbacks").allow_loopback_callbacks is True
    assert capsys.readouterr().err == ""
    # The old opt-out is the default now: still accepted, with a line saying so.
    assert settings("--refuse-loopback-callbacks").allow_loopback_callbacks is False
    assert "--refuse-loopback-callbacks is deprecated" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        settings("--allow-loopback-callbacks", "--refuse-loopback-callbacks")


def test_dailies_up_allows_loopback_callbacks_for_one_person_only(tmp_path):
    from dailies.launcher import serve_command

    assert "--allow-loopback-callbacks" in serve_command(tmp_path, "127.0.0.1", 8000, None)
    assert "--allow-loopback-callbacks" not in serve_command(tmp_path, "127.0.0.1", 8000, None, team=True)


async def test_private_is_accepted_when_allowed_but_link_local_never(open_env):
    async with open_env(allow_private_callbacks=True, start_callbacks=False) as env:
        response = await env.create(_body("http://10.0.0.5/hook"))
        assert response.status_code == 200, response.text
        assert_refused(await env.create(_body("http://169.254.169.254/latest")), "link-local")


@pytest.mark.parametrize("url", ["ftp://127.0.0.1/hook", "file:///etc/passwd", "127.0.0.1:9/hook"])
async def test_non_http_urls_are_refused(env, url):
    response = await env.create(_body(url))
    assert response.status_code == 400, response.text
    assert response.json()["error"]["param"] == "callback_url"


async def test_private_address_is_refused_again_at_delivery(open_env):
    # Accepted while private addresses were allowed; by delivery time they are not (as if the
    # name had since been pointed at a private address).
    async with open_env(allow_private_callbacks=True, start_callbacks=False) as env:
        task_id = await env.create_task("http://10.255.255.1:9/hook")
        env.run_next()
        env.settings.allow_private_callbacks = False
        env.services.callbacks.start()
        log = await env.settled(task_id, events=3)
    assert [(e["status"], e["attempt"], e["status_code"]) for e in log] == [
        ("queued", 1, None), ("running", 1, None),
        ("succeeded", 1, None), ("succeeded", 2, None), ("succeeded", 3, None), ("succeeded", 4, None)]
    for entry in log:
        assert entry["error"].startswith("refused: ") and "private" in entry["error"]


async def test_loopback_is_refused_at_delivery_and_the_receiver_is_not_contacted(open_env):
    async with open_env(start_callbacks=False) as env:
        task_id = await env.create_task(env.receiver.url("/guarded"))
        env.settings.allow_loopback_callbacks = False
        env.services.callbacks.start()
        log = await env.settled(task_id, events=1)
        assert [(e["attempt"], e["status_code"]) for e in log] == [(1, None)]
        assert log[0]["error"].startswith("refused: ") and "loopback" in log[0]["error"]
        assert (await env.callback_log(task_id)).json()["items"] == log
    assert env.receiver.deliveries() == []


def _body(url: str) -> dict:
    return text_body(callback_url=url)
