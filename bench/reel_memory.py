"""Reel memory: the peak resident memory of a 2-shot and a 10-shot reel of the same clips.

    python bench/reel_memory.py            # 3 s clips
    python bench/reel_memory.py --seconds 1 --size 640x360   # quicker

It writes two clips with the project's encoder (a moving picture with sound, 1280x720 at 30 fps, and a
720x1280 portrait one at 24 fps without sound), then makes each reel (1280x720, 24 fps, slates and burn-in)
in a fresh process and prints that process's peak RSS (`ru_maxrss`), the reel's length and the time it
took, and the ratio of the two peaks. Reels are streamed frame by frame, so the ratio should be close to
1 although the 10-shot reel is five times as long. This script prints figures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dailies.generator.encode import Mp4Writer  # noqa: E402
from dailies.reel import ReelShot, make_reel, parse_size, reel_duration, slate_lines  # noqa: E402


def write_clip(path: Path, size: tuple[int, int], fps: int, seconds: float, sound: bool) -> Path:
    """A moving gradient with a bright bar crossing it (so every frame differs), with a tone if `sound`."""
    width, height = size
    rate = 48000
    xs = np.linspace(0, 255, width, dtype=np.float32)[None, :]
    ys = np.linspace(0, 255, height, dtype=np.float32)[:, None]
    frames = round(seconds * fps)
    with Mp4Writer(path, width, height, fps, audio_rate=rate if sound else None) as writer:
        for index in range(frames):
            shift = index * 7
            picture = np.empty((height, width, 3), dtype=np.uint8)
            picture[..., 0] = (xs + shift) % 256
            picture[..., 1] = (ys + shift / 2) % 256
            picture[..., 2] = 128
            bar = (index * width // frames) % width
            picture[:, bar : bar + width // 20] = 255
            writer.add_frame(picture)
            if sound:
                start, end = index * rate // fps, (index + 1) * rate // fps
                t = np.arange(start, end) / rate
                writer.add_audio((0.2 * np.sin(2 * np.pi * 330 * t)).astype(np.float32))
    return path


def child(count: int, clips: list[Path], out: Path, size: tuple[int, int]) -> None:
    shots = [ReelShot(clips[i % len(clips)], f"shot {i + 1}", slate_lines(f"v{i % 3 + 1}", "Approved",
                                                                           "a bench prompt " * 8, time.time()))
             for i in range(count)]
    started = time.perf_counter()
    make_reel(shots, out, size=size, fps=24, slates=True, burn_in=True)
    elapsed = time.perf_counter() - started
    peak_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kilobytes on Linux
    print(json.dumps({"shots": count, "peak_mb": peak_kb / 1024, "seconds": reel_duration(out), "wall": elapsed}))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0, help="length of each clip")
    parser.add_argument("--size", default="1280x720", help="the reel's frame size")
    parser.add_argument("--child", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--clips", nargs="*", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--out", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    size = parse_size(args.size)
    if args.child:
        child(args.child, args.clips, args.out, size)
        return
    with tempfile.TemporaryDirectory(prefix="reel-bench-") as folder:
        base = Path(folder)
        clips = [write_clip(base / "wide.mp4", (1280, 720), 30, args.seconds, sound=True),
                 write_clip(base / "portrait.mp4", (720, 1280), 24, args.seconds, sound=False)]
        results = {}
        for count in (2, 10):
            output = subprocess.run(
                [sys.executable, __file__, "--child", str(count), "--clips", *map(str, clips),
                 "--out", str(base / f"reel{count}.mp4"), "--size", args.size],
                check=True, capture_output=True, text=True).stdout
            results[count] = json.loads(output.strip().splitlines()[-1])
            got = results[count]
            print(f"{count:>2} shots: reel {got['seconds']:5.1f} s at {args.size}, peak RSS {got['peak_mb']:6.1f} MB, "
                  f"made in {got['wall']:5.1f} s")
        ratio = results[10]["peak_mb"] / results[2]["peak_mb"]
        print(f"peak RSS 10 shots / 2 shots: {ratio:.2f} (length ratio "
              f"{results[10]['seconds'] / results[2]['seconds']:.1f})")


if __name__ == "__main__":
    main()
