"""One image input of Compose: upload, URL, `asset://` id, or the last frame of an earlier task.

Images held as bytes (uploads, restored uploads, fetched last frames) are checked with the
foundation's Pillow checks before anything is sent, shown with the crop the chosen ratio will
give, and sent as Base64 data URLs. URLs and asset ids are checked by the service when it fetches
them, which the slot says.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import streamlit as st
from PIL import Image, ImageDraw, ImageOps

from components.compose import sources as compose_sources
from components.compose.body import IMAGE_TYPES, MediaChoice
from components.compose.state_keys import SLOT_ASSET, SLOT_REMOVE, SLOT_SOURCE, SLOT_UPLOAD, SLOT_URL
from dailies.client import Client, DailiesError
from dailies.journal import Journal
from dailies.spec import limits as L
from dailies.spec import media, pixels

SOURCES = ("Upload", "URL", "Asset id", "Previous task")
ASSET_SCHEME = "asset://"
PREVIEW_BOX = (480, 300)
CROP_COLOUR = (245, 165, 36)  # the theme's primary colour, so the crop reads as "ours"
KEPT_SUFFIX = ".kept"

IMAGE_LIMITS = (
    f"Images: PNG, JPEG, WebP or BMP, smaller than {L.IMAGE_MAX_BYTES // L.MB} MB, each side "
    f"{L.IMAGE_SIDE_MIN} to {L.IMAGE_SIDE_MAX} px, aspect (width ÷ height) {L.IMAGE_ASPECT_MIN} to "
    f"{L.IMAGE_ASPECT_MAX}. Uploads are checked here before sending; URLs and asset ids when the "
    "service fetches them."
)


@dataclass(frozen=True)
class SlotContext:
    """What a slot needs to know about the rest of the form to preview its crop."""

    model: str
    resolution: str | None
    ratio: str | None
    client: Client | None
    journal: Journal
    # The size `adaptive` follows when this slot is not the image that decides it.
    follows: tuple[int, int] | None = None


def keep_image(slot: str, name: str, data: bytes, mime: str | None, origin: str) -> None:
    """Hold an image in a slot as if it had been uploaded (a restored upload, a fetched frame).

    Kept images outlive the file uploader's own state, which is lost on a page switch."""
    st.session_state[slot + KEPT_SUFFIX] = {"name": name, "data": data, "mime": mime, "origin": origin,
                                            "file_id": None}


def _on_upload_change(slot: str) -> None:
    # The uploader emptied by the user (its ×) drops the image; an upload replaces it.
    uploaded = st.session_state.get(SLOT_UPLOAD.format(slot))
    if uploaded is None:
        st.session_state.pop(slot + KEPT_SUFFIX, None)


def image_slot(slot: str, role: str, label: str, ctx: SlotContext, *, leads: bool) -> tuple[MediaChoice, object]:
    """Draw one image input; return what it holds and a placeholder for its messages.

    `leads` marks the image that `adaptive` follows (the first frame, the first reference image).
    """
    state = st.session_state
    choice = MediaChoice(slot=slot, kind="image_url", role=role)
    with st.container(border=True):
        st.markdown(f"**{label}**")
        state.setdefault(SLOT_SOURCE.format(slot), SOURCES[0])
        source = st.radio(f"Source of the {label.lower()}", SOURCES, key=SLOT_SOURCE.format(slot), horizontal=True,
                          label_visibility="collapsed", persist_state="session")
        if source == "Upload":
            _upload(slot, choice)
        elif source == "URL":
            state.setdefault(SLOT_URL.format(slot), "")
            choice.url = st.text_input("Image URL", key=SLOT_URL.format(slot), placeholder="https://example.com/shot.png",
                                       persist_state="session").strip()
            choice.source = choice.url
        elif source == "Asset id":
            state.setdefault(SLOT_ASSET.format(slot), "")
            typed = st.text_input("Asset id", key=SLOT_ASSET.format(slot), placeholder="asset-20250101-abcde",
                                  help="An image in your asset library, sent as asset://<id>.",
                                  persist_state="session").strip()
            choice.url = as_asset_url(typed)
            choice.source = choice.url
        else:
            _previous_task(slot, choice, ctx)
        if choice.data is not None:
            _preview(choice, ctx, leads)
        messages = st.empty()
    return choice, messages


def as_asset_url(typed: str) -> str:
    """'abc' or 'asset://abc' -> 'asset://abc'; '' stays '' (the slot is then empty)."""
    if not typed:
        return ""
    return typed if typed.startswith(ASSET_SCHEME) else ASSET_SCHEME + typed


def _upload(slot: str, choice: MediaChoice) -> None:
    state = st.session_state
    # The uploader states the spec's limit, not the dashboard's upload size (which Base64 needs for 30 MB).
    uploaded = st.file_uploader("Image file", type=list(IMAGE_TYPES), key=SLOT_UPLOAD.format(slot),
                                on_change=_on_upload_change, args=(slot,),
                                max_upload_size=-(-L.IMAGE_MAX_BYTES // L.MB),
                                help="Sent as a Base64 data URL inside the request.")
    kept = state.get(slot + KEPT_SUFFIX)
    if uploaded is not None and (kept is None or kept.get("file_id") != uploaded.file_id):
        kept = {"name": uploaded.name, "data": uploaded.getvalue(), "mime": uploaded.type,
                "origin": "upload", "file_id": uploaded.file_id}
        state[slot + KEPT_SUFFIX] = kept
    if kept is None:
        return
    if uploaded is None:
        where = {"upload": "uploaded earlier", "journal": "restored from the journal"}.get(
            kept["origin"], kept["origin"])
        cols = st.columns([4, 1])
        cols[0].caption(f"Using **{kept['name']}** ({where}). Upload another file to replace it.")
        if cols[1].button("Remove", key=SLOT_REMOVE.format(slot)):
            state.pop(slot + KEPT_SUFFIX, None)
            st.rerun()
    choice.data = kept["data"]
    choice.mime = media.image_mime(kept["data"], kept.get("mime"))
    choice.source = f"upload: {kept['name']}" if kept["origin"] in ("upload", "journal") else kept["origin"]


def _previous_task(slot: str, choice: MediaChoice, ctx: SlotContext) -> None:
    records = [r for r in compose_sources.recent_succeeded(ctx.client) if r.content and r.content.last_frame_url]
    if not records:
        st.caption("No finished task with a last frame yet. Tick **Return the last frame** when you compose "
                   "a shot, so the next one can start where it ends.")
        return
    record = compose_sources.pick_task(f"{slot}.task", "Last frame of", records, ctx.journal)
    if record is None or ctx.client is None:
        return
    url = record.content.last_frame_url
    choice.source = f"last frame of {record.id}"
    try:
        data = compose_sources.fetch_result_image(ctx.client, url)
    except DailiesError as exc:
        choice.error = compose_sources.fetch_error_text(exc)
        return
    choice.data = data
    choice.mime = media.image_mime(data, "image/png")


def _preview(choice: MediaChoice, ctx: SlotContext, leads: bool) -> None:
    info = choice.info
    if info is None:
        return  # unreadable or over the size limit: the messages say so, nothing to draw
    own = (info.width, info.height)
    try:
        target = pixels.dimensions(ctx.model, ctx.resolution, ctx.ratio, own if leads else ctx.follows)
    except ValueError:
        target = None
    try:
        picture, box = crop_preview(choice.data, target)
    except (OSError, ValueError, SyntaxError) as exc:
        # Its header reads (the size checks pass) but its data does not: the render would fail.
        choice.error = f"the image cannot be decoded whole ({exc}); export it again"
        return
    cols = st.columns([3, 2])
    cols[0].image(picture)
    cols[1].markdown("  \n".join(describe(info, target, box)))


def describe(info: media.ImageInfo, target: tuple[int, int] | None,
             box: tuple[int, int, int, int] | None) -> list[str]:
    """Markdown lines: the image's facts (upright, as the video sees it), the video's frame size
    and what the crop keeps."""
    width, height = info.width, info.height
    lines = [f"**{info.width}×{info.height}** {info.format or ''} · {human_size(info.size_bytes)} · "
             f"aspect {info.aspect:.2f}"]
    if target is None or box is None:
        return lines
    ratio = pixels.nearest_ratio(*target)
    lines.append(f"Video frame **{target[0]}×{target[1]}** ({ratio}).")
    kept_w, kept_h = box[2] - box[0], box[3] - box[1]
    if (kept_w, kept_h) == (width, height):
        lines.append("The whole image is used; only scaled.")
    else:
        cut = "left and right" if kept_w < width else "top and bottom"
        share = 100 * kept_w * kept_h / (width * height)
        lines.append(f"Centre crop keeps **{kept_w}×{kept_h}** ({share:.0f}%); the {cut} are cut (outside the "
                     "orange frame).")
    return lines


def human_size(size: int) -> str:
    return f"{size / L.MB:.1f} MB" if size >= L.MB else f"{max(1, round(size / 1024))} KB"


# Shared by every session, safely: the key is the image's own bytes, and the value is made from them
# alone (no API call, no journal), so a hit gives a session only what it already holds.
@st.cache_data(max_entries=32, show_spinner=False)
def crop_preview(data: bytes, target: tuple[int, int] | None
                 ) -> tuple[bytes, tuple[int, int, int, int] | None]:
    """A small PNG of the image with the centre crop the video will take drawn on it, and the crop
    box in the image's upright pixels (None when there is no target size).

    The image is turned upright by its EXIF orientation first, as the renderer does; its upright
    size is the one every check uses (media.read_image_info). Raises OSError (or ValueError) when
    the pixels cannot be decoded."""
    info = media.read_image_info(data)
    width, height = info.width, info.height
    with Image.open(io.BytesIO(data), formats=media.IMAGE_FORMATS) as img:
        img.draft("RGB", PREVIEW_BOX)  # JPEGs decode at a fraction of their size: fast for big photos
        thumb = ImageOps.exif_transpose(img).convert("RGB")
    box = pixels.centre_crop_box((width, height), target) if target else None
    thumb.thumbnail(PREVIEW_BOX)
    if box is not None:
        sx, sy = thumb.width / width, thumb.height / height
        scaled = (round(box[0] * sx), round(box[1] * sy), round(box[2] * sx) - 1, round(box[3] * sy) - 1)
        shade = Image.new("L", thumb.size, 110)
        ImageDraw.Draw(shade).rectangle(scaled, fill=0)
        thumb.paste((0, 0, 0), mask=shade)
        ImageDraw.Draw(thumb).rectangle(scaled, outline=CROP_COLOUR, width=3)
    out = io.BytesIO()
    thumb.save(out, format="PNG")
    return out.getvalue(), box


def thumbnail_data_url(data: bytes, side: int = 160) -> str | None:
    """A small JPEG data URL of an image, for the journal's record of the inputs; None for bytes the
    header check refuses (the formats the spec takes, no decompression bomb)."""
    try:
        media.read_image_info(data)
        with Image.open(io.BytesIO(data), formats=media.IMAGE_FORMATS) as img:
            img.draft("RGB", (side, side))
            small = ImageOps.exif_transpose(img).convert("RGB")
    except (OSError, ValueError, Image.DecompressionBombError):
        return None
    small.thumbnail((side, side))
    out = io.BytesIO()
    small.save(out, format="JPEG", quality=75)
    return media.encode_data_url(out.getvalue(), "image/jpeg")
