"""Compose's uploads are bytes nobody vouches for (issue 34): the journal's thumbnail of an input
and the crop preview open an image only after the spec's header check (its formats, no
decompression bomb), and only as those formats."""

from __future__ import annotations

import io
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from PIL import Image

from components.compose.image_input import crop_preview, thumbnail_data_url


def test_the_thumbnail_of_an_input_takes_only_the_specs_formats():
    good = io.BytesIO()
    Image.new("RGB", (640, 360), (0, 0, 200)).save(good, format="PNG")
    assert thumbnail_data_url(good.getvalue()).startswith("data:image/jpeg;base64,")
    pcx = io.BytesIO()
    Image.new("RGB", (640, 360), (200, 0, 0)).save(pcx, format="PCX")  # Pillow reads it; the spec does not take it
    assert thumbnail_data_url(pcx.getvalue()) is None
    with pytest.raises(ValueError, match="not an image"):
        crop_preview(pcx.getvalue(), (640, 360))


def test_a_pixel_bomb_upload_is_not_decoded():
    """Pillow only warns of an image of 1 to 2 times MAX_IMAGE_PIXELS, then decodes it: a 13,000 x
    13,000 PNG of 20 KB became half a gigabyte for a 160-pixel thumbnail. In a process of its own,
    it is refused with the peak memory barely moved."""
    script = textwrap.dedent("""
        import io
        from PIL import Image
        from components.compose.image_input import thumbnail_data_url

        def resident():
            return int(dict(line.split(":", 1) for line in open("/proc/self/status"))["VmHWM"].split()[0])

        bomb = io.BytesIO()
        Image.new("1", (13_000, 13_000)).save(bomb, format="PNG")
        before = resident()
        print(thumbnail_data_url(bomb.getvalue()) is None, before, resident())
    """)
    done = subprocess.run([sys.executable, "-c", script], cwd=Path(__file__).resolve().parents[2],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    refused, before, after = done.stdout.split()[-3:]
    assert refused == "True"
    assert int(after) - int(before) < 64 * 1024, f"resident peak grew by {(int(after) - int(before)) // 1024} MB"
