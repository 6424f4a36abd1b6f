"""The Compose page's session-state keys, declared once. Their values are what saved sessions, tests and
browser tests know: never change one. Every key starts with "compose."; `{}` takes a slot's number."""

from __future__ import annotations

# The controls that hold request fields (the field table: fields.py).
RESOLUTION = "compose.resolution"
RATIO = "compose.ratio"
LENGTH_BY = "compose.length_by"  # "seconds" or "frames": which of duration and frames is sent
FRAMES = "compose.frames"
DURATION = "compose.duration"
DURATION_AUTO = "compose.duration_auto"  # duration -1: the model picks the length
SEED = "compose.seed"
CAMERA_FIXED = "compose.camera_fixed"
GENERATE_AUDIO = "compose.generate_audio"
DRAFT = "compose.draft"
FLEX = "compose.flex"
PRIORITY = "compose.priority"
WEB_SEARCH = "compose.web_search"
WATERMARK = "compose.watermark"
RETURN_LAST_FRAME = "compose.return_last_frame"
EXPIRES_HOURS = "compose.expires_hours"
CALLBACK_URL = "compose.callback_url"
SAFETY_ID = "compose.safety_identifier"

# form.py
MODEL = "compose.model"
ENDPOINT_ID = "compose.endpoint_id"
ENDPOINT_RULES = "compose.endpoint_rules"
MODE = "compose.mode"
PROMPT = "compose.prompt"
VARIATIONS = "compose.variations"
VARY = "compose.vary_by"
REF_IMAGES = "compose.ref_images"
REF_VIDEOS = "compose.ref_videos"
REF_AUDIOS = "compose.ref_audios"
DRAFT_PICK = "compose.draft_pick"
DRAFT_ID = "compose.draft_id"
DRAFT_FACTS = "compose.draft_facts"
OWN_RESOLUTION = "compose.own_resolution"  # the user's resolution while a draft forces 480p
FIRST_SLOT = "compose.image.first"
LAST_SLOT = "compose.image.last"

# prefill.py
SLOT_PREFIXES = ("compose.image.", "compose.ref_image.", "compose.ref_video.", "compose.ref_audio.")  # media slots
NOTE_KEY = "compose.note"
LINEAGE_KEY = "compose.lineage"

# sources.py
FETCHED_KEY = "compose.fetched"

# submit.py
SUBMIT_KEY = "compose.submit"
TOKEN_KEY = "compose.submit_token"
PENDING_KEY = "compose.pending_batch"
RESULT_KEY = "compose.result"

# prefill.py
NOTE_DISMISS_KEY = "compose.note_dismiss"

# request_preview.py
DOWNLOAD_JSON_KEY = "compose.download_json"

# form.py
REF_IMAGE_SLOT = "compose.ref_image.{}"  # a reference's slot, by its number
REF_VIDEO_SLOT = "compose.ref_video.{}"
REF_AUDIO_SLOT = "compose.ref_audio.{}"

# image_input.py, media_input.py
SLOT_UPLOAD = "{}.upload"  # a media slot's own widgets, by the slot's key
SLOT_SOURCE = "{}.source"
SLOT_URL = "{}.url"
SLOT_ASSET = "{}.asset"
SLOT_REMOVE = "{}.remove"
SENT_KEY = "compose.sent"  # the digest of the bodies last sent whole: Submit waits for a change or "Send again"
AGAIN_KEY = "compose.send_again"
ENDED_KEY = "compose.ended"  # tasks of the last submission that ended since the page last said so
