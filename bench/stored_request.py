"""Reading a stored request with nine 6000 x 6000 PNG references (issue 34): the first read of
`GET /dailies/v1/tasks/{id}/request`, which makes and keeps the thumbnails, against a later read,
which decodes nothing, and against a get of the same task.

    .venv/bin/python bench/stored_request.py [--readers N] [--database-url URL]

A service runs in this process (SQLite in a temporary data directory, or the PostgreSQL database
given), driven through httpx's ASGI transport. The PNGs are smooth pictures of about 2 MB each,
as a client may send; each decodes to 108 MB of pixels. Figures:

- each read as before: what the endpoint did on every read until now, the thumbnails made anew
  (`stored_requests.answer` called directly), for comparison;
- first read, later read, get: wall time (best of a few for the cheap ones) and the growth of
  this process's peak RSS (Linux VmHWM, reset through /proc/self/clear_refs before each);
- `--readers` concurrent first reads of another task with the same request: wall time and peak
  RSS growth; answers are made on `shown_requests.MAKERS` threads, so memory stays that of
  a few decodes however many readers wait; then as many concurrent later reads, and gets.

Peak RSS growth is over the process's resident size just before: memory freed by an earlier
measurement and kept by the allocator is reused unseen, so a later figure can be the smaller.

It prints figures; it asserts nothing.
"""

from __future__ import annotations

import argparse
import asyncio
import io
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

import httpx  # noqa: E402
from PIL import Image, ImageDraw  # noqa: E402

from dailies.service.api.app import create_app  # noqa: E402
from dailies.service.settings import Settings  # noqa: E402
from dailies.service.tasks import shown_requests, stored_requests  # noqa: E402
from dailies.spec.media import encode_data_url  # noqa: E402

SIDE = 6000
IMAGES = 9
MODEL = "doubao-seedance-2-0-260128"  # takes up to nine reference images
KEY = "bench-key"
HEADERS = {"Authorization": f"Bearer {KEY}"}


def picture() -> bytes:
    """A 6000 x 6000 PNG of about 2 MB: a gradient crossed by lines, as a drawing might be."""
    img = Image.linear_gradient("L").resize((SIDE, SIDE)).convert("RGB")
    draw = ImageDraw.Draw(img)
    for i in range(0, SIDE, 90):
        draw.line([(i, 0), (SIDE - i, SIDE)], fill=(i % 255, 80, 200), width=7)
        draw.line([(0, i), (SIDE, (i * 7) % SIDE)], fill=(40, i % 255, 90), width=5)
    out = io.BytesIO()
    img.save(out, "PNG")
    return out.getvalue()


def _rss_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


async def measured(label: str, work, repeat: int = 1) -> None:
    best, grew = float("inf"), 0
    for _ in range(repeat):
        Path("/proc/self/clear_refs").write_text("5")  # the peak RSS (VmHWM) starts again from now
        base = _rss_kb("VmRSS")
        started = time.perf_counter()
        await work()
        best = min(best, time.perf_counter() - started)
        grew = max(grew, _rss_kb("VmHWM") - base)
    print(f"  {label:<44} {best * 1000:9.1f} ms   peak RSS +{grew / 1024:6.0f} MB")


async def main(readers: int, database_url: str | None) -> None:
    png = picture()
    body = {"model": MODEL, "content": [{"type": "text", "text": "nine references"}] + [
        {"type": "image_url", "image_url": {"url": encode_data_url(png, "image/png")}, "role": "reference_image"}
        for _ in range(IMAGES)]}
    print(f"nine {SIDE} x {SIDE} PNGs of {len(png) / 1e6:.2f} MB each; answers made "
          f"{shown_requests.MAKERS} at a time")
    with tempfile.TemporaryDirectory() as data_dir:
        settings = Settings(data_dir=Path(data_dir), api_keys={KEY: "bench"}, workers=0, log_requests=False,
                            database_url=database_url)
        app = create_app(settings, start_background=False)
        try:
            async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://bench",
                                         timeout=600) as http:
                ids = []
                for _ in range(2):
                    created = await http.post("/api/v3/contents/generations/tasks", json=body, headers=HEADERS)
                    created.raise_for_status()
                    ids.append(created.json()["id"])
                first, other = ids
                row = app.state.services.store.get_by_id(first)

                async def as_before():
                    await asyncio.to_thread(stored_requests.answer, row.request, task_id=row.id, model=row.model,
                                            created_at=row.created_at)

                async def read(task_id: str = first):
                    (await http.get(f"/dailies/v1/tasks/{task_id}/request", headers=HEADERS)).raise_for_status()

                async def get():
                    (await http.get(f"/api/v3/contents/generations/tasks/{first}", headers=HEADERS)).raise_for_status()

                async def many_first_reads():
                    await asyncio.gather(*(read(other) for _ in range(readers)))

                async def many_later_reads():
                    await asyncio.gather(*(read() for _ in range(readers)))

                async def many_gets():
                    await asyncio.gather(*(get() for _ in range(readers)))

                await measured("each read as before (thumbnails made anew)", as_before)
                await measured("first read (makes and keeps the answer)", read)
                await measured("later read", read, repeat=5)
                await measured("get of the same task", get, repeat=5)
                await measured(f"{readers} concurrent first reads of another task", many_first_reads)
                await measured(f"{readers} concurrent later reads", many_later_reads)
                await measured(f"{readers} concurrent gets", many_gets)
        finally:
            app.state.services.stop()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--readers", type=int, default=40, help="concurrent first reads (default 40)")
    parser.add_argument("--database-url", help="a PostgreSQL database to use instead of SQLite")
    args = parser.parse_args()
    asyncio.run(main(args.readers, args.database_url))
