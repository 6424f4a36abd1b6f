"""Image check of a 30 MB image: time and peak memory of `dailies.spec.media.check_image` (header
only) against a full decode of the same file (DESIGN.md section 6).

    .venv/bin/python bench/image_check.py [--keep DIR]

It writes a high-entropy PNG just under the 30 MB limit (random noise, stored without
compression), then runs each measurement in a fresh interpreter, so that the peak resident set
size of one does not hide the other's. It prints figures, never asserts on them.

Columns: best wall time of several runs; the tracemalloc peak (Python allocations only: Pillow
keeps decoded pixels in its own C arena, which tracemalloc does not see); the growth of the
process's peak RSS over a baseline taken after imports and a warm-up. The peak is Linux's VmHWM,
reset at the baseline through /proc/self/clear_refs; where that is not possible, ru_maxrss (which
a child inherits from its parent across fork and exec, so the image is made in a child too).
"""

from __future__ import annotations

import argparse
import io
import json
import resource
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dailies.spec import limits as L  # noqa: E402

WIDTH, HEIGHT = 4000, 2600  # 31.2 MB of RGB noise stored raw: just under 30 MiB, aspect 1.54

MEASUREMENTS = {
    "check": "check_image(Path)",
    "check_bytes": "check_image(bytes in memory)",
    "decode": "Image.open(path).load()",
}


def make_image(path: Path) -> None:
    import numpy as np
    from PIL import Image

    noise = np.random.default_rng(0).integers(0, 256, (HEIGHT, WIDTH, 3), dtype=np.uint8)
    Image.fromarray(noise, "RGB").save(path, "PNG", compress_level=0)


def _reset_peak_rss() -> bool:
    try:
        Path("/proc/self/clear_refs").write_text("5")  # 5: reset the peak RSS (VmHWM) to the current RSS
        return True
    except OSError:
        return False


def _peak_rss() -> int:
    """Peak resident set size in bytes."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024  # KiB on Linux


def measure(kind: str, path: Path, repeat: int) -> dict[str, float]:
    """Run in a child process: one measurement of one kind."""
    from PIL import Image

    from dailies.spec.media import check_image

    data = path.read_bytes() if kind == "check_bytes" else None

    def run() -> object:
        if kind == "check":
            return check_image(path)
        if kind == "check_bytes":
            return check_image(data)
        with Image.open(path) as img:
            img.load()
            return img.size

    # Warm up on a small image of the same format, so plugin imports are not counted.
    small = io.BytesIO()
    Image.new("RGB", (400, 300)).save(small, "PNG")
    check_image(small.getvalue())
    with Image.open(io.BytesIO(small.getvalue())) as img:
        img.load()

    _reset_peak_rss()
    baseline = _peak_rss()
    tracemalloc.start()
    result = run()
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    rss_growth = _peak_rss() - baseline

    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return {
        "seconds": min(times),
        "tracemalloc_peak": peak,
        "rss_growth": rss_growth,
        "result": repr(result)[:120],
    }


def _child(kind: str, path: Path, repeat: int) -> dict[str, float]:
    out = subprocess.run(
        [sys.executable, __file__, "--measure", kind, str(path), "--repeat", str(repeat)],
        check=True, capture_output=True, text=True,
    )
    return json.loads(out.stdout)


def _size(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    raise AssertionError


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--keep", type=Path, help="write the image into this directory and keep it")
    parser.add_argument("--measure", nargs=2, metavar=("KIND", "PATH"), help=argparse.SUPPRESS)
    parser.add_argument("--repeat", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()

    if args.measure:
        kind, path = args.measure
        if kind == "make":
            make_image(Path(path))
        else:
            print(json.dumps(measure(kind, Path(path), args.repeat or 5)))
        return

    with tempfile.TemporaryDirectory() as tmp:
        folder = args.keep or Path(tmp)
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / "noise-just-under-30mb.png"
        started = time.perf_counter()
        # In a child, so that this process's peak RSS (which children inherit) stays small.
        subprocess.run([sys.executable, __file__, "--measure", "make", str(path)], check=True)
        size = path.stat().st_size
        print(f"image: {path.name}, {WIDTH}x{HEIGHT} RGB noise, {size:,} bytes ({size / L.MB:.2f} MiB; "
              f"limit {L.IMAGE_MAX_BYTES:,}), written in {time.perf_counter() - started:.1f} s")
        print(f"python {sys.version.split()[0]}, one fresh interpreter per row\n")

        rows = {
            "check": _child("check", path, repeat=50),
            "check_bytes": _child("check_bytes", path, repeat=50),
            "decode": _child("decode", path, repeat=5),
        }
        header = f"{'measurement':<30} {'best time':>12} {'tracemalloc peak':>17} {'peak RSS growth':>16}"
        print(header)
        print("-" * len(header))
        for kind, row in rows.items():
            print(f"{MEASUREMENTS[kind]:<30} {row['seconds'] * 1000:>9.3f} ms {_size(row['tracemalloc_peak']):>17} "
                  f"{_size(row['rss_growth']):>16}")
        check, decode = rows["check"], rows["decode"]
        print()
        print(f"full decode / header check, time:            {decode['seconds'] / check['seconds']:,.0f}x")
        print(f"full decode / header check, peak RSS growth: "
              f"{_size(decode['rss_growth'])} vs {_size(check['rss_growth'])}")
        print(f"check_image result: {check['result']}")
        print(f"decode result:      {decode['result']}")


if __name__ == "__main__":
    main()
