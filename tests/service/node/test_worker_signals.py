"""A worker stops on SIGTERM whichever thread the kernel hands the signal to
(dailies.service.node.worker_process.wait_until_stopped)."""

from __future__ import annotations

import subprocess
import sys

# A process that waits as the worker does, while another thread of it receives SIGTERM once the main
# thread is blocked in its wait (seen in its current frame and its kernel state, not after a fixed time).
CHILD = """
import signal, sys, threading, time
from dailies.service.node.worker_process import wait_until_stopped

stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stop.set())
main = threading.main_thread().ident

def waiting_in_main() -> bool:
    # In Event.wait's frames and asleep in the kernel: blocked on the wait's lock (Linux's /proc).
    frame = sys._current_frames().get(main)
    with open(f"/proc/self/task/{threading.main_thread().native_id}/stat") as stat:
        state = stat.read().rsplit(")", 1)[1].split()[0]
    return frame is not None and frame.f_code.co_name == "wait" and state == "S"

def poke() -> None:
    while not waiting_in_main():
        time.sleep(0.01)
    signal.pthread_kill(threading.get_ident(), signal.SIGTERM)  # to this thread, not the main one

threading.Thread(target=poke).start()
wait_until_stopped(stop)
print("stopped", flush=True)
"""


def test_sigterm_to_another_thread_stops_the_wait():
    done = subprocess.run([sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.strip() == "stopped", done.stderr
