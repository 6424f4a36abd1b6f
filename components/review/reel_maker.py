"""Make a reel on the Review page: the versions the person picks (the approved ones by default), in the order
they arrange them in a list (review/reel_order.py), one after another in one MP4 (dailies.reel), with slates
and a burn-in if they want them.

`render_reel_maker(results, journal, client, now)` draws it. Each version's video is its kept copy, else
its live link (downloaded to a temporary folder); a version with neither is named and the reel is not
made. The reel is kept on this machine in `reels_dir(journal)` (data dir/dashboard/reels/<scope>/), so it
can be played and downloaded again later in the session and after it.
"""

from __future__ import annotations

import shutil
import tempfile
import time
import uuid
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path

import streamlit as st

from components.common import live_start, pages, player, thumbnails
from components.common.shot_labels import labels_among_many
from components.common.timecode_player import playable_url
from components.review.card import short_id
from components.review.reel_order import OrderRow, reel_order
from components.review.results import REEL_PREFIX, Result, shots_of
from components.review.state_keys import (
    BURN_IN_KEY,
    EARLIER_KEY,
    FPS_KEY,
    HANDOFF_ORDER_KEY,
    LAST_KEY,
    MAKE_KEY,
    ORDER_KEY,
    PICKED_KEY,
    PRESENT_LIVE_KEY,
    PRESENT_OUTCOME_KEY,
    REEL_DOWNLOAD_KEY,
    REEL_SHARE_KEY,
    REEL_SHARE_PANEL_KEY,
    SIZE_KEY,
    SLATES_KEY,
)
from dailies.client import DailiesError
from dailies.journal import STATUS_LABELS, Journal
from dailies.journal.statuses import APPROVED
from dailies.reel import DEFAULT_FPS, ReelShot, make_reel, parse_size, slate_lines
from dailies.spec.results import LAST_FRAME_NAME, VIDEO_NAME

SIZES = ("1280x720", "1920x1080", "854x480", "720x1280")
FRAME_RATES = (24, 25, 30)
EARLIER_SHOWN = 10
REELS_KEPT = 20


def reels_dir(journal: Journal) -> Path:
    """Where this view's reels are kept: beside the journal, in a folder of the scope's own."""
    root = journal.path.parent / "reels"
    return root / journal.scope.folder if journal.scope is not None else root


def _names(results: Sequence[Result]) -> dict[str, str]:
    """What tells each version's prompt from the others' (variations share their start)."""
    prompts = [r.prompt for r in results]
    seeds = [r.record.seed if r.record is not None else None for r in results]
    return {r.task_id: label if r.prompt else "prompt unknown"
            for r, label in zip(results, labels_among_many(prompts, seeds), strict=True)}


def _detail(result: Result) -> str:
    return f"{short_id(result.task_id)} · {STATUS_LABELS.get(result.status_name, result.status_name)}"


def _labels(results: Sequence[Result], names: dict[str, str]) -> dict[str, str]:
    """Each version's id, status and name, as the picker shows it."""
    return {r.task_id: f"{_detail(r)} · {names[r.task_id]}" for r in results}


def default_picks(results: Sequence[Result]) -> list[str]:
    """The approved versions, oldest first (the order they were made in)."""
    approved = [r for r in results if r.status_name == APPROVED]
    return [r.task_id for r in sorted(approved, key=lambda r: r.created_at)]


def _frame(result: Result, now: float) -> str:
    """A URL of the version's last frame (its live link, else its kept copy), or "" when there is none."""
    choice = player.choose(result.record, result.kept, now, LAST_FRAME_NAME, on_service=result.listed)
    if choice.path is not None:
        return playable_url(choice.path, f"dailies.reel_order[{result.task_id}]")
    return choice.url or ""


def _order_list(picked: list[str], by_id: dict[str, Result], names: dict[str, str], now: float,
                journal: Journal) -> list[str]:
    """The picked versions in a list the person rearranges; the reel's order. A version without a last
    frame shows its kept video's first (a thumbnail, made once; none while it is still being made)."""
    frames = {t: _frame(by_id[t], now) for t in picked}
    unframed = [t for t in picked if not frames[t] and VIDEO_NAME in by_id[t].kept]
    if unframed:
        frames |= thumbnails.thumbnails(journal, unframed, kept={t: by_id[t].kept for t in unframed})
    rows = [OrderRow(t, names[t], _detail(by_id[t]), frames[t]) for t in picked]
    return reel_order(rows, key=ORDER_KEY)


def _sources(results: list[Result], versions: dict[str, str], client, now: float, folder: Path,
             bar) -> list[ReelShot]:
    """The reel's shots: each version's kept copy, else its live link downloaded into `folder`."""
    shots: list[ReelShot] = []
    missing: list[str] = []
    # A shot is named on its slate and burn-in by what tells its prompt from the others', not its id.
    names = labels_among_many([r.prompt for r in results], [r.record.seed if r.record else None for r in results],
                              width=32)
    for index, (result, name) in enumerate(zip(results, names, strict=True)):
        choice = player.choose(result.record, result.kept, now, on_service=result.listed)
        path = choice.path
        if path is None and choice.url and client is not None:
            path = folder / f"{index:03d}.mp4"
            bar.progress(0.0, text=f"Fetching {short_id(result.task_id)} ({index + 1} of {len(results)})…")
            client.download(choice.url, path)
        if path is None:
            missing.append(f"{short_id(result.task_id)}: {choice.reason or 'no video'}")
            continue
        lines = slate_lines(versions.get(result.task_id),
                            STATUS_LABELS.get(result.status_name), result.prompt, result.created_at or None)
        shots.append(ReelShot(path, name if result.prompt else short_id(result.task_id), lines))
    if missing:
        raise ValueError("No video to put in the reel for " + "; ".join(missing))
    return shots


def version_labels(journal: Journal, results: Sequence[Result]) -> dict[str, str]:
    """"v2" of each version, numbered within its shot as the Review page numbers them."""
    return {r.task_id: f"v{shot.number_of(r.task_id)}" for shot in shots_of(journal, list(results))
            for r in shot.versions}


def make(results: list[Result], journal: Journal, client, now: float, *, slates: bool, burn_in: bool,
         size: tuple[int, int], fps: int, bar, versions: dict[str, str] | None = None) -> Path:
    """Render the reel of `results` in that order into reels_dir(journal); its path. `versions`: each
    task's version label for its slate (default: numbered among `results`)."""
    versions = version_labels(journal, results) if versions is None else versions
    # A name of its own even for two reels begun in one second by two people: a name checked against
    # finished files only handed both the same file.
    out = reels_dir(journal) / f"{REEL_PREFIX}{datetime.now():%Y%m%d-%H%M%S}-{uuid.uuid4().hex[:6]}.mp4"
    with tempfile.TemporaryDirectory(prefix="dailies-reel-") as folder:
        shots = _sources(results, versions, client, now, Path(folder), bar)
        make_reel(shots, out, size=size, fps=fps, slates=slates, burn_in=burn_in,
                  progress=lambda f: bar.progress(min(f, 1.0), text=f"Rendering the reel: {f * 100:.0f}%"))
    _prune_reels(reels_dir(journal), keep=out)
    return out


def _prune_reels(folder: Path, keep: Path) -> None:
    """The newest REELS_KEPT reels stay (the page offers the last and EARLIER_SHOWN before it); older
    ones go, so reels do not pile up on the disk for ever. A shared reel has its own kept copy."""
    reels = sorted(folder.glob(f"{REEL_PREFIX}*.mp4"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in reels[REELS_KEPT:]:
        if old != keep:
            old.unlink(missing_ok=True)


def keep_for_sharing(journal: Journal, path: Path) -> str:
    """Keep a reel in the journal like a result (its id is its file's stem, `reel-...`), so a share link
    can hold it like any version: on this machine or in the team's bucket. Its id."""
    reel_id = path.stem
    if VIDEO_NAME not in journal.kept(reel_id):
        copy = journal.keep_path(reel_id, VIDEO_NAME)
        copy.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, copy)
        journal.mark_kept(reel_id, VIDEO_NAME, copy)
    return reel_id


def _show(path: Path, journal: Journal | None = None, client=None) -> None:
    st.video(str(path))
    with path.open("rb") as file:
        st.download_button("⬇️ Download the reel", data=file.read(), file_name=path.name, mime="video/mp4",
                           key=REEL_DOWNLOAD_KEY.format(path.name))
    st.caption(f"Kept in this project's reels as {path.name} ({path.stat().st_size / 1_000_000:.1f} MB)")
    if journal is not None and st.toggle("🔗 Share this reel with a guest", key=REEL_SHARE_KEY.format(path.stem)):
        from components.common.shares import public_url
        from components.review.share_panel import render_share_panel

        render_share_panel([keep_for_sharing(journal, path)], journal, client, public_url(),
                           key=REEL_SHARE_PANEL_KEY.format(path.stem))


def _handoff_of_order(ordered: list[Result], journal: Journal, now: float) -> None:
    """The reel's order for the edit: its approved, kept versions as an OpenTimelineIO timeline."""
    from components.review.handoff_download import handed_off
    from dailies.handoff_formats import FORMATS

    text, clips, _ = handed_off(ordered, journal, "otio", now, keep_order=True)
    if clips:
        st.download_button(f"🎞️ This order for the edit (OTIO, {clips} approved shot{'s' if clips != 1 else ''})",
                           text, file_name=f"dailies-reel-{time.strftime('%Y%m%d-%H%M')}.otio",
                           mime=FORMATS["otio"][2], key=HANDOFF_ORDER_KEY, on_click="ignore",
                           help="Each approved version with a kept copy, in the reel's order, comments as markers")


def _present_live(ordered: list[Result], names: dict[str, str], journal: Journal, client) -> None:
    """A live session on the reel's order: each version labelled as its slate names it."""
    if client is None:
        return
    if st.button("📡 Present this order live", key=PRESENT_LIVE_KEY,
                 help="A live session on these versions in this order: everyone who joins follows your player"):
        versions = version_labels(journal, ordered)  # read only when asked, not on every run of the page
        labelled = [(r.task_id, f"{names[r.task_id]} {versions.get(r.task_id, '')}".strip()) for r in ordered]
        outcome = live_start.start(client, labelled, f"Reel {time.strftime('%d %b %H:%M')}", journal.author)
        if isinstance(outcome, str):
            st.session_state[PRESENT_OUTCOME_KEY] = (st.error, outcome)
        elif not live_start.open_session(outcome):  # no router: say where it is
            st.session_state[PRESENT_OUTCOME_KEY] = (
                st.info, f"Started: open it at {pages.LIVE.address({'session': outcome.id})}")


def render_reel_maker(results: Sequence[Result], journal: Journal, client, now: float) -> None:
    """The reel maker: pick versions (approved by default), arrange them, choose slates and burn-in,
    make the reel with a progress bar, then play and download it."""
    by_id = {r.task_id: r for r in results}
    names = _names(results)
    labels = _labels(results, names)
    picks = [t for t in st.session_state.get(PICKED_KEY, default_picks(results)) if t in by_id]
    st.session_state[PICKED_KEY] = picks
    picked = st.multiselect("Versions in the reel", list(by_id), key=PICKED_KEY, format_func=lambda t: labels.get(t, t),
                            help="The approved versions are picked at first; the list below sets their order "
                                 "in the reel (drag a row, or use its ↑ ↓).")
    order = _order_list(picked, by_id, names, now, journal) if picked else []
    left, middle, right, far = st.columns(4)
    slates = left.toggle("Slates", value=True, key=SLATES_KEY,
                         help="A 1.5 s card before each shot: shot, version, status, prompt excerpt, date")
    burn_in = middle.toggle("Burn-in", value=False, key=BURN_IN_KEY, help="Shot name and timecode on every frame")
    size_text = right.selectbox("Frame size", SIZES, key=SIZE_KEY,
                                help="Every shot is letterboxed into it, never stretched")
    fps = far.selectbox("Frame rate", FRAME_RATES, index=FRAME_RATES.index(DEFAULT_FPS), key=FPS_KEY)
    if st.button("🎬 Make reel", key=MAKE_KEY, disabled=not order, type="primary"):
        bar = st.progress(0.0, text="Starting…")
        try:
            path = make([by_id[t] for t in order], journal, client, now, slates=slates, burn_in=burn_in,
                        size=parse_size(size_text), fps=int(fps), bar=bar, versions=version_labels(journal, results))
        except (ValueError, DailiesError, OSError) as exc:
            bar.empty()
            st.error(f"Could not make the reel: {exc}")
        else:
            bar.empty()
            st.session_state[LAST_KEY] = str(path)
            st.success(f"Made a reel of {len(order)} shot(s) at {time.strftime('%H:%M:%S')}")
    if order:
        with st.container(horizontal=True, gap="small"):  # what else the order is for, side by side
            _handoff_of_order([by_id[t] for t in order], journal, now)
            _present_live([by_id[t] for t in order], names, journal, client)
        said = st.session_state.pop(PRESENT_OUTCOME_KEY, None)  # under the row, not squeezed into it
        if said:
            show, text = said
            show(text)
    last = st.session_state.get(LAST_KEY)
    if last and Path(last).is_file():
        _show(Path(last), journal, client)
    earlier = sorted(reels_dir(journal).glob("reel-*.mp4"), reverse=True) if reels_dir(journal).is_dir() else []
    earlier = [p for p in earlier if str(p) != last][:EARLIER_SHOWN]
    if earlier:
        with st.expander(f"Earlier reels ({len(earlier)})"):
            chosen = st.selectbox("Reel", [None, *earlier], key=EARLIER_KEY,
                                  format_func=lambda p: "Pick one to play and download" if p is None else p.name)
            if chosen is not None:
                _show(chosen, journal, client)
