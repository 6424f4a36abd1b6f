"""The contract between the task service and whatever renders a video.

The service owns the task (state, storage, callbacks, billing); a `Generator` only turns one
validated request into files. The preview renderer is one implementation; a real model, or a
gateway that forwards to the real service, can be another.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

from dailies.spec.models import CreateTaskRequest

if TYPE_CHECKING:
    from .inputs import InputResolver

ProgressCallback = Callable[[float], None]
CancelCheck = Callable[[], bool]


class RenderCancelled(Exception):
    """The render stopped because `is_cancelled()` answered True. No output file is left behind."""


class RenderPostponed(Exception):
    """The render cannot go on now but may later (a gateway whose upstream result could not be
    downloaded yet): the task goes back to the queue, and the run does not count as lost. Its
    checkpointed state is kept, so the next run continues from it."""


@dataclass
class RenderJob:
    """One render, as the service hands it over.

    `request` is already validated. For a final video made from a draft, the service passes a
    request synthesized from the draft's content and parameters with `draft=False`. `seed` is the
    seed actually used (the service resolves -1 to a concrete value before rendering). `draft`
    says whether this render is a draft (480p, billed at 0.6).
    """

    task_id: str
    request: CreateTaskRequest
    output_dir: Path
    seed: int
    draft: bool = False
    # What an earlier run of this task saved with `checkpoint` (a gateway: the upstream task's id),
    # so a render picked up after a stop or a crash continues instead of starting again.
    state: dict[str, Any] = field(default_factory=dict)
    # Saves `state` with the task, durably, before the call returns (raises if it cannot).
    checkpoint: Callable[[dict[str, Any]], None] = lambda state: None
    # When the task expires (unix seconds), counted from the member's create.
    deadline_at: float | None = None


@dataclass(frozen=True, kw_only=True)
class VideoNumbers:
    """The numbers of a video in the terms of the task record (spec 2.5): what a render is asked
    for (`plan.OutputSpec`) and what it made (`RenderResult`).

    Exactly one of `duration` and `frames` is set: `frames` only when the request gave frames.
    `ratio` is always a fixed ratio (what `adaptive` became). `frame_count` is the number of
    frames in the file, `fps` its frame rate, `seed` the seed used.
    """

    width: int
    height: int
    resolution: str
    ratio: str
    duration: int | None
    frames: int | None
    frame_count: int
    fps: int
    seed: int
    generate_audio: bool
    completion_tokens: int

    def numbers(self) -> dict[str, Any]:
        """The fields of `VideoNumbers` alone, to make another kind of it from this one."""
        return {f.name: getattr(self, f.name) for f in fields(VideoNumbers)}


@dataclass(frozen=True, kw_only=True)
class RenderedOutput(VideoNumbers):
    """What a render made and used, without its files: what the service stores with a task
    (`to_json`) and reads back to write the task's record (`from_json`)."""

    tools_used: list[dict[str, Any]] = field(default_factory=list)
    web_search_calls: int = 0

    def to_json(self) -> str:
        """The stored form: a JSON object of the fields of `RenderedOutput` (never the paths of
        a `RenderResult`, which are scratch files of one render)."""
        return json.dumps({f.name: getattr(self, f.name) for f in fields(RenderedOutput)})

    @staticmethod
    def from_json(text: str) -> RenderedOutput:
        """The output `to_json` stored. Keys it does not know (written by a newer version) are
        ignored."""
        data = json.loads(text)
        return RenderedOutput(**{f.name: data[f.name] for f in fields(RenderedOutput) if f.name in data})


@dataclass(frozen=True, kw_only=True)
class RenderResult(RenderedOutput):
    """A finished render: its output and its files. `last_frame_path` is set only when the
    request asked for the last frame."""

    video_path: Path
    last_frame_path: Path | None


@runtime_checkable
class Generator(Protocol):
    """Renders one job into files in `job.output_dir`.

    - `inputs` fetches the request's media (data URLs, http(s) URLs, `asset://` ids); a fetch or
      decode failure raises `InputError`, which the service records as the task's error.
    - `progress(fraction)` is called now and then with a value in [0, 1], ending with 1.0.
    - `is_cancelled()` is polled while rendering; when it answers True the generator removes its
      partial files and raises `RenderCancelled`.

    Files are written under temporary names and renamed on success, so a file with the final
    name is always complete.
    """

    def render(
        self,
        job: RenderJob,
        inputs: InputResolver,
        progress: ProgressCallback,
        is_cancelled: CancelCheck,
    ) -> RenderResult: ...
