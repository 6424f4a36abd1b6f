"""Keeping results: copies of a task's video and last frame in the archive, before the 24 h links
die, so they play after the link and the record (7 days) are gone.

`keep_result` is the work (client + journal, no Streamlit); `keep_button` and `auto_keep` are the
widgets. Files are downloaded to `journal.keep_path(task_id, name)`, and `journal.mark_kept` notes
them: there they stay (the local archive, the default), or they go to the team's bucket when the
dashboard has one (`--storage`), where every dashboard of the team plays them. The record goes to the
journal too, so a kept result still shows its model, resolution and seed once the service has
forgotten it.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass

import streamlit as st

from components.common import connection, data
from components.common import countdown as cd
from components.common.state_keys import AUTO_KEEP_KEY
from dailies.client import Client, DailiesError
from dailies.journal import Journal, KeptFile
from dailies.spec.models import TaskRecord
from dailies.spec.results import LAST_FRAME_NAME, VIDEO_NAME
from dailies.spec.statuses import TaskStatus

AUTO_KEEP_PREFERENCE = "keep.auto"

# progress(fraction 0..1, text)
Progress = Callable[[float, str], object]


class LinkExpired(Exception):
    """The result link has passed its 24 h: there is nothing left to download."""


@dataclass(frozen=True)
class KeepPlan:
    """What keeping one task downloads: (file name, URL) pairs, video first."""

    task_id: str
    files: tuple[tuple[str, str], ...]


def plan(record: TaskRecord, now: float) -> KeepPlan:
    """The files to download for a succeeded task whose link still works; LinkExpired otherwise."""
    video = cd.playable_url(record, now)
    if video is None:
        raise LinkExpired(f"the result link of {record.id} is not available (expired, or no result)")
    files = [(VIDEO_NAME, video)]
    frame = cd.playable_last_frame_url(record, now)
    if frame is not None:
        files.append((LAST_FRAME_NAME, frame))
    return KeepPlan(record.id, tuple(files))


def _megabytes(n: int) -> str:
    return f"{n / 1_000_000:,.1f} MB"


def keep_result(client: Client, journal: Journal, record: TaskRecord, now: float | None = None,
                progress: Progress | None = None) -> list[KeptFile]:
    """Download a succeeded task's files into the archive and note them in the journal.

    Raises LinkExpired when the link is dead, and the client's errors when a download fails (the
    client writes to a temporary file, so a failed download leaves no partial copy behind).
    """
    todo = plan(record, time.time() if now is None else now)
    kept: list[KeptFile] = []
    for index, (name, url) in enumerate(todo.files):
        path = journal.keep_path(record.id, name)
        path.parent.mkdir(parents=True, exist_ok=True)

        def report(done: int, total: int | None, index: int = index, name: str = name) -> None:
            if progress is None:
                return
            part = done / total if total else 0.0
            of = f" of {_megabytes(total)}" if total else ""
            progress((index + min(part, 1.0)) / len(todo.files), f"Keeping {name}: {_megabytes(done)}{of}")

        client.download(url, path, progress=report)
        kept.append(journal.mark_kept(record.id, name, path))
    data.remember(journal, [record])
    if progress is not None:
        progress(1.0, f"Kept {len(kept)} file(s) of {record.id}")
    return kept


def kept_video_ids(journal: Journal) -> set[str]:
    """Tasks whose video is in the archive (the file still exists, or the copy is in the bucket)."""
    return video_ids(kept_by_task(journal))


def kept_by_task(journal: Journal) -> dict[str, dict[str, KeptFile]]:
    """Every file of the archive of this view, by task and name: one read."""
    files: dict[str, dict[str, KeptFile]] = {}
    for k in journal.all_kept():
        files.setdefault(k.task_id, {})[k.name] = k
    return files


def video_ids(kept: Mapping[str, Mapping[str, KeptFile]]) -> set[str]:
    """The tasks of `kept` (kept_by_task) whose video is kept."""
    return {task_id for task_id, names in kept.items() if VIDEO_NAME in names}


def keeps_by_default() -> bool:
    """One person's local Dailies keeps what succeeds unless told otherwise (their own disk, links that
    die in 24 h); a team's dashboard or another service keeps only on request."""
    return connection.current().is_local and not connection.team_mode()


def auto_keep_enabled(journal: Journal) -> bool:
    return bool(journal.preference(AUTO_KEEP_PREFERENCE, keeps_by_default()))


def kept_bytes(journal: Journal) -> int:
    """What the archive of this view holds, in bytes."""
    return sum(k.size for k in journal.all_kept())


def to_keep(records: Iterable[TaskRecord], kept_ids: set[str], now: float) -> list[TaskRecord]:
    """Succeeded tasks with a live link whose video is not kept yet."""
    return [r for r in records if r.id not in kept_ids and cd.playable_url(r, now) is not None]


# ---------- widgets ----------


def auto_keep_toggle(journal: Journal) -> bool:
    """The opt-in to keep every succeeded result; stored in the journal so it outlives the session."""
    stored = auto_keep_enabled(journal)
    if AUTO_KEEP_KEY not in st.session_state:
        st.session_state[AUTO_KEEP_KEY] = stored

    def save() -> None:
        journal.set_preference(AUTO_KEEP_PREFERENCE, bool(st.session_state[AUTO_KEEP_KEY]))

    on = st.toggle(
        "Keep every succeeded result automatically", key=AUTO_KEEP_KEY, on_change=save,
        help="Downloads each succeeded result shown on Tasks and Review into the archive, so it still plays "
             "after its 24 h link and 7 day record are gone. On by default for one person's local Dailies.",
    )
    # The folder only on one person's own machine: a shared dashboard's server paths are nobody's business.
    where = f" in {journal.archive_location}" if keeps_by_default() else ""
    st.caption(f"Kept copies: {_megabytes(kept_bytes(journal))}{where}")
    return on


def auto_keep(client: Client, journal: Journal, records: Iterable[TaskRecord], now: float) -> list[str]:
    """Keep what `to_keep` finds, with a progress bar; returns the ids kept. Errors are shown, not raised:
    a failed download must not take the task table down with it."""
    pending = to_keep(records, kept_video_ids(journal), now)
    done: list[str] = []
    if not pending:
        return done
    bar = st.progress(0.0, text=f"Keeping {len(pending)} new result(s)…")
    for index, record in enumerate(pending):
        def step(fraction: float, text: str, index: int = index) -> None:
            bar.progress(min((index + fraction) / len(pending), 1.0), text=text)

        try:
            keep_result(client, journal, record, now, progress=step)
            done.append(record.id)
        except (DailiesError, LinkExpired, OSError) as exc:
            st.warning(f"Could not keep {record.id}: {exc}")
    bar.empty()
    if done:
        st.toast(f"Kept {len(done)} result(s) in the archive", icon="💾")
    return done


def keep_button(client: Client, journal: Journal, record: TaskRecord, now: float, key: str) -> None:
    """'Keep' for one task: downloads with a progress bar, or says why it cannot."""
    kept = journal.kept(record.id)
    if VIDEO_NAME in kept:
        st.success(f"💾 Kept in the archive: `{kept[VIDEO_NAME].location}` ({_megabytes(kept[VIDEO_NAME].size)})")
        return
    if record.status != TaskStatus.SUCCEEDED:
        return
    if cd.playable_url(record, now) is None:
        st.error("The result link has expired and no copy was kept: the video can no longer be downloaded.")
        return
    slot = st.empty()  # the button's place: emptied once the copy is kept, so it is not offered twice
    if slot.button("💾 Keep (download to the archive)", key=key,
                   help="Result links die 24 h after success; a kept copy plays for as long as you keep it."):
        slot.empty()
        bar = st.progress(0.0, text="Starting download…")
        try:
            files = keep_result(client, journal, record, now, progress=lambda f, t: bar.progress(f, text=t))
        except (DailiesError, LinkExpired, OSError) as exc:
            bar.empty()
            st.error(f"Could not keep {record.id}: {exc}")
            return
        st.success("💾 Kept " + ", ".join(f"`{f.location}`" for f in files))
