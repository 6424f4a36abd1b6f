"""Share links: a guest review of some versions, reachable without a key (issue 25).

A share belongs to the project scope of the person who made it (`_writes_as`: on a Dailies service
the project's scope, elsewhere the key's). It names the tasks it shows and nothing else; the guest
page reads and writes through a view of that scope limited to those task ids (`guest_view`).

Security:
- the link's token is `secrets.token_urlsafe(32)` (256 bits); only its SHA-256 is stored, and a
  token is found by its hash alone (the short public `id`, used to list and revoke, opens nothing);
- expiry, revocation and a lock are checked by `open_share` on every request (the guest page calls
  it on every run), against a clock the caller may give (tests fake it);
- a passphrase is stored as PBKDF2-SHA256 with a random salt; `MAX_ATTEMPTS` wrong ones in a row lock
  the share for `LOCK_SECONDS` (counted in the row, so in every dashboard of a team);
- at creation each shared task must have a kept video copy in the scope: the share plays that copy,
  so it outlives the service's 24 h result links.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import math
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from sqlalchemy import func, insert, or_, select
from sqlalchemy.exc import IntegrityError

from ..client import Client, DailiesError, UnsupportedEndpointError
from ..spec.notifications import GUEST_AUTHOR, GUEST_SUFFIX
from ..spec.results import VIDEO_NAME
from .comments import Comment
from .kept import KeptFile, KeptFilesMixin
from .notices import NoticesMixin
from .scope import Scope
from .statuses import StatusChange

MAX_ATTEMPTS = 5
LOCK_SECONDS = 15 * 60
MAX_TOKEN_CHARS = 128  # a token is 43 characters; anything much longer is not one
PBKDF2_ITERATIONS = 200_000
MAX_GUEST_NAME = 60


SHARE_ID_TRIES = 8
GUEST_COMMENTS_PER_WINDOW = 60
GUEST_COMMENT_WINDOW_S = 600
# Status changes, counted as comments are: a person reviewing a share comes nowhere near.
GUEST_STATUSES_PER_WINDOW = 60
GUEST_STATUS_WINDOW_S = 600


def is_guest_author(author: str) -> bool:
    return author == GUEST_AUTHOR or author.endswith(GUEST_SUFFIX)


# Asks the service for a share's guest grant: (its versions, when it ends) -> the grant, or None.
NoticeGrant = Callable[[tuple[str, ...], int], "str | None"]


def ask_notice_grant(client: Client, said: list[str]) -> NoticeGrant:
    """A share's guest grant from a Dailies service; None, with why in `said`, from one without
    notifications (the real Ark) or one that does not answer now: the share is made all the same."""

    def ask(task_ids: tuple[str, ...], expires_at: int) -> str | None:
        try:
            return client.guest_grant(task_ids, expires_at)
        except UnsupportedEndpointError:
            said.append("This service sends no notifications: a guest's comments are told to no one.")
        except DailiesError as exc:
            said.append(f"The service gave no grant for notifications ({exc}): a guest's comments on this "
                        "share are told to no one.")
        return None

    return ask


def new_share_id() -> str:
    """A share's public id (what lists and `dailies share revoke` name; never enough to open it)."""
    return secrets.token_hex(4)


class ShareState(StrEnum):
    """Where a share stands; a token that names no share is UNKNOWN."""

    ACTIVE = "active"
    REVOKED = "revoked"
    EXPIRED = "expired"
    LOCKED = "locked"
    UNKNOWN = "unknown"


class ShareRefused(Exception):
    """Why a token opens nothing: `reason` is a ShareState other than ACTIVE."""

    def __init__(self, reason: str, until: float | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.until = until


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def _hash_passphrase(passphrase: str, salt: bytes | None = None) -> str:
    salt = salt if salt is not None else secrets.token_bytes(16)
    digest = hashlib.pbkdf2_hmac("sha256", passphrase.encode("utf-8"), salt, PBKDF2_ITERATIONS)
    return f"pbkdf2_sha256${PBKDF2_ITERATIONS}${salt.hex()}${digest.hex()}"


def _passphrase_matches(stored: str, passphrase: str) -> bool:
    try:
        kind, iterations, salt, digest = stored.split("$")
    except ValueError:
        return False
    if kind != "pbkdf2_sha256":
        return False
    found = hashlib.pbkdf2_hmac("sha256", passphrase.encode("utf-8"), bytes.fromhex(salt), int(iterations))
    return hmac.compare_digest(found.hex(), digest)


@dataclass(frozen=True)
class Share:
    id: str
    scope: str  # the scope's name (Scope.name)
    scope_base_url: str
    scope_key: str  # Scope.key_fingerprint: `project:<name>` on a Dailies service
    task_ids: tuple[str, ...]
    created_by: str
    created_at: float
    expires_at: float
    prompts: dict[str, str] = field(default_factory=dict)  # taken at creation (the guest has no client)
    has_passphrase: bool = False
    allow_comments: bool = False
    allow_status: bool = False
    hide_prompt: bool = False
    revoked_at: float | None = None
    failed_attempts: int = 0
    locked_until: float | None = None
    # What the share's page tells the service of its guests' comments with (a bearer credential of its
    # own: kept on the dashboard's side, never sent to a guest's browser); None: told to no one.
    notice_grant: str | None = field(default=None, repr=False)

    def state(self, now: float) -> ShareState:
        if self.revoked_at is not None:
            return ShareState.REVOKED
        if now >= self.expires_at:
            return ShareState.EXPIRED
        if self.locked_until is not None and now < self.locked_until:
            return ShareState.LOCKED
        return ShareState.ACTIVE

    def scope_of(self, author: str = "") -> Scope:
        return Scope(self.scope_base_url, self.scope_key, author=author)


class SharesMixin(KeptFilesMixin, NoticesMixin):
    """Stands on KeptFilesMixin (a share plays kept copies) and NoticesMixin (a guest's comments and
    statuses, and what they tell)."""

    def _share(self, row: Any) -> Share:
        return Share(row.id, row.scope, row.scope_base_url, row.scope_key, tuple(json.loads(row.task_ids)),
                     row.created_by, row.created_at, row.expires_at, json.loads(row.prompts or "{}"),
                     bool(row.passphrase), bool(row.allow_comments), bool(row.allow_status), bool(row.hide_prompt),
                     row.revoked_at, row.failed_attempts, row.locked_until, row.notice_grant)

    def create_share(self, task_ids: list[str], expires_in: float, *, passphrase: str | None = None,
                     allow_comments: bool = False, allow_status: bool = False, hide_prompt: bool = False,
                     prompts: dict[str, str] | None = None, now: float | None = None,
                     notice_grant: NoticeGrant | None = None) -> tuple[Share, str]:
        """A new share of these tasks in this view's scope, made by this view's author; (share, token).
        The token is shown once: only its hash is kept. Each task must have a kept video copy here.
        `notice_grant(task_ids, expires_at)`: the service's guest grant for it (`ask_notice_grant`)."""
        if self._scope is None:
            raise ValueError("only a scoped view (a project's, or a key's) makes shares")
        ids = list(dict.fromkeys(t for t in task_ids if t))
        if not ids:
            raise ValueError("a share needs at least one task")
        if not expires_in > 0:
            raise ValueError("a share expires in a positive time")
        missing = [t for t in ids if VIDEO_NAME not in self.kept(t)]
        if missing:
            raise ValueError("no kept copy of " + ", ".join(missing) + ": keep the video first")
        now = time.time() if now is None else now
        grant = notice_grant(tuple(ids), math.ceil(now + expires_in)) if notice_grant is not None else None
        token = secrets.token_urlsafe(32)
        for _attempt in range(SHARE_ID_TRIES):
            share = Share(new_share_id(), self._writes_as, self._scope.base_url, self._scope.key_fingerprint,
                          tuple(ids), self.author, now, now + expires_in,
                          {t: p for t, p in (prompts or {}).items() if t in ids and p},
                          bool(passphrase), allow_comments, allow_status, hide_prompt, notice_grant=grant)
            row = {"scope": share.scope, "id": share.id, "token_hash": token_hash(token),
                   "scope_base_url": share.scope_base_url, "scope_key": share.scope_key,
                   "task_ids": json.dumps(list(share.task_ids)), "prompts": json.dumps(share.prompts),
                   "created_by": share.created_by, "created_at": share.created_at, "expires_at": share.expires_at,
                   "passphrase": _hash_passphrase(passphrase) if passphrase else None,
                   "allow_comments": int(allow_comments), "allow_status": int(allow_status),
                   "hide_prompt": int(hide_prompt), "revoked_at": None, "failed_attempts": 0, "locked_until": None,
                   "notice_grant": grant}
            # A plain INSERT: the journal's usual write replaces a row with the same key, and an id
            # already taken (by any project's share) must never replace that share.
            try:
                with self._store.writer.begin() as conn:
                    conn.execute(insert(self._table("shares")), [row])
            except IntegrityError:
                continue
            return share, token
        raise RuntimeError(f"no free share id after {SHARE_ID_TRIES} tries")

    def shares(self) -> list[Share]:
        """This view's scope's shares (the unscoped view: every share), newest first."""
        table = self._table("shares")
        rows = self._read(select(table).where(self._visible(table)).order_by(table.c.created_at.desc()))
        return [self._share(r) for r in rows]

    def share(self, share_id: str) -> Share | None:
        table = self._table("shares")
        rows = self._read(select(table).where(self._visible(table), table.c.id == share_id))
        return self._share(rows[0]) if rows else None

    def revoke_share(self, share_id: str, now: float | None = None) -> bool:
        """Revoke a share of this view's scope (the unscoped view: any); False when there is none such."""
        table = self._table("shares")
        with self._store.writer.begin() as conn:
            done = conn.execute(table.update().where(self._visible(table), table.c.id == share_id,
                                                     table.c.revoked_at.is_(None))
                                .values(revoked_at=time.time() if now is None else now)).rowcount
        return bool(done)

    def open_share(self, token: str, now: float | None = None) -> Share:
        """The share this token opens, now: ShareRefused when none does (unknown, revoked, expired,
        locked). Looked up by the token's hash only, whatever the view's scope."""
        now = time.time() if now is None else now
        if not isinstance(token, str) or not token or len(token) > MAX_TOKEN_CHARS:
            raise ShareRefused(ShareState.UNKNOWN)
        table = self._table("shares")
        rows = self._read(select(table).where(table.c.token_hash == token_hash(token)))
        if not rows:
            raise ShareRefused(ShareState.UNKNOWN)
        share = self._share(rows[0])
        state = share.state(now)
        if state != ShareState.ACTIVE:
            raise ShareRefused(state, share.locked_until if state == ShareState.LOCKED else None)
        return share

    def check_passphrase(self, share: Share, passphrase: str, now: float | None = None) -> bool:
        """Whether the passphrase opens the share; a wrong one counts, and the MAX_ATTEMPTS-th in a row
        locks the share for LOCK_SECONDS (ShareRefused('locked') while it is)."""
        now = time.time() if now is None else now
        table = self._table("shares")
        with self._store.writer.begin() as conn:
            # The row locked (PostgreSQL; SQLite's BEGIN IMMEDIATE already serialises writers), so
            # attempts at once on several dashboards each count.
            row = conn.execute(select(table).where(table.c.id == share.id).with_for_update()).first()
            if row is None:
                raise ShareRefused(ShareState.UNKNOWN)
            current = self._share(row)
            state = current.state(now)
            if state != ShareState.ACTIVE:
                raise ShareRefused(state, current.locked_until if state == ShareState.LOCKED else None)
            if not row.passphrase:
                return True
            if _passphrase_matches(row.passphrase, passphrase or ""):
                if row.failed_attempts:  # no write for a guest who only ever typed it right
                    conn.execute(table.update().where(table.c.id == share.id).values(failed_attempts=0))
                return True
            failed = row.failed_attempts + 1
            if failed >= MAX_ATTEMPTS:
                conn.execute(table.update().where(table.c.id == share.id)
                             .values(failed_attempts=0, locked_until=now + LOCK_SECONDS))
            else:
                conn.execute(table.update().where(table.c.id == share.id).values(failed_attempts=failed))
            return False

    def _guest_status_changes(self, conn, task_ids: tuple[str, ...], since: float) -> int:
        """Status changes by guests (any share's) of these tasks in this view's scope after `since`."""
        table = self._table("statuses")
        guest = or_(table.c.author == GUEST_AUTHOR, table.c.author.endswith(GUEST_SUFFIX, autoescape=True))
        return conn.execute(select(func.count()).select_from(table).where(
            self._visible(table), table.c.task_id.in_(list(task_ids)), table.c.at > since, guest)).scalar_one()

    def guest_view(self, share: Share, guest_name: str = "") -> GuestView:
        """What a guest of `share` may read and write: its tasks only, in its scope, signed
        '<name> (guest)'."""
        name = " ".join(guest_name.split())[:MAX_GUEST_NAME]
        author = f"{name}{GUEST_SUFFIX}" if name else GUEST_AUTHOR
        return GuestView(share, self.scoped(share.scope_of(author)))


class GuestView:
    """A share's window on its scope: every call takes a task id and refuses one not in the share."""

    def __init__(self, share: Share, view: SharesMixin) -> None:
        self.share = share
        self._view = view

    @property
    def author(self) -> str:
        return self._view.author

    def _check(self, task_id: str) -> str:
        if task_id not in self.share.task_ids:
            raise PermissionError(f"{task_id!r} is not in this share")
        return task_id

    def kept(self, task_id: str) -> dict[str, KeptFile]:
        return self._view.kept(self._check(task_id))

    def prompt(self, task_id: str) -> str | None:
        self._check(task_id)
        if self.share.hide_prompt:
            return None
        return self.share.prompts.get(task_id)

    def status_of(self, task_id: str) -> str:
        return self._view.status_of(self._check(task_id))

    def comments(self, task_id: str) -> list[Comment]:
        """The version's thread, everyone's (the team's and guests'), for a share that takes comments: a
        guest invited to comment joins the conversation and sees who said what; a share that only
        shows the pictures shows none of the team's notes."""
        if not self.share.allow_comments:
            return []
        return self._view.comments([self._check(task_id)]).get(task_id, [])

    def add_comment(self, task_id: str, body: str, timecode: float | None = None,
                    now: float | None = None, *, frame: int | None = None, out_frame: int | None = None,
                    drawing: str | list | None = None) -> Comment:
        if not self.share.allow_comments:
            raise PermissionError("this share does not take comments")
        self._check(task_id)
        now = time.time() if now is None else now
        # A link anyone may hold: its guests together post at most so many comments a window, so a
        # script cannot flood the project's journal (a person noting a cut comes nowhere near).
        recent = [c for thread in self._view.comments(self.share.task_ids).values() for c in thread
                  if c.created_at > now - GUEST_COMMENT_WINDOW_S and is_guest_author(c.author)]
        if len(recent) >= GUEST_COMMENTS_PER_WINDOW:
            raise ValueError(f"this share's guests have posted {len(recent)} comments in the last "
                             f"{GUEST_COMMENT_WINDOW_S // 60} minutes: wait a few minutes before posting more")
        return self._view.add_comment(task_id, body, timecode=timecode, at=now, frame=frame, out_frame=out_frame,
                                      drawing=drawing)

    def comment_notice(self, comment: Comment) -> dict[str, Any]:
        """What a guest's comment tells the project's notifications (sent with the share's grant)."""
        return self._view.comment_notice(comment)

    def status_notice(self, change: StatusChange) -> dict[str, Any]:
        return self._view.status_notice(change)

    def set_status(self, task_id: str, status: str, now: float | None = None) -> StatusChange | None:
        """The version's new status, signed by the guest; None when it had it already (nothing written)."""
        if not self.share.allow_status:
            raise PermissionError("this share does not take statuses")
        self._check(task_id)
        return self._view.set_status(task_id, status, at=now, admit=self._admit_status)

    def _admit_status(self, conn, when: float) -> None:
        """As for comments: a link anyone may hold sets at most so many statuses a window, its guests
        together. Counted in the change's transaction, the share's other status writers held off, so
        guests at once on several dashboards cannot all pass the last free place."""
        self._view._store.lock(conn, "share-statuses", self.share.scope, self.share.id)
        done = self._view._guest_status_changes(conn, self.share.task_ids, when - GUEST_STATUS_WINDOW_S)
        if done >= GUEST_STATUSES_PER_WINDOW:
            raise ValueError(f"this share's guests have set {done} statuses in the last "
                             f"{GUEST_STATUS_WINDOW_S // 60} minutes: wait a few minutes before setting more")


def prompts_to_share(view, task_ids, stored_prompt=None) -> dict[str, str]:
    """What a share copies of each task's prompt (the guest has no client to ask): the journal's
    submission, else `stored_prompt(task_id)` (the service's stored request), when there is one."""
    out: dict[str, str] = {}
    for task_id in task_ids:
        submission = view.submission(task_id)
        prompt = submission.prompt if submission is not None else None
        if not prompt and stored_prompt is not None:
            prompt = stored_prompt(task_id)
        if prompt:
            out[task_id] = prompt
    return out
