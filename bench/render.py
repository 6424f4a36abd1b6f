"""Preview render speed and memory, measured against a bare PyAV encode in the same run.

    python bench/render.py            # the table and the memory check
    python bench/render.py --quick    # one repetition instead of three

For 480p, 720p and 1080p (16:9) it renders a 5 s text-to-video preview with audio through
`PreviewGenerator`, and encodes the same number of frames of the same size with the same
encoder settings with nothing else (the "bare" encode: RGB frames sliced from one precomputed
gradient, no scene, no audio, no files besides the video). It prints the wall time of each, their
ratio, and how many times faster than real time the render is. Each figure is the best of the
repetitions, so a noisy machine does not lie in one direction only. One image-to-video row shows
the cost of camera motion over a picture.

Then it renders 5 s and 10 s at 720p in fresh processes and prints each one's peak resident
memory: frames are streamed, so the two should be close. And a 720p clip from nine 6000 x 6000 JPEG
reference images (the most the spec allows), as the renderer decodes them (no larger than the frame
needs) and decoded whole as it did before: their peaks side by side.

Goal on a 2-core machine: 720p 5 s with audio within 2x of the bare encode and at least 4x faster
than real time. This script prints figures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import base64
import io
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import av
import numpy as np
from PIL import Image

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dailies.generator import InputResolver, PreviewGenerator, RenderJob  # noqa: E402
from dailies.generator.encode import MUXER_OPTIONS, add_video_stream  # noqa: E402
from dailies.spec.limits import FRAMES_PER_SECOND  # noqa: E402
from dailies.spec.models import CreateTaskRequest  # noqa: E402
from dailies.spec.pixels import dimensions, frame_count  # noqa: E402

MODEL = "doubao-seedance-2-0-260128"
PROMPT = (
    "A quiet harbour at dawn: fishing boats drift out through the mist while gulls circle "
    "overhead and the first light turns the water gold"
)


def text_request(resolution: str, duration: int) -> CreateTaskRequest:
    return CreateTaskRequest(
        model=MODEL, content=[{"type": "text", "text": PROMPT}], resolution=resolution, ratio="16:9",
        duration=duration, generate_audio=True,
    )


def image_request(resolution: str, duration: int) -> CreateTaskRequest:
    yy, xx = np.mgrid[0:1080, 0:1920]
    picture = np.stack([xx * 255 // 1920, yy * 255 // 1080, (xx ^ yy) & 255], axis=-1).astype(np.uint8)
    buffer = io.BytesIO()
    Image.fromarray(picture).save(buffer, format="JPEG", quality=90)
    url = "data:image/jpeg;base64," + base64.b64encode(buffer.getvalue()).decode()
    return CreateTaskRequest(
        model=MODEL,
        content=[{"type": "text", "text": PROMPT}, {"type": "image_url", "image_url": {"url": url},
                                                    "role": "first_frame"}],
        resolution=resolution, ratio="16:9", duration=duration, generate_audio=True,
    )


Timing = tuple[float, float]  # (wall seconds, CPU seconds of all the process's threads)


def timed(work: Callable[[], object]) -> Timing:
    wall, cpu = time.perf_counter(), time.process_time()
    work()
    return time.perf_counter() - wall, time.process_time() - cpu


def render_seconds(request: CreateTaskRequest, workdir: Path) -> Timing:
    job = RenderJob(task_id="bench", request=request, output_dir=workdir, seed=7)
    resolver = InputResolver(workdir)
    return timed(lambda: PreviewGenerator().render(job, resolver, progress=lambda _: None, is_cancelled=lambda: False))


def bare_encode_seconds(width: int, height: int, count: int, workdir: Path) -> Timing:
    """The same frames count and size through the same encoder settings, and nothing else."""
    yy, xx = np.mgrid[0:height, 0 : width + 2 * count]
    canvas = np.stack(
        [xx * 255 // (width + 2 * count), yy * 255 // height, (xx + 2 * yy) // 6 % 256], axis=-1
    ).astype(np.uint8)

    def encode() -> None:
        with av.open(str(workdir / "bare.mp4"), mode="w", format="mp4", options=dict(MUXER_OPTIONS)) as container:
            stream = add_video_stream(container, width, height, FRAMES_PER_SECOND)
            for index in range(count):
                pixels = np.ascontiguousarray(canvas[:, 2 * index : 2 * index + width])
                frame = av.VideoFrame.from_ndarray(pixels, format="rgb24")
                frame.pts = index
                container.mux(stream.encode(frame))
            container.mux(stream.encode(None))

    return timed(encode)


def speed_table(repeats: int) -> None:
    duration = 5
    count = frame_count(duration)
    video_seconds = count / FRAMES_PER_SECOND
    rows = [("text", resolution, text_request) for resolution in ("480p", "720p", "1080p")]
    rows.append(("image", "720p", image_request))
    print(f"5 s clips ({count} frames at {FRAMES_PER_SECOND} fps), best of {repeats}; audio on")
    print(
        f"{'scenario':<9}{'resolution':<11}{'size':>10}{'frames':>7}{'wall s':>8}{'bare s':>8}{'ratio':>7}"
        f"{'x real time':>12}{'cpu s':>7}{'bare cpu s':>11}{'cpu ratio':>10}"
    )
    for scenario, resolution, make_request in rows:
        width, height = dimensions(MODEL, resolution, "16:9")
        request = make_request(resolution, duration)
        with tempfile.TemporaryDirectory() as scratch:
            workdir = Path(scratch)
            # Warm up fonts, codecs and caches once so the first row is not penalised.
            render_seconds(text_request("480p", 2), workdir)
            wall = bare = cpu = bare_cpu = float("inf")
            for _ in range(repeats):
                # Interleaved, so a slow moment of the machine hits both measurements alike.
                run_wall, run_cpu = render_seconds(request, workdir)
                bare_wall, bare_run_cpu = bare_encode_seconds(width, height, count, workdir)
                wall, cpu = min(wall, run_wall), min(cpu, run_cpu)
                bare, bare_cpu = min(bare, bare_wall), min(bare_cpu, bare_run_cpu)
        print(
            f"{scenario:<9}{resolution:<11}{f'{width}x{height}':>10}{count:>7}{wall:>8.3f}{bare:>8.3f}"
            f"{wall / bare:>7.2f}{video_seconds / wall:>12.1f}{cpu:>7.2f}{bare_cpu:>11.2f}{cpu / bare_cpu:>10.2f}"
        )
    print(f"load average during the run: {os.getloadavg()[0]:.1f} (on {os.cpu_count()} cores)")


def peak_memory_mb(duration: int) -> float:
    """Peak resident memory of a fresh process that renders one 720p text clip of `duration`."""
    output = subprocess.run(
        [sys.executable, __file__, "--memory-probe", str(duration)],
        check=True, capture_output=True, text=True,
    ).stdout
    return float(output.strip().splitlines()[-1])


def memory_probe(duration: int) -> None:
    with tempfile.TemporaryDirectory() as scratch:
        render_seconds(text_request("720p", duration), Path(scratch))
    print(peak_rss_mb())


def peak_rss_mb() -> float:
    """This process's peak resident memory. VmHWM belongs to the process image, whereas Linux
    carries ru_maxrss over from the parent across fork and exec, which would report the bench's
    own peak instead of the probe's."""
    status = Path("/proc/self/status")
    if status.exists():
        for line in status.read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    # Kilobytes on Linux, bytes on macOS; the fallback is only approximate there.
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def memory_table() -> None:
    print()
    print("peak resident memory, 720p text clip with audio, fresh process each")
    print(f"{'duration':<10}{'frames':>8}{'peak MB':>10}")
    for duration in (5, 10):
        print(f"{f'{duration} s':<10}{frame_count(duration):>8}{peak_memory_mb(duration):>10.1f}")
    print()
    print("peak resident memory, 720p 4 s from nine 6000 x 6000 JPEG references, fresh process each")
    peaks = {}
    for how in ("covered", "whole"):
        peaks[how] = float(subprocess.run([sys.executable, __file__, "--memory-probe-references", how], check=True,
                                          capture_output=True, text=True).stdout.strip().splitlines()[-1])
    print(f"decoded no larger than the frame needs {peaks['covered']:>8.1f} MB")
    ratio = peaks["covered"] / peaks["whole"]
    print(f"decoded whole (before)                 {peaks['whole']:>8.1f} MB   ratio {ratio:.2f}")


def references_memory_probe(how: str) -> None:
    """Render from nine big references; `whole`: every image decoded at its full size, as before."""
    import dailies.generator.preview as preview

    if how == "whole":
        opened = preview.open_image
        preview.open_image = lambda data, where, cover=None: opened(data, where)
        preview.reduced_to_cover = lambda image, cover: image
    side = 6000
    ramp = np.linspace(0, 255, side, dtype=np.uint8)
    urls = []
    for n in range(9):
        pixels = np.stack([np.broadcast_to(ramp[None, :], (side, side)), np.broadcast_to(ramp[:, None], (side, side)),
                           np.full((side, side), 28 * n, np.uint8)], axis=-1)
        out = io.BytesIO()
        Image.fromarray(pixels).save(out, format="JPEG", quality=85)
        urls.append("data:image/jpeg;base64," + base64.b64encode(out.getvalue()).decode())
        del pixels
    request = CreateTaskRequest(
        model=MODEL, resolution="720p", ratio="16:9", duration=4, generate_audio=False,
        content=[{"type": "text", "text": PROMPT}]
        + [{"type": "image_url", "image_url": {"url": url}, "role": "reference_image"} for url in urls])
    with tempfile.TemporaryDirectory() as scratch:
        render_seconds(request, Path(scratch))
    print(peak_rss_mb())


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="one repetition instead of three")
    parser.add_argument("--memory-probe", type=int, metavar="SECONDS", help=argparse.SUPPRESS)
    parser.add_argument("--memory-probe-references", choices=("covered", "whole"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.memory_probe:
        memory_probe(args.memory_probe)
        return
    if args.memory_probe_references:
        references_memory_probe(args.memory_probe_references)
        return
    speed_table(1 if args.quick else 3)
    memory_table()


if __name__ == "__main__":
    main()
