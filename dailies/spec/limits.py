"""Every numeric limit of the specification (sections 2.1, 4.2 and 8), written once.

Other modules import these names; no other module spells these numbers.
"""

from __future__ import annotations

MB = 1024 * 1024
DAY = 24 * 3600

# 2.1 request fields
EXECUTION_EXPIRES_MIN = 3600
EXECUTION_EXPIRES_MAX = 259200
EXECUTION_EXPIRES_DEFAULT = 172800
PRIORITY_MIN = 0
PRIORITY_MAX = 9
SEED_MIN = -1
SEED_MAX = 4294967295
SEED_DEFAULT = -1
SAFETY_IDENTIFIER_MAX_CHARS = 64
DURATION_DEFAULT = 5
# "-1" asks the model to pick a duration itself (DESIGN.md section 3).
DURATION_MODEL_PICKS = -1
FRAMES_PER_SECOND = 24

# 2.2 prompt guidance (a recommendation, shown to people, never enforced)
PROMPT_RECOMMENDED_CJK_CHARS = 500
PROMPT_RECOMMENDED_ENGLISH_WORDS = 1000

# 4.2 list query
PAGE_NUM_MIN = 1
PAGE_NUM_MAX = 500
PAGE_NUM_DEFAULT = 1
PAGE_SIZE_MIN = 1
PAGE_SIZE_MAX = 500
PAGE_SIZE_DEFAULT = 20
# Not in the spec: ids per `filter.task_ids`, and the length of one. A page holds at most 500
# tasks, so more ids than that cannot be shown at once; and one bound keeps a list request (and
# its SQL, one bound parameter per id) small whatever the query string holds.
TASK_IDS_FILTER_MAX = 500
TASK_ID_MAX_CHARS = 128

# 8 material limits
IMAGE_MAX_BYTES = 30 * MB  # "smaller than 30 MB": the limit itself is refused
IMAGE_ASPECT_MIN = 0.4
IMAGE_ASPECT_MAX = 2.5
IMAGE_SIDE_MIN = 300
IMAGE_SIDE_MAX = 6000
REQUEST_BODY_MAX_BYTES = 64 * MB
VIDEO_MAX_BYTES = 200 * MB
VIDEO_DURATION_MIN = 2.0
VIDEO_DURATION_MAX = 15.0
# Audio follows the video limits (issue 2, point 4).
AUDIO_MAX_BYTES = VIDEO_MAX_BYTES
AUDIO_DURATION_MIN = VIDEO_DURATION_MIN
AUDIO_DURATION_MAX = VIDEO_DURATION_MAX
REFERENCE_VIDEOS_MAX = 3
REFERENCE_VIDEOS_TOTAL_SECONDS_MAX = 15.0
# Not in the spec: a video's frame is held to an image's largest side, so a few bytes of codec header
# cannot make the renderer decode frames of gigabytes; every result of this service (4k 21:9 is 4412
# px wide) and of the real one fits.
VIDEO_SIDE_MAX = IMAGE_SIDE_MAX
# A video of d seconds, as the spec counts its frames (24 d + 1, the token formula's), lasts d + 1/24 s:
# a length is held to a limit with that one frame to spare (each video's, in a total), so a 15 s result
# of this service or the real one can be a 15 s reference.
MEDIA_LENGTH_SPARE_S = 0.05
# The most seconds of reference video a request can carry (each with its frame to spare).
REFERENCE_VIDEOS_LONGEST_S = REFERENCE_VIDEOS_TOTAL_SECONDS_MAX + MEDIA_LENGTH_SPARE_S * REFERENCE_VIDEOS_MAX
# Not in the spec: the real service's multimodal reference mode takes up to 9 images and 3 audio clips.
REFERENCE_IMAGES_MAX = 9
REFERENCE_AUDIOS_MAX = 3

RECORD_RETENTION_SECONDS = 7 * DAY
RESULT_URL_VALIDITY_SECONDS = 1 * DAY
CALLBACK_MAX_RETRIES = 3

# Not in the spec: how hostile a JSON body may be before it is refused unparsed (400 `body`). A
# task request nests 4 levels deep and holds a few hundred tokens at most; without bounds a
# 64 MB body of `[[[[...` overflows the parser's stack, and one of `[],[],...` builds millions
# of objects. Tokens are punctuation (`[]{},:`) and strings.
JSON_DEPTH_MAX = 64
JSON_TOKENS_MAX = 10_000
# No field takes an integer of more than 10 digits; Python refuses to convert one of more than
# 4,300 (a ValueError that used to surface as a 500), and the conversion is quadratic below that.
JSON_NUMBER_DIGITS_MAX = 100
# Not in the spec: the length of a URL other than a data URL (signed download URLs run to 2 KB).
URL_MAX_CHARS = 8192

# Not in the spec: a task whose render was lost this many times (its worker died or stopped
# beating while rendering it) fails with `TaskAttemptsExhausted` instead of being run again.
TASK_ATTEMPTS_MAX = 3

# DESIGN.md section 3: more than this many queued tasks in one project is a 429.
QUEUED_TASKS_PER_PROJECT_MAX = 120
IDEMPOTENCY_WINDOW_SECONDS = 1 * DAY
# Not in the spec: an Idempotency-Key is stored with each create; a UUID is 36 characters.
IDEMPOTENCY_KEY_MAX_CHARS = 255
