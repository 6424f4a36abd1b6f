"""Thumbnails of kept copies (the task table's picture column, the reel order's rows): a JPEG WIDTH_PX wide,
as a data URL.

Each is made once per kept file by `dailies.review_report.thumbnail_from_kept` (the last frame where
kept, else the video's first frame; a video opened only through `spec.media.open_untrusted`) and kept
on disk beside the copy, named after what it was made from (each file's place, size and time), so a
replaced file gets a new one; copies in a team's bucket keep theirs in this dashboard's archive folder.

They are made beside the page, two at a time: a page waits at most WAIT_S for the ones it has not seen,
a thumbnail still being made lands in the cache for the next run, and a file that cannot be read gives
none (tried again after RETRY_S), never an error. A page of rows made before reads a few small files,
or nothing at all once this process has them.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Mapping
from concurrent.futures import Future, ThreadPoolExecutor, wait
from dataclasses import dataclass
from pathlib import Path

from dailies.journal import Journal, KeptFile
from dailies.review_report import thumbnail_from_kept
from dailies.spec.media import encode_data_url
from dailies.spec.results import LAST_FRAME_NAME, VIDEO_NAME

WIDTH_PX = 128
WAIT_S = 1.0
RETRY_S = 600.0
MAX_KEPT = 2000
PREFIX = ".thumbnail-"  # hidden beside the copies: it is not a result

_made: OrderedDict[str, str] = OrderedDict()  # what it was made from -> data URL
_failed: dict[str, float] = {}  # what could not be made -> when (monotonic)
_lock = threading.Lock()
_makers = ThreadPoolExecutor(max_workers=2, thread_name_prefix="dailies-thumbnail")
_making: dict[str, Future] = {}


@dataclass(frozen=True)
class _Wanted:
    """One task's thumbnail: what it is made from (a digest), the kept files, the file it is kept in."""

    made_from: str
    kept: dict[str, KeptFile]
    path: Path


def _made_from(kept: Mapping[str, KeptFile]) -> str | None:
    """A digest of the files a thumbnail is made from; None when there is none, or a copy here is gone."""
    parts = [f"{WIDTH_PX}px"]
    for name in (LAST_FRAME_NAME, VIDEO_NAME):
        file = kept.get(name)
        if file is None:
            continue
        if file.path is not None:
            try:
                stat = file.path.stat()
            except OSError:
                return None
            parts.append(f"{name}|{file.location}|{stat.st_size}|{stat.st_mtime_ns}")
        else:  # a bucket's object is replaced only by keeping it again: a new row, a new time
            parts.append(f"{name}|{file.location}|{file.size}|{file.kept_at!r}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:20] if len(parts) > 1 else None


def _wanted(journal: Journal, task_id: str, kept: Mapping[str, KeptFile]) -> _Wanted | None:
    made_from = _made_from(kept)
    if made_from is None:
        return None
    local = next((f.path for f in kept.values() if f.path is not None), None)
    folder = local.parent if local is not None else journal.keep_path(task_id, VIDEO_NAME).parent
    return _Wanted(made_from, dict(kept), folder / f"{PREFIX}{made_from}.jpg")


def _remember(made_from: str, url: str) -> None:
    with _lock:
        _made[made_from] = url
        _made.move_to_end(made_from)
        while len(_made) > MAX_KEPT:
            _made.popitem(last=False)


def _known(wanted: _Wanted) -> str | None:
    """The thumbnail made already, in this process or on disk."""
    with _lock:
        url = _made.get(wanted.made_from)
        if url is not None:
            _made.move_to_end(wanted.made_from)
            return url
    try:
        data = wanted.path.read_bytes()
    except OSError:
        return None
    url = encode_data_url(data, "image/jpeg")
    _remember(wanted.made_from, url)
    return url


def _make(wanted: _Wanted) -> str | None:
    """Make the thumbnail (in a maker thread) and keep it: on disk when the folder takes it, in memory always."""
    try:
        jpeg = thumbnail_from_kept(wanted.kept, WIDTH_PX)
    except Exception:  # whatever a kept copy does, its row shows no picture, and the page goes on
        jpeg = None
    if jpeg is None:
        with _lock:
            _failed[wanted.made_from] = time.monotonic()
        return None
    try:
        wanted.path.parent.mkdir(parents=True, exist_ok=True)
        partial = wanted.path.with_name(f"{wanted.path.name}.{os.getpid()}.part")  # another dashboard may write too
        partial.write_bytes(jpeg)
        os.replace(partial, wanted.path)
        for old in wanted.path.parent.glob(f"{PREFIX}*.jpg"):  # made from a file since replaced
            if old != wanted.path:
                old.unlink(missing_ok=True)
    except OSError:
        pass  # a folder that takes no file: made again by the next process, kept in this one
    url = encode_data_url(jpeg, "image/jpeg")
    _remember(wanted.made_from, url)
    return url


def _ask(wanted: _Wanted) -> Future | None:
    """The making of this thumbnail: the one under way if there is one; None while a failure is recent."""
    with _lock:
        failed = _failed.get(wanted.made_from)
        if failed is not None and time.monotonic() - failed < RETRY_S:
            return None
        future = _making.get(wanted.made_from)
        if future is not None:
            return future
        future = _making[wanted.made_from] = _makers.submit(_make, wanted)
    # Outside the lock: a making done already runs the callback here, and it takes the lock.
    future.add_done_callback(lambda done: _forget_making(wanted.made_from, done))
    return future


def _forget_making(made_from: str, done: Future) -> None:
    with _lock:
        if _making.get(made_from) is done:
            del _making[made_from]


def thumbnails(journal: Journal, task_ids: Iterable[str], wait_s: float | None = None,
               kept: Mapping[str, Mapping[str, KeptFile]] | None = None) -> dict[str, str]:
    """Data URLs of the thumbnails of these tasks' kept copies, by task id: those made before, and those
    made within `wait_s` (WAIT_S unless said). `kept`: the archive's files by task, read already (else
    each task's are read here). A task with no kept copy, or whose thumbnail failed or is still being
    made, is left out; nothing here raises."""
    found: dict[str, str] = {}
    asked: dict[str, Future] = {}
    for task_id in dict.fromkeys(task_ids):
        try:
            files = kept.get(task_id, {}) if kept is not None else journal.kept(task_id)
            wanted = _wanted(journal, task_id, files)
        except (OSError, ValueError):  # a journal that cannot say, or an id no folder may take
            continue
        if wanted is None:
            continue
        url = _known(wanted)
        if url is not None:
            found[task_id] = url
        elif (future := _ask(wanted)) is not None:
            asked[task_id] = future
    if asked:
        wait(asked.values(), timeout=WAIT_S if wait_s is None else wait_s)
    for task_id, future in asked.items():
        if future.done() and future.exception() is None and future.result() is not None:
            found[task_id] = future.result()
    return found
