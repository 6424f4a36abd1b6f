"""Callbacks carry Standard Webhooks signatures made with the project's secret, the one
`dailies keys` shows; receivers check them with the `standardwebhooks` package (what docs/callbacks.md
tells them to install) or with `dailies.webhooks.verify`."""

from __future__ import annotations

import pytest
from standardwebhooks.webhooks import Webhook
from standardwebhooks.webhooks import WebhookVerificationError as StandardVerificationError

from dailies.cli import main as dailies_main
from dailies.service.access.keys import new_webhook_secret
from dailies.webhooks import WebhookVerificationError, verify
from tests.service.callbacks.receiver import verifying
from tests.service.conftest import KEY_B

pytestmark = pytest.mark.anyio


async def test_receiver_verifies_every_callback_with_the_project_secret(open_env, tmp_path, backend):
    # The secret is read before anything is delivered, as a receiver's configuration would be.
    alpha_secret = backend.webhook_secret(tmp_path, "alpha")
    async with open_env() as env:
        url = env.receiver.script("/verified", verifying(alpha_secret))
        task_id = await env.create_task(url)
        env.run_next()
        log = await env.settled(task_id, events=3)
    assert [(e["status"], e["status_code"]) for e in log] == \
        [("queued", 200), ("running", 200), ("succeeded", 200)]
    got = env.receiver.deliveries("/verified")
    assert len(got) == 3
    for d in got:
        verify(alpha_secret, d.headers, d.body)
        headers = {name.lower(): value for name, value in d.headers.items()}
        assert Webhook(alpha_secret).verify(d.body, headers)["id"] == task_id
        with pytest.raises(StandardVerificationError):
            Webhook(new_webhook_secret()).verify(d.body, headers)
        with pytest.raises(WebhookVerificationError):
            verify(new_webhook_secret(), d.headers, d.body)
        with pytest.raises(WebhookVerificationError):
            verify(alpha_secret, d.headers, d.body.replace(b'"status":"', b'"status":"x'))


async def test_receiver_with_the_wrong_secret_refuses_and_the_attempts_are_logged(open_env, tmp_path):
    async with open_env() as env:
        url = env.receiver.script("/wrong", verifying(new_webhook_secret()))
        task_id = await env.create_task(url)
        env.run_next()
        log = await env.settled(task_id, events=3)
    assert [(e["status"], e["attempt"], e["status_code"]) for e in log] == [
        ("queued", 1, 401), ("running", 1, 401),
        ("succeeded", 1, 401), ("succeeded", 2, 401), ("succeeded", 3, 401), ("succeeded", 4, 401)]
    assert {e["error"] for e in log} == {"receiver answered 401"}


async def test_each_project_signs_with_its_own_secret(open_env, tmp_path, backend):
    alpha_secret, beta_secret = backend.webhook_secret(tmp_path, "alpha"), backend.webhook_secret(tmp_path, "beta")
    assert alpha_secret != beta_secret
    async with open_env() as env:
        alpha_url = env.receiver.script("/alpha", verifying(alpha_secret))
        beta_url = env.receiver.script("/beta", verifying(beta_secret))
        alpha_id = await env.create_task(alpha_url)
        beta_id = await env.create_task(beta_url, key=KEY_B)
        assert [(e["status_code"]) for e in await env.settled(alpha_id, events=1)] == [200]
        assert [(e["status_code"]) for e in await env.settled(beta_id, events=1)] == [200]
    beta_delivery = env.receiver.deliveries("/beta")[0]
    with pytest.raises(WebhookVerificationError):
        verify(alpha_secret, beta_delivery.headers, beta_delivery.body)


async def test_secret_shown_by_dailies_keys_verifies_callbacks(open_env, tmp_path, capsys, backend):
    where = ["--data-dir", str(tmp_path), *backend.cli_arguments()]
    assert dailies_main(["keys", "create", "--project", "alpha", *where]) == 0
    created = capsys.readouterr().out
    assert dailies_main(["keys", *where]) == 0
    listed = capsys.readouterr().out
    shown = [line.split()[-1] for line in (created + listed).splitlines() if "webhook secret" in line]
    assert len(shown) == 2 and shown[0] == shown[1] and shown[0].startswith("whsec_")
    async with open_env() as env:
        url = env.receiver.script("/shown", verifying(shown[0]))
        task_id = await env.create_task(url)
        assert [(e["status_code"]) for e in await env.settled(task_id, events=1)] == [200]


async def test_first_use_of_a_secret_by_concurrent_deliverers_yields_one_secret(open_env, tmp_path, backend):
    # No keys file yet: each project's secret is made on first use, by whichever deliverer comes
    # first while the others ask at the same moment. Several fresh projects give the race chances.
    projects = {f"key-{n}": f"project-{n}" for n in range(6)}
    async with open_env(start_callbacks=False, api_keys=projects) as env:
        assert not (tmp_path / "keys.json").exists()
        url = env.receiver.url("/first-use")
        ids = [await env.create_task(url, key=key, prompt=f"shot {i}") for i in range(4) for key in projects]
        env.services.callbacks.start()
        logs = [await env.settled(task_id, events=1) for task_id in ids]
    assert [(e["status_code"], e["error"]) for log in logs for e in log] == [(200, None)] * len(ids)
    secrets = {project: backend.webhook_secret(tmp_path, project) for project in projects.values()}
    assert len(set(secrets.values())) == len(projects)
    deliveries = env.receiver.deliveries("/first-use")
    assert len(deliveries) == len(ids)
    project_of_task = {task_id: projects[key] for task_id, key in zip(ids, [k for _ in range(4) for k in projects],
                                                                       strict=True)}
    for d in deliveries:
        verify(secrets[project_of_task[d.json["id"]]], d.headers, d.body)
