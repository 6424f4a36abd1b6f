"""Video generators for the local task service.

The service calls a `Generator` for each task it runs. `PreviewGenerator` is the built-in one: it
renders real, playable preview videos (H.264/AAC in MP4) from the request's inputs, offline and
without a model, and says so in the file's metadata. A real model, or a gateway to the real
service, can take its place by implementing the same protocol.

    resolver = InputResolver(data_dir, allow_loopback=True)
    job = RenderJob(task_id, request, output_dir, seed=resolved_seed, draft=False)
    result = PreviewGenerator().render(job, resolver, progress=report, is_cancelled=cancelled)
    # result.video_path, result.last_frame_path, result.width, ..., result.completion_tokens

Errors: `InputError` (a content item could not be fetched or decoded; `code` and `message` go
into the failed task's record) and `RenderCancelled` (the task was cancelled mid-render).
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .protocol import Generator, RenderCancelled, RenderedOutput, RenderJob, RenderResult, VideoNumbers

if TYPE_CHECKING:
    from .inputs import InputError, InputResolver, content_path
    from .plan import ContentPlan, OutputSpec, output_spec, plan_content
    from .preview import PreviewGenerator, last_frame_filename, video_filename

# PyAV, numpy and Pillow are loaded on first use of what needs them: an API node or a gateway, which
# never renders, imports `dailies.generator.protocol` through this package and starts without them.
_LAZY = {"InputError": "inputs", "InputResolver": "inputs", "content_path": "inputs", "ContentPlan": "plan",
         "OutputSpec": "plan", "output_spec": "plan", "plan_content": "plan", "PreviewGenerator": "preview",
         "last_frame_filename": "preview", "video_filename": "preview"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "ContentPlan",
    "Generator",
    "InputError",
    "InputResolver",
    "OutputSpec",
    "PreviewGenerator",
    "RenderCancelled",
    "RenderJob",
    "RenderResult",
    "RenderedOutput",
    "VideoNumbers",
    "content_path",
    "last_frame_filename",
    "output_spec",
    "plan_content",
    "video_filename",
]
