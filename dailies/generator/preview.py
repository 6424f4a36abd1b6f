"""The preview renderer: real, playable videos that follow the request, made without a model.

It shows the request's own material (the prompt's words, the images, the reference clips and
audio) with simple motion, at exactly the size, length and frame rate the real service would
deliver, so that everything downstream (records, players, reviews, billing) works on true files.

It says what it is: the MP4's title and comment name the preview renderer, and the text-to-video
picture carries a "PREVIEW" label. The image scenarios carry no label in the picture, because their
first and last frames must be the given images.
"""

from __future__ import annotations

import os
import tempfile
import time
from collections import deque
from collections.abc import Generator, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import closing
from pathlib import Path

import numpy as np
from PIL import Image

from dailies.spec.limits import IMAGE_MAX_BYTES, VIDEO_MAX_BYTES
from dailies.spec.scenarios import Scenario

from ..spec.media import check_audio, check_video, reference_videos_problems
from .audio import AUDIO_RATE, AudioTrack, LoopedClip, ToneTrack
from .encode import Mp4Writer, rgb_from_frame
from .inputs import InputResolver
from .media import (
    VideoClip,
    fit_image,
    load_audio,
    open_image,
    reduced_to_cover,
    refuse_media_problems,
    refuse_problems,
)
from .overlays import watermark
from .plan import ContentPlan, MediaInput, OutputSpec, output_spec, plan_content
from .protocol import CancelCheck, ProgressCallback, RenderCancelled, RenderJob, RenderResult
from .scenes import FirstFrameScene, FirstLastFrameScene, Reference, ReferenceScene, Scene
from .text_scene import TextScene

VIDEO_TITLE = "Dailies preview"
FRAMES_AHEAD = 3  # frames drawn ahead of the encoder (see `_drawn_ahead`)
PNG_COMPRESS_LEVEL = 3  # a last frame is written once; level 3 is close in size to 9 and far faster


def video_filename(task_id: str) -> str:
    return f"{task_id}.mp4"


def last_frame_filename(task_id: str) -> str:
    return f"{task_id}_last_frame.png"


class PreviewGenerator:
    """A `Generator` that renders previews with PyAV, Pillow and numpy.

    `poll_interval` is the least time in seconds between two calls of `is_cancelled`, and
    `progress_interval` between two progress reports (0 calls them at every frame), so that
    callbacks which touch a database stay cheap whatever the frame rate of the render.
    """

    def __init__(self, poll_interval: float = 0.1, progress_interval: float = 0.25) -> None:
        self.poll_interval = poll_interval
        self.progress_interval = progress_interval

    def render(self, job: RenderJob, inputs: InputResolver, progress: ProgressCallback,
               is_cancelled: CancelCheck) -> RenderResult:
        """`Generator.render` (its docstring says what each argument does)."""
        plan = plan_content(job.request)
        output_dir = Path(job.output_dir)
        output_dir.mkdir(parents=True, exist_ok=True)
        video_path = output_dir / video_filename(job.task_id)
        last_frame_path = output_dir / last_frame_filename(job.task_id)
        partial_video = output_dir / f".{video_path.name}.partial"
        partial_last_frame = output_dir / f".{last_frame_path.name}.partial"
        ours = [partial_video, partial_last_frame]  # files to remove if the render does not complete
        try:
            with tempfile.TemporaryDirectory(dir=output_dir, prefix=f".{job.task_id}-inputs-") as scratch:
                if is_cancelled():
                    raise RenderCancelled(job.task_id)
                spec, scene, track = self._prepare(job, plan, inputs, Path(scratch), is_cancelled)
                self._encode(job, spec, scene, track, partial_video, partial_last_frame, progress, is_cancelled)
            # The video last: once it has its final name, everything is in place.
            if spec.return_last_frame:
                os.replace(partial_last_frame, last_frame_path)
                ours.append(last_frame_path)
            os.replace(partial_video, video_path)
        except BaseException:
            for leftover in ours:
                leftover.unlink(missing_ok=True)
            raise
        progress(1.0)
        # The preview renderer makes no tool calls: tools_used and web_search_calls stay empty.
        return RenderResult(
            **spec.numbers(),
            video_path=video_path,
            last_frame_path=last_frame_path if spec.return_last_frame else None,
        )

    # ---------- inputs to scene ----------

    def _prepare(
        self,
        job: RenderJob,
        plan: ContentPlan,
        inputs: InputResolver,
        scratch: Path,
        is_cancelled: CancelCheck,
    ) -> tuple[OutputSpec, Scene, AudioTrack | None]:
        """Fetch and decode the inputs, then build the scene and the sound track."""
        images: dict[str, Image.Image] = {}
        # The frame size once known: every image is then decoded no larger than it needs to cover it.
        frame: list[tuple[int, int] | None] = [None]

        def image(media: MediaInput) -> Image.Image:
            if media.where not in images:
                if is_cancelled():
                    raise RenderCancelled(job.task_id)
                data = inputs.read_bytes(media.url, media.where, max_bytes=IMAGE_MAX_BYTES)
                images[media.where] = open_image(data, media.where, cover=frame[0])
            return images[media.where]

        # `adaptive` follows the first frame or first reference image, so that one comes first (and is
        # the one image decoded whole, for its shape).
        ratio_image = plan.ratio_image
        image_size = image(ratio_image).size if ratio_image is not None else None
        spec = output_spec(job.request, job.seed, job.draft, image_size)
        size = (spec.width, spec.height)
        frame[0] = size
        if ratio_image is not None:
            images[ratio_image.where] = reduced_to_cover(images[ratio_image.where], size)

        scene: Scene
        if plan.scenario is Scenario.FIRST_FRAME:
            assert plan.first_frame is not None
            first = fit_image(image(plan.first_frame), size)
            scene = FirstFrameScene(first, spec.frame_count, spec.fps, spec.seed, spec.camera_fixed)
        elif plan.scenario is Scenario.FIRST_AND_LAST_FRAME:
            assert plan.first_frame is not None and plan.last_frame is not None
            first = fit_image(image(plan.first_frame), size)
            last = fit_image(image(plan.last_frame), size)
            scene = FirstLastFrameScene(first, last, spec.frame_count, spec.fps, spec.seed, spec.camera_fixed)
        elif plan.scenario is Scenario.REFERENCES:
            references = []
            lengths: list[tuple[str, float]] = []  # the reference videos', for their total's limit
            for media in plan.references:
                if media.kind == "image":
                    references.append(Reference(image=fit_image(image(media), size)))
                else:
                    if is_cancelled():
                        raise RenderCancelled(job.task_id)
                    path = inputs.fetch(media.url, media.where, scratch, max_bytes=VIDEO_MAX_BYTES)
                    found, problems = check_video(path, media.where)
                    refuse_media_problems(found, problems)
                    if found is not None:
                        lengths.append((media.where, found.duration))
                        refuse_problems(reference_videos_problems(lengths))
                    references.append(Reference(video=VideoClip(path, media.where)))
            scene = ReferenceScene(references, size, spec.frame_count, spec.fps, spec.seed)
        else:
            scene = TextScene(plan.prompt, spec.width, spec.height, spec.frame_count, spec.fps, spec.seed)
        images.clear()  # the originals are no longer needed; the scenes hold fitted copies

        track: AudioTrack | None = None
        if spec.generate_audio:
            total_samples = _audio_samples(spec)
            if plan.audios:
                clips = []
                for media in plan.audios:
                    if is_cancelled():
                        raise RenderCancelled(job.task_id)
                    path = inputs.fetch(media.url, media.where, scratch, max_bytes=VIDEO_MAX_BYTES)
                    refuse_media_problems(*check_audio(path, media.where))
                    clips.append(load_audio(path, media.where, AUDIO_RATE, total_samples))
                track = LoopedClip(np.concatenate(clips)[:total_samples])
            else:
                track = ToneTrack(plan.prompt, spec.seed, total_samples)
        return spec, scene, track

    # ---------- scene to file ----------

    def _encode(
        self,
        job: RenderJob,
        spec: OutputSpec,
        scene: Scene,
        track: AudioTrack | None,
        video_path: Path,
        last_frame_path: Path,
        progress: ProgressCallback,
        is_cancelled: CancelCheck,
    ) -> None:
        mark = watermark(spec.width, spec.height) if spec.watermark else None
        total_samples = _audio_samples(spec)
        metadata = {
            "title": VIDEO_TITLE,
            "comment": f"Rendered by the Dailies preview renderer, not a video model. "
            f"Task {job.task_id}, model {job.request.model}, seed {spec.seed}.",
        }
        last_poll = last_report = time.monotonic()
        written = 0
        with Mp4Writer(
            video_path, spec.width, spec.height, spec.fps,
            audio_rate=AUDIO_RATE if track is not None else None, metadata=metadata,
        ) as writer, closing(_drawn_ahead(scene.frames())) as frames:
            # Closed before the writer, so a failed render stops drawing before the file is dropped.
            for index, picture in enumerate(frames):
                now = time.monotonic()
                if now - last_poll >= self.poll_interval:
                    last_poll = now
                    if is_cancelled():
                        raise RenderCancelled(job.task_id)
                if index == spec.frame_count - 1 and spec.return_last_frame:
                    # Scenes may give yuv420p frames; the PNG is RGB, converted as a player would.
                    Image.fromarray(rgb_from_frame(picture)).save(
                        last_frame_path, format="PNG", compress_level=PNG_COMPRESS_LEVEL
                    )
                if mark is not None:
                    # On the frame itself: `_drawn_ahead` gives copies, not the scene's arrays.
                    mark.apply(picture)
                writer.add_frame(picture)
                written = index + 1
                if track is not None:
                    # The audio that plays during this frame, so both streams advance together.
                    until = written * total_samples // spec.frame_count
                    writer.add_audio(track.samples(writer.samples_written, until - writer.samples_written))
                if now - last_report >= self.progress_interval:
                    last_report = now
                    # Kept below 1.0 until the file is complete and in place.
                    progress(min(0.99, written / spec.frame_count))
            if written != spec.frame_count:
                raise RuntimeError(f"scene gave {written} frames, {spec.frame_count} expected")


def _drawn_ahead(frames: Iterator[np.ndarray]) -> Generator[np.ndarray, None, None]:
    """The frames, drawn in a worker thread up to `FRAMES_AHEAD` ahead of the caller's encoding.

    Scaling a picture (Pillow) and encoding one (x264) both release the GIL, so on two cores the
    camera scenes take about the time of the slower of the two instead of their sum; drawing a few
    frames ahead keeps the worker busy while the encoder's own threads hold it up. Each frame is a
    copy, because a scene may reuse its array for the next frame. Closing the generator (the render
    failed or was cancelled) drops the frames not started and waits for the one being drawn.
    """

    def draw_next() -> np.ndarray | None:
        frame = next(frames, None)
        return None if frame is None else frame.copy()

    # One worker runs the calls in the order they were submitted, so the scene is advanced by one
    # thread at a time, frame after frame.
    worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="preview-frames")
    try:
        pending = deque(worker.submit(draw_next) for _ in range(FRAMES_AHEAD))
        while (frame := pending.popleft().result()) is not None:
            pending.append(worker.submit(draw_next))
            yield frame
    finally:
        worker.shutdown(cancel_futures=True)


def _audio_samples(spec: OutputSpec) -> int:
    """Audio as long as the video: frame_count / fps seconds."""
    return spec.frame_count * AUDIO_RATE // spec.fps
