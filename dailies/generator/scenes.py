"""The pictures of the preview made from images and videos (the text-only scene is in
`text_scene`): one scene per scenario of spec 2.3.

A scene yields exactly `count` frames, one at a time, so memory does not grow with duration. A
frame is RGB (H x W x 3, uint8, C-contiguous) or yuv420p planes ((H * 3 / 2) x W, uint8), the two
kinds `encode.Mp4Writer` takes: pictures moved by the camera are yuv420p, because scaling the
planes costs half as much as scaling RGB (which Pillow holds as 4 bytes a pixel) and the encoder
then has no conversion left to do. A yielded array may be reused for the next frame and must not
be modified by the caller (copy it first to draw on it).

Everything a scene draws is a function of its inputs and the seed: no clock, no global random
state, so the same request and seed give the same frames.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Protocol

import numpy as np
from PIL import Image

from .encode import yuv420_from_rgb, yuv420_planes
from .media import VideoClip
from .seeding import stable_rng


class Scene(Protocol):
    def frames(self) -> Iterator[np.ndarray]:
        """Exactly the clip's frame count of frames (RGB or yuv420p), first to last."""
        ...


def ease(progress: float) -> float:
    """Smoothstep: motion that starts and ends at rest."""
    progress = min(1.0, max(0.0, progress))
    return progress * progress * (3.0 - 2.0 * progress)


def progress_of(index: int, count: int) -> float:
    """0.0 at the first frame, 1.0 at the last."""
    return index / (count - 1) if count > 1 else 0.0


# ---------- camera motion over a still image ----------


class CameraMove:
    """A zoom and drift over an image that already has the output size, as yuv420p frames.

    At zoom 1 the frame is the image itself, converted once, which is what makes the first frame of
    an image-to-video equal to the image. Zooming in crops a smaller box of the image (drifting
    toward `drift`, a point in [-1, 1]^2 relative to the centre) and scales it back up, plane by
    plane: the chroma planes are half the size, so their box is halved too.
    """

    def __init__(self, image: Image.Image, drift: tuple[float, float] = (0.0, 0.0)) -> None:
        self.size = image.size
        self.still = yuv420_from_rgb(np.asarray(image.convert("RGB")))
        self.drift = drift
        # The planes of `still` as greyscale images to scale (Pillow copies them).
        self._planes = [Image.fromarray(plane) for plane in yuv420_planes(self.still)]

    def at(self, zoom: float) -> np.ndarray:
        if zoom <= 1.0 + 1e-9:
            return self.still
        width, height = self.size
        box_width, box_height = width / zoom, height / zoom
        centre_x = width / 2 + self.drift[0] * (width - box_width) / 2
        centre_y = height / 2 + self.drift[1] * (height - box_height) / 2
        box = (
            centre_x - box_width / 2,
            centre_y - box_height / 2,
            centre_x + box_width / 2,
            centre_y + box_height / 2,
        )
        scaled = []
        for plane in self._planes:
            scale = plane.width / width  # 1 for Y, 1/2 for U and V
            left, top, right, bottom = box
            plane_box = (left * scale, top * scale, right * scale, bottom * scale)
            scaled.append(plane.resize(plane.size, Image.Resampling.BILINEAR, box=plane_box).tobytes())
        # The planes' bytes one after another are the frame, joined in one copy (np.asarray on each
        # plane and a copy into a frame would take two); read-only, which the scene contract allows.
        return np.frombuffer(b"".join(scaled), dtype=np.uint8).reshape(self.still.shape)


def zoom_amount(seconds: float) -> float:
    """How far the camera pushes in over a clip: slow and steady, capped for long clips."""
    return min(0.2, 0.025 * seconds)


def random_drift(rng: np.random.Generator) -> tuple[float, float]:
    x, y = rng.uniform(-1.0, 1.0, size=2)
    return float(x), float(y)


class FirstFrameScene:
    """Image-to-video: the image, then a slow push-in; a still image when the camera is fixed."""

    def __init__(self, image: Image.Image, count: int, fps: int, seed: int, camera_fixed: bool) -> None:
        self.count = count
        self.camera_fixed = camera_fixed
        self.zoom = zoom_amount(count / fps)
        self.camera = CameraMove(image, random_drift(stable_rng("first-frame", seed)))

    def frames(self) -> Iterator[np.ndarray]:
        for index in range(self.count):
            if self.camera_fixed:
                yield self.camera.still
            else:
                yield self.camera.at(1.0 + self.zoom * ease(progress_of(index, self.count)))


def blend(first: np.ndarray, last: np.ndarray, weight: int) -> np.ndarray:
    """(first * (256 - weight) + last * weight) / 256 in integers; weight 0 is `first` exactly,
    256 is `last` exactly. Any two frames of one kind: a mix of the yuv420p planes is the planes of
    the mix, since RGB to YUV is affine and the weights add up to one."""
    if weight <= 0:
        return first
    if weight >= 256:
        return last
    mixed = first.astype(np.uint16) * (256 - weight)
    mixed += last.astype(np.uint16) * weight
    mixed >>= 8
    return mixed.astype(np.uint8)


class FirstLastFrameScene:
    """First and last frame: the first image pushes in while the last one, pushed in by the same
    amount, settles back; a cross-fade carries one into the other. Only a cross-fade when the
    camera is fixed. The first frame is the first image and the last frame the last image."""

    def __init__(
        self, first: Image.Image, last: Image.Image, count: int, fps: int, seed: int, camera_fixed: bool
    ) -> None:
        self.count = count
        self.zoom = 0.0 if camera_fixed else zoom_amount(count / fps) / 2
        drift = random_drift(stable_rng("first-last", seed))
        self.first = CameraMove(first, drift)
        self.last = CameraMove(last, (-drift[0], -drift[1]))

    def frames(self) -> Iterator[np.ndarray]:
        for index in range(self.count):
            progress = ease(progress_of(index, self.count))
            weight = round(256 * progress)
            # Only the pictures the cross-fade shows are scaled.
            if weight >= 256:
                yield self.last.at(1.0 + self.zoom * (1.0 - progress))
            elif weight <= 0:
                yield self.first.at(1.0 + self.zoom * progress)
            else:
                yield blend(self.first.at(1.0 + self.zoom * progress), self.last.at(1.0 + self.zoom * (1.0 - progress)),
                            weight)


@dataclass(frozen=True)
class Reference:
    """One reference of the multimodal scenario: a still image (output size) or a video clip."""

    image: Image.Image | None = None
    video: VideoClip | None = None


def split_evenly(total: int, parts: int) -> list[int]:
    """`total` frames shared by `parts` segments, the first ones one frame longer when it does not
    divide."""
    base, extra = divmod(total, parts)
    return [base + (1 if index < extra else 0) for index in range(parts)]


class ReferenceScene:
    """Multimodal references: the references one after another, each for an equal share of the
    clip; images with a slow push-in, videos resampled to their share."""

    def __init__(
        self, references: Sequence[Reference], size: tuple[int, int], count: int, fps: int, seed: int
    ) -> None:
        if not references:
            raise ValueError("a reference scene needs at least one reference")
        self.references = list(references)
        self.size = size
        self.count = count
        self.fps = fps
        self.seed = seed

    def frames(self) -> Iterator[np.ndarray]:
        shares = split_evenly(self.count, len(self.references))
        for position, (reference, share) in enumerate(zip(self.references, shares, strict=True)):
            if reference.video is not None:
                yield from reference.video.resampled(share, self.size)
                continue
            assert reference.image is not None
            camera = CameraMove(reference.image, random_drift(stable_rng("reference", self.seed, position)))
            zoom = zoom_amount(share / self.fps)
            for index in range(share):
                yield camera.at(1.0 + zoom * ease(progress_of(index, share)))
