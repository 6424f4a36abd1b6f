"""The dashboard's own record: SQLite in the data directory (the default), or PostgreSQL shared by the
dashboards of a team.

The list endpoint returns neither prompts nor inputs (spec 2.5), result URLs die after 24 hours
and records after 7 days. The journal keeps what the dashboard sent (prompt, inputs with
thumbnails, parameters, batch), what reviewers decided (statuses with their history, stars,
comments) and where kept copies of videos are, keyed by task id, for as long as the user wants them.

One dashboard serves many people, each with their own key, so every row belongs to a scope: the
connection that wrote it (base URL + fingerprint of the key, never the key). `journal.scoped(scope)`
is the view a dashboard session uses: it reads and writes its own scope only, and keeps its files
(kept videos, stored uploads) in a folder of its own. Two keys of one project therefore keep two
journals: the journal records what a person did, not what the project owns.

Rows written before scopes existed (schema version 0) have the empty scope. They are visible only
to a view made with `include_unscoped=True`, which the dashboard gives to its own default
connection in single-user mode (the key `dailies up` hands it), since that is who wrote them; a team
dashboard has no default key, so nobody sees them there. `Journal(path)` itself is the unscoped view
(every scope: tests, maintenance): where several scopes hold a row for one task, it prefers a
scoped row to an old one, then the latest written.

Where it lives (`Journal(path, database_url=..., storage=...)`; each left out is read from
DAILIES_DATABASE_URL / DAILIES_STORAGE, as `dailies dashboard` passes them; "" means the default):
- the rows: the SQLite file `path` (tables `submissions`, `reviews`, ..., as ever), or, given a
  database URL, tables `journal_submissions`, `journal_reviews`, ... in that database, beside the
  service's own if it is the service's database. The same SQLAlchemy Core statements run on both.
  Several dashboards may start at once: one runs the journal's migrations (dailies/journal/migrations/,
  version table `journal_version`), in one `BEGIN IMMEDIATE` transaction on SQLite, under an advisory
  lock on PostgreSQL; the others find them done.
- the files (kept copies, stored uploads): folders beside `path`, or, given `s3://bucket/prefix`,
  objects in that bucket (dailies.journal.bucket), so every dashboard of the team plays a copy any
  of them kept. A kept file's row says where it is, so copies kept before a bucket was configured
  keep playing from the folder.

Its parts: `schema` (the tables, the engine, the migrations), `scope`, `view` (what every
part stands on: the store, the scope, the reads and writes), `submissions` (batches, submissions),
`inputs` (the uploads a submission sent, stored once), `records` (the last record seen of each task),
`statuses` (review status per version with its history, each person's stars), `comments` (threads with
timecodes, replies, resolution), `shots` (versions of a shot), `adopt` (a per-key journal brought into a
project's scope, `Scope.of_project`, and the previous release's per-key verdicts, stars and notes, table
`reviews`, turned into statuses, stars and comments), `kept` (kept copies), `bucket` (the team's bucket),
`preferences`, `shares` (share links and a guest's view), `inbox` (what needs a person: mentions, replies,
news of their versions; what they have read).

Each part is a class that inherits the parts it stands on (`View` at the bottom; `ShotsMixin` reads
`KeptFilesMixin`'s copies, `SharesMixin` checks kept copies and writes statuses and comments), so every
call between parts is one the type checker sees; `Journal` is all of them.
"""

from __future__ import annotations

from .adopt import AdoptMixin
from .authors import AuthorsMixin
from .comments import Comment, thread
from .inbox import InboxItem, InboxMixin
from .inputs import STORED_PREFIX
from .kept import KeptFile
from .notices import NoticesMixin
from .preferences import PreferencesMixin
from .records import RecordsMixin
from .schema import POSTGRES_PREFIX, UNSCOPED
from .scope import Scope
from .shares import Share, ShareRefused, SharesMixin
from .shots import ShotLink, ShotsMixin, group_versions, version_numbers
from .statuses import STATUS_LABELS, STATUSES, StatusChange, average
from .submissions import InputRef, Submission, SubmissionsMixin
from .view import DATABASE_ENV, STORAGE_ENV

__all__ = [
    "InboxItem",
    "STATUSES",
    "STATUS_LABELS",
    "Comment",
    "ShotLink",
    "StatusChange",
    "average",
    "group_versions",
    "version_numbers",
    "thread",
    "DATABASE_ENV",
    "POSTGRES_PREFIX",
    "STORAGE_ENV",
    "STORED_PREFIX",
    "UNSCOPED",
    "InputRef",
    "Journal",
    "KeptFile",
    "Scope",
    "Share",
    "ShareRefused",
    "Submission",
]


class Journal(AuthorsMixin, SubmissionsMixin, RecordsMixin, PreferencesMixin, AdoptMixin, ShotsMixin, SharesMixin,
              InboxMixin, NoticesMixin):
    """A view of the journal: one scope's rows (`scoped`), or every scope's (the constructor).

    `database_url` and `storage` default to DAILIES_DATABASE_URL and DAILIES_STORAGE; "" (or
    nothing set) keeps the rows in the SQLite file `path` and the files in folders beside it."""
