"""How closely a live session's followers follow the presenter, in Chromium.

    python bench/live_follow.py                 # a minute of play, two followers
    python bench/live_follow.py --seconds 120 --followers 3

What runs, all on 127.0.0.1: `dailies serve` (two render slots) with one named key, a 12 s preview clip
made with it, and `dailies dashboard --team`. Chromium: the presenter starts a session on the clip from
the Live page; each follower opens the session's link (no key). Then:

1. Play: the presenter plays the clip for `--seconds`, starting it again from the top when it ends (as a
   presenter looping a shot). Every 100 ms each player's position is read with the page's clock; a
   follower's gap is its distance from the presenter's position at that moment (interpolated from the
   presenter's readings either side). Readings in the first second after a (re)start are left out: that
   is the time a follower takes to start, reported apart ("start").
2. Stops: 15 times the presenter pauses on a frame somewhere in the clip; the time until every follower
   shows that frame, paused.

This script prints figures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dailies.client import Client  # noqa: E402
from dailies.launcher import wait_until_up  # noqa: E402
from dailies.service.access import keys as key_store  # noqa: E402
from dailies.service.callers import KeyOptions  # noqa: E402

SHADOW = """const q = (sel) => [...document.querySelectorAll('[data-testid=stBidiComponentIsolated]')]
    .flatMap(h => h.shadowRoot ? [...h.shadowRoot.querySelectorAll(sel)] : []);"""
READ = f"""() => {{ {SHADOW} const root = q('.tp')[0]; if (!root) return null; const v = root.querySelector('video');
    return {{ t: v.currentTime, paused: v.paused, ended: v.ended, seeking: v.seeking, frame: Number(root.dataset.frame),
              role: root.dataset.liveRole, ready: v.readyState, now: Date.now() }}; }}"""
CHROMIUM_ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--autoplay-policy=no-user-gesture-required"]


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start(argv: list[str], log: Path, health: str, env: dict[str, str], cwd: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-m", "dailies", *argv], env={**os.environ, **env}, cwd=cwd,
                            stdout=open(log, "w"), stderr=subprocess.STDOUT)  # noqa: SIM115
    wait_until_up(health, proc, argv[0], 120)
    return proc


def wait(probe, what: str, timeout: float = 60):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = probe()
        if value:
            return value
        time.sleep(0.02)
    raise SystemExit(f"timed out waiting for {what}")


def percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--followers", type=int, default=2)
    args = parser.parse_args()
    from playwright.sync_api import sync_playwright

    folder = Path(tempfile.mkdtemp(prefix="dailies-live-bench-"))
    key = key_store.create_key(folder, "studio", KeyOptions(name="Presenter")).key
    api_port, ui_port = free_port(), free_port()
    procs = [start(["serve", "--port", str(api_port), "--data-dir", str(folder), "--slots", "2"], folder / "serve.log",
                   f"http://127.0.0.1:{api_port}/healthz", {}, folder)]
    api = f"http://127.0.0.1:{api_port}/api/v3"
    procs.append(start(["dashboard", "--team", "--ui-port", str(ui_port), "--data-dir", str(folder)],
                       folder / "dashboard.log", f"http://127.0.0.1:{ui_port}/_stcore/health",
                       {"ARK_BASE_URL": api}, folder))
    ui = f"http://127.0.0.1:{ui_port}"
    try:
        with Client(base_url=api, api_key=key) as client:
            task = client.tasks.create({"model": "doubao-seedance-2-0-260128", "resolution": "480p", "duration": 12,
                                        "content": [{"type": "text", "text": "a lantern drifting on a river"}]})
            client.wait(task.id, timeout=300)
        with sync_playwright() as pw:
            browser = pw.chromium.launch(executable_path="/usr/bin/chromium", args=CHROMIUM_ARGS)
            presenter = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
            presenter.goto(f"{ui}/settings")
            presenter.get_by_label("API key").fill(key)
            presenter.get_by_role("button", name="Save", exact=True).click()
            presenter.get_by_text("Saved, and remembered in this browser", exact=False).wait_for(timeout=60_000)
            presenter.goto(f"{ui}/live")
            box = presenter.get_by_role("combobox", name="Versions to review")
            box.click(timeout=120_000)
            presenter.get_by_role("option").last.click()
            presenter.keyboard.press("Escape")
            presenter.get_by_role("button", name="Start presenting").click()
            wait(lambda: (presenter.evaluate(READ) or {}).get("ready", 0) >= 2, "the presenter's player")
            invite = presenter.locator('[data-testid="stCode"]').inner_text().strip()
            followers = []
            for _ in range(args.followers):
                page = browser.new_context(viewport={"width": 1280, "height": 900}).new_page()
                page.goto(invite)
                wait(lambda p=page: (lambda s: s and s["role"] == "follow" and s["ready"] >= 2)(p.evaluate(READ)),
                     "a follower's player")
                followers.append(page)

            def presenter_call(code: str) -> None:
                presenter.evaluate(f"() => {{ {SHADOW} const v = q('.tp video')[0]; {code} }}")

            # 1. A minute of play, looped.
            gaps: list[float] = []
            starts: list[float] = []
            presenter_call("v.currentTime = 0; v.play();")
            started = time.monotonic()
            play_started = time.monotonic()
            waiting_start = True
            end = time.monotonic() + args.seconds
            while time.monotonic() < end:
                before = presenter.evaluate(READ)
                seen = [f.evaluate(READ) for f in followers]
                after = presenter.evaluate(READ)
                if before["ended"] or after["ended"]:
                    presenter_call("v.currentTime = 0; v.play();")
                    play_started, waiting_start = time.monotonic(), True
                    continue
                if waiting_start and all(not s["paused"] for s in seen):
                    starts.append(time.monotonic() - play_started)
                    waiting_start = False
                if time.monotonic() - play_started > 1.0 and not (before["paused"] or after["paused"]):
                    for s in seen:
                        if s["paused"] or s["seeking"] or after["t"] < before["t"]:
                            continue
                        share = (s["now"] - before["now"]) / max(1, after["now"] - before["now"])
                        gaps.append(abs(s["t"] - (before["t"] + share * (after["t"] - before["t"]))))
                time.sleep(0.1)
            played = time.monotonic() - started
            # 2. Stops on a frame.
            stops: list[float] = []
            rng = random.Random(7)
            for _ in range(15):
                presenter_call("v.play();")
                time.sleep(0.4)
                frame = rng.randrange(10, 280)
                asked = time.monotonic()
                presenter_call(f"v.pause(); v.currentTime = ({frame} + 0.5) / 24;")
                wait(lambda frame=frame: all((lambda s: s["paused"] and s["frame"] == frame)(f.evaluate(READ))
                                             for f in followers), f"the followers on frame {frame}")
                stops.append(time.monotonic() - asked)
            browser.close()
        print(f"live follow, {args.followers} followers, {played:.0f} s of play "
              f"({len(gaps)} readings), 2 cores, one service, one team dashboard")
        print(f"  playing: gap to the presenter  median {statistics.median(gaps) * 1000:.0f} ms  "
              f"p95 {percentile(gaps, 0.95) * 1000:.0f} ms  worst {max(gaps) * 1000:.0f} ms")
        print(f"  a (re)start: followers playing after  median {statistics.median(starts) * 1000:.0f} ms  "
              f"worst {max(starts) * 1000:.0f} ms  ({len(starts)} starts)")
        print(f"  a stop on a frame: followers on it, paused, after  median {statistics.median(stops) * 1000:.0f} ms  "
              f"worst {max(stops) * 1000:.0f} ms  ({len(stops)} stops)")
        print(json.dumps({"gap_median_s": statistics.median(gaps), "gap_p95_s": percentile(gaps, 0.95),
                          "gap_worst_s": max(gaps), "stop_median_s": statistics.median(stops),
                          "stop_worst_s": max(stops)}))
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            try:
                proc.wait(30)
            except subprocess.TimeoutExpired:
                proc.kill()


if __name__ == "__main__":
    main()
