"""Reviewing live behind a presenter, in headless Chromium: one service, two team dashboards (two
processes), three people. Ana presents from dashboard A; Bo (a member) and a guest holding the session's
link follow from dashboard B. Whatever Ana's player does (pause on a frame, step, play, speed, draw, point,
change version) the followers' players do; Ana's dashboard process is killed and started again mid-session
and nothing is lost; Ana hands over to Bo, and Ana and the guest follow him.
The guest leaves and comes back, and someone joins late: both are where the presenter is at once.
Screenshots: tests/artifacts/screenshots/live-*.png.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import time
from contextlib import contextmanager
from pathlib import Path

import pytest

from dailies.launcher import wait_until_up
from dailies.service.access import keys as key_store
from dailies.service.callers import KeyOptions
from tests.support.processes import Serve, alive, children_of, stop_all
from tests.support.servers import free_port
from tests.support.waiting import wait_for

from ..cli.running import run
from .conftest import Product
from .test_team_sharing import enter_key, new_tab
from .ui import COMPONENT_QUERY as SHADOW
from .ui import choose, drag_on, open_page, screenshot, settle, until_quiet

pytestmark = [pytest.mark.browser, pytest.mark.slow]

V2 = "doubao-seedance-2-0-260128"
PROMPTS = ("lantern over the river at night", "paper boat at dawn on a pond")


class Dashboard:
    """`dailies dashboard --team` on a port of its own, which the test may kill and start again."""

    def __init__(self, data_dir: Path, api_url: str) -> None:
        self.data_dir, self.api_url, self.port = data_dir, api_url, free_port()
        self.proc: subprocess.Popen | None = None
        self.start()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def product(self) -> Product:
        return Product(self.url, self.api_url, "", self.data_dir)

    def start(self) -> None:
        log = open(self.data_dir / f"dashboard-{self.port}.log", "a")  # noqa: SIM115 - the child holds it
        self.proc = subprocess.Popen([sys.executable, "-m", "dailies", "dashboard", "--team", "--ui-port",
                                      str(self.port), "--data-dir", str(self.data_dir)],
                                     env={**os.environ, "ARK_BASE_URL": self.api_url}, stdout=log,
                                     stderr=subprocess.STDOUT, cwd=self.data_dir)
        wait_until_up(f"{self.url}/_stcore/health", self.proc, "dashboard", 120)

    def kill(self) -> None:
        """SIGKILL, as an OOM kill; its Streamlit is told by the kernel and frees the port for start()."""
        assert self.proc is not None
        streamlit = children_of(self.proc.pid)
        self.proc.kill()
        self.proc.wait(30)
        wait_for(lambda: not any(alive(pid) for pid in streamlit), "the killed dashboard's Streamlit to stop", 60)

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(30)
            except subprocess.TimeoutExpired:
                self.proc.kill()


@contextmanager
def team_stack(data_dir: Path):
    serve = Serve(data_dir, workers=2)
    dashboards: list[Dashboard] = []
    try:
        dashboards = [Dashboard(data_dir, serve.base_url), Dashboard(data_dir, serve.base_url)]
        yield serve, dashboards
    finally:
        for dashboard in dashboards:
            dashboard.stop()
        stop_all([serve])


@pytest.fixture(scope="module")
def stack(tmp_path_factory, chromium_path):
    data_dir = tmp_path_factory.mktemp("live")
    keys = {name: key_store.create_key(data_dir, "studio", KeyOptions(name=name)).key for name in ("Ana", "Bo")}
    with team_stack(data_dir) as (serve, dashboards):
        versions = []
        for prompt, seconds in zip(PROMPTS, (6, 4), strict=True):
            code, out, err = run("create", "--base-url", serve.base_url, "--api-key", keys["Ana"], "--model", V2,
                                 "--prompt", prompt, "--resolution", "480p", "--duration", str(seconds), "--wait",
                                 "--poll", "0.3", "--json")
            assert code == 0, err
            versions.append(json.loads(out)["id"])
        yield serve, dashboards, keys, versions


def player(tab) -> dict:
    """The live player's state in `tab`: role, presenter, version, frame, shapes, pointer, video."""
    return tab.evaluate(f"""() => {{ {SHADOW} const root = q('.tp')[0]; if (!root) return null;
        const v = root.querySelector('video');
        return {{ role: root.dataset.liveRole, presenter: root.dataset.livePresenter || null,
                  version: root.dataset.liveVersion || null, frame: Number(root.dataset.frame),
                  shapes: Number(root.dataset.shapes || 0), pointer: !root.querySelector('.tp-pointer').hidden,
                  banner: !root.querySelector('.tp-live').hidden,
                  paused: v.paused, time: v.currentTime, rate: v.playbackRate, ready: v.readyState,
                  src: v.currentSrc, now: Date.now() }}; }}""")


def until(tab, what: str, check, timeout: float = 30) -> dict:
    """Wait until `check(player(tab))` holds; the last state in the failure."""
    return wait_for(lambda: (lambda s: s if s and check(s) else None)(player(tab)), what, timeout)


def test_three_people_review_behind_a_presenter_across_two_dashboards(browser, stack):
    serve, (dash_a, dash_b), keys, (v1, v2) = stack
    viewport = {"width": 1400, "height": 1050}
    contexts = [browser.new_context(viewport=viewport) for _ in range(3)]
    try:
        ana, bo, guest = (new_tab(c) for c in contexts)
        enter_key(ana, dash_a.product(), keys["Ana"])
        enter_key(bo, dash_b.product(), keys["Bo"])

        # Ana starts a session on both versions from dashboard A.
        open_page(ana, dash_a.product(), "/live")
        box = ana.get_by_role("combobox", name="Versions to review")
        for prompt in PROMPTS:
            choose(ana, box, prompt)  # two prompts unlike each other: each labelled by itself
        ana.keyboard.press("Escape")
        ana.get_by_role("textbox", name="Title").fill("Tuesday dailies")
        ana.get_by_role("button", name="Start presenting").click()
        settle(ana)
        until(ana, "Ana's player to present", lambda s: s["role"] == "present" and s["ready"] >= 2)
        session_id = ana.url.split("session=")[1].split("&")[0]
        invite = ana.locator('[data-testid="stCode"]').inner_text().strip()
        assert f"/live?session={session_id}&follow=" in invite

        # Bo opens the session by its address on dashboard B; the guest opens the link there, without a key.
        open_page(bo, dash_b.product(), f"/live?session={session_id}")
        guest.goto(invite.replace(dash_a.url, dash_b.url))
        until_quiet(guest)
        followers = {"Bo": bo, "the guest": guest}
        for name, tab in followers.items():
            until(tab, f"{name}'s player to follow Ana",
                  lambda s: s["role"] == "follow" and s["presenter"] == "Ana" and s["ready"] >= 2)

        # Paused on a frame, then a frame on: the followers show the same frame, paused.
        ana.evaluate(f"() => {{ {SHADOW} const v = q('.tp video')[0]; v.pause(); v.currentTime = 30.5 / 24; }}")
        until(ana, "Ana's frame 30", lambda s: s["frame"] == 30)
        for name, tab in followers.items():
            until(tab, f"{name} on frame 30", lambda s: s["paused"] and s["frame"] == 30)
        ana.locator(".tp-step[data-step='1']").click()
        until(ana, "Ana's frame 31", lambda s: s["frame"] == 31)
        for name, tab in followers.items():
            until(tab, f"{name} on frame 31", lambda s: s["paused"] and s["frame"] == 31)

        # Ana plays: the followers play along, within half a second of her.
        ana.locator(".tp").first.focus()
        ana.keyboard.press(" ")
        for name, tab in followers.items():
            until(tab, f"{name} playing", lambda s: not s["paused"])
        gaps = []
        for _ in range(10):
            before, seen, after = player(ana), player(guest), player(ana)
            if not (before["paused"] or after["paused"] or seen["paused"]):
                # Ana's position at the moment the guest's was read, from her readings either side.
                share = (seen["now"] - before["now"]) / max(1, after["now"] - before["now"])
                gaps.append(abs(seen["time"] - (before["time"] + share * (after["time"] - before["time"]))))
            time.sleep(0.2)
        assert gaps and statistics.median(gaps) <= 0.5, gaps

        # She pauses: the followers stop on her frame.
        ana.keyboard.press("k")
        stopped = until(ana, "Ana paused", lambda s: s["paused"])
        until(ana, "Ana's frame settled", lambda s: s["frame"] == player(ana)["frame"])
        frame = player(ana)["frame"]
        for name, tab in followers.items():
            until(tab, f"{name} paused on Ana's frame {frame}", lambda s: s["paused"] and s["frame"] == frame)
        assert stopped["paused"]

        # Speed, a drawing and her pointer reach them.
        ana.locator(".tp-speed").select_option("1.5")
        ana.locator(".tp-draw").click()
        ana.locator(".tp-tool[data-tool='rect']").click()
        drag_on(ana, ana.locator(".tp-ink"), (0.3, 0.3), (0.6, 0.7))
        ana.locator(".tp-stage").hover(position={"x": 100, "y": 80})
        for name, tab in followers.items():
            until(tab, f"{name} sees the rate, the drawing and the pointer",
                  lambda s: s["rate"] == 1.5 and s["shapes"] == 1 and s["pointer"])
        screenshot(ana, "live-01-ana-presents")
        screenshot(guest, "live-02-guest-follows")

        # Another version: the followers' players load it.
        ana.get_by_text(PROMPTS[1], exact=True).click()
        settle(ana)
        for name, tab in followers.items():
            until(tab, f"{name} on version 2, Ana's drawing on version 1 gone",
                  lambda s: s["version"] == v2 and v2 in s["src"] and s["ready"] >= 1 and s["shapes"] == 0)

        # Ana's dashboard process dies and comes back: the session goes on from where it was.
        seq_before = int(ana.evaluate(f"() => {{ {SHADOW} return q('.tp')[0].dataset.liveSeq; }}") or 0)
        connections = ana.evaluate("() => window.__dailiesRuns.opened")
        dash_a.kill()
        dash_a.start()
        # The page shows its last elements while it reconnects, and a click then goes nowhere: wait for
        # its WebSocket to the new process (which runs nothing until she acts: her player goes on).
        ana.wait_for_function("(n) => window.__dailiesRuns.open && window.__dailiesRuns.opened > n",
                              arg=connections, timeout=60_000)
        until(ana, "Ana presenting again", lambda s: s["role"] == "present" and s["ready"] >= 1, timeout=60)
        ana.evaluate(f"() => {{ {SHADOW} const v = q('.tp video')[0]; v.pause(); v.currentTime = 12.5 / 24; }}")
        for name, tab in followers.items():
            until(tab, f"{name} follows Ana after her dashboard restarted",
                  lambda s: s["version"] == v2 and s["paused"] and s["frame"] == 12)
        assert int(guest.evaluate(f"() => {{ {SHADOW} return q('.tp')[0].dataset.liveSeq; }}")) > seq_before

        # Ana hands over to Bo: Bo presents, Ana and the guest follow him.
        choose(ana, ana.get_by_role("combobox", name="Hand over to"), "Bo")
        ana.get_by_role("button", name="Hand over").click()
        settle(ana)
        until(bo, "Bo presenting, nobody's drawing over his frame",
              lambda s: s["role"] == "present" and s["shapes"] == 0, timeout=60)
        until(ana, "Ana following Bo", lambda s: s["role"] == "follow" and s["presenter"] == "Bo", timeout=60)
        bo.evaluate(f"() => {{ {SHADOW} const v = q('.tp video')[0]; v.pause(); v.currentTime = 5.5 / 24; }}")
        for name, tab in {"Ana": ana, "the guest": guest}.items():
            until(tab, f"{name} follows Bo", lambda s: s["paused"] and s["frame"] == 5)
        # The guest leaves and comes back, and someone joins late: both are where Bo is at once.
        guest.reload()
        late = new_tab(guest.context)
        late.goto(invite.replace(dash_a.url, dash_b.url))
        for name, tab in {"the guest, back": guest, "a late joiner": late}.items():
            until(tab, f"{name} on Bo's frame", lambda s: s["role"] == "follow" and s["presenter"] == "Bo"
                  and s["version"] == v2 and s["paused"] and s["frame"] == 5)
        assert not player(bo)["banner"]  # no "Following ..." under his own player
        screenshot(bo, "live-03-bo-presents-after-the-handover")
    finally:
        for context in contexts:
            context.close()
