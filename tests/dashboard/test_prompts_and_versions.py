"""Two parts of reviewing together that the dashboard already does: a task made outside the dashboard
(the CLI, the SDK) shows its prompt and inputs in Tasks, from the service's stored request; and a task
submitted from a hand-off (rerun, edit, final, chained shot) joins the shot of the task it came from.
Also the key's identity on a Dailies service (`client.me()`)."""

from __future__ import annotations

import json

from PIL import Image

from components.common import handoff
from dailies.client import Client, NotFoundError

from ..cli.running import run
from .test_compose import compose, created_ids, send
from .test_compose import setup as compose_setup
from .test_tasks_actions import detail, finished, journal

V2 = "doubao-seedance-2-0-260128"


def small(prompt: str, **fields) -> dict:
    return {"model": V2, "content": [{"type": "text", "text": prompt}], "resolution": "480p", "duration": 4,
            **fields}


def test_a_task_made_with_the_cli_shows_its_prompt_and_inputs_in_tasks(dashboard_env, tmp_path):
    frame = tmp_path / "frame.png"
    Image.new("RGB", (640, 360), (200, 120, 40)).save(frame, "PNG")
    code, out, _ = run("create", "--base-url", dashboard_env.base_url, "--api-key", dashboard_env.api_key,
                       "--model", V2, "--prompt", "lantern over the river", "--first-frame", str(frame),
                       "--resolution", "480p", "--duration", "4", "--wait", "--poll", "0.2", "--json")
    assert code == 0, out
    task_id = json.loads(out)["id"]
    at = detail(task_id)
    assert not at.exception
    assert any(m.value == "> lantern over the river" for m in at.markdown)
    at.session_state["tasks.detail.tab"] = "Inputs"  # drawn when opened
    at.run()
    inputs = [m.value for m in at.markdown if m.value.startswith("**image_url**")]
    assert inputs and "first_frame" in inputs[0] and "inline image/png" in inputs[0]


def test_a_rerun_an_edit_and_a_chained_shot_join_the_shot_they_came_from(dashboard_env):
    with Client(base_url=dashboard_env.base_url, api_key=dashboard_env.api_key) as client:
        first = finished(client, small("a heron at dawn"))
    made = {}
    for how, prompt, lineage in (("rerun", "a heron at dawn", {"parent": first, "how": None}),
                                 ("edit", "a heron at dusk", {"parent": first, "how": None})):
        # Opened from the first task (its request), then sent as it is, or with the prompt changed.
        at = compose(**{handoff.PREFILL_KEY: {"request": small("a heron at dawn"), "note": "", "lineage": lineage}})
        [made[how]] = created_ids(send(compose_setup(at, prompt=prompt)))
    at = compose(**{handoff.PREFILL_KEY: {"request": small("after the edit"), "note": "",
                                          "lineage": {"parent": made["edit"], "how": "chain"}}})
    [made["chain"]] = created_ids(send(compose_setup(at, prompt="after the edit")))
    # The hand-off is used once: the next submission starts a shot of its own.
    [alone] = created_ids(send(compose_setup(at, prompt="a new idea")))

    links = journal().shot_links([*made.values(), alone])
    assert {how: (links[t].shot_id, links[t].how) for how, t in made.items()} == {
        "rerun": (first, "rerun"), "edit": (first, "edit"), "chain": (first, "chain")}
    assert links[made["chain"]].parent_id == made["edit"] and alone not in links


def test_me_names_the_keys_project_and_member(dashboard_env, tmp_path):
    with Client(base_url=dashboard_env.base_url, api_key=dashboard_env.api_key) as client:
        who = client.me()
    assert who.project == "tests" and who.member is None
    other = tmp_path / "nothing"
    other.mkdir()
    # A service without /dailies/v1 (here: a path no Dailies serves) answers 404.
    with Client(base_url=dashboard_env.base_url.replace("/api/v3", "/elsewhere/api/v3"),
                api_key=dashboard_env.api_key) as client:
        try:
            client.me()
        except NotFoundError:
            pass
        else:
            raise AssertionError("a service without /dailies/v1/me must answer 404")
