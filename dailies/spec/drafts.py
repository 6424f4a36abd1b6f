"""The draft flow (generation 1.5 Pro, DESIGN.md section 3): what a final video takes from its
draft, and what it may set again.

A final is created with content `[{"type": "draft_task", "draft_task": {"id": ...}}]`. It renders
the draft's model, prompt and inputs with the draft's choices below, which the final's own
request may not set (the rules refuse them); the fields a final sets again replace the draft's.
The remaining request fields are not a final's at all: `draft` (a final is not a draft), and
`priority` and `tools`, which belong to generation 2.0, which makes no drafts.
"""

from __future__ import annotations

# Taken from the draft: the final's request leaves them unset.
FIELDS_TAKEN_FROM_DRAFT: tuple[str, ...] = ("generate_audio", "seed", "ratio", "duration", "frames", "camera_fixed")
# Set by the final's own request, over the draft's (or the default when left unset).
FIELDS_A_FINAL_SETS: tuple[str, ...] = ("resolution", "watermark", "service_tier", "return_last_frame",
                                        "callback_url", "execution_expires_after", "safety_identifier")
