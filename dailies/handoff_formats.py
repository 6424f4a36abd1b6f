"""The edit hand-off's formats (dailies/edit_handoff.py), apart from it so the CLI's parser and the
Review page name them without importing OpenTimelineIO: each format's OTIO adapter, file ending and
media type."""

from __future__ import annotations

FORMATS: dict[str, tuple[str, str, str]] = {
    "otio": ("otio_json", ".otio", "application/json"),
    "edl": ("cmx_3600", ".edl", "text/plain"),
    "fcpxml": ("fcpx_xml", ".fcpxml", "application/xml"),
}
