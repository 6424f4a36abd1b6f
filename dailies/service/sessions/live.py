"""Live review sessions, kept in the service's database so that every API node answers for them and a
dashboard process that dies loses nothing: the presenter's player posts its state, each follower's
player asks for anything newer than what it has and is answered as soon as there is (a long poll).

Two tokens: the follow token is in the session's link (members and guests holding it may watch; a key
of the project may ask for it); the control token, kept as SHA-256 only, is the presenter's player's
(given to whoever presents, asked again by the presenter's key after a reload). A hand-over makes a new
control token: the old presenter's player is refused from then on and follows.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
import time
from dataclasses import dataclass
from typing import Any

from sqlalchemy import Engine, insert, select, update

from dailies.service.db.tables import live_sessions
from dailies.service.db.writer import writer
from dailies.service.errors import ApiError, from_problems
from dailies.spec import live as L


def _sha(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


@dataclass(frozen=True)
class Session:
    id: str
    project: str
    title: str
    versions: list[dict[str, str]]
    presenter: str
    state: dict[str, Any] | None
    seq: int
    created_by: str
    created_at: int
    ended_at: int | None
    follow_token: str

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "title": self.title, "versions": self.versions, "presenter": self.presenter,
                "state": self.state, "seq": self.seq, "created_by": self.created_by, "created_at": self.created_at,
                "ended": self.ended_at is not None}


def _session(row) -> Session:
    return Session(row.id, row.project, row.title, json.loads(row.versions), row.presenter,
                   json.loads(row.state) if row.state else None, row.seq, row.created_by, row.created_at,
                   row.ended_at, row.follow_token)


NOT_FOUND = "No such live session here (or its link is not this one's)."


class LiveSessions:
    def __init__(self, engine: Engine, clock=time.time) -> None:
        self.engine = engine
        self.write = writer(engine)
        self.clock = clock

    def start(self, project: str, title: str, versions: list[dict[str, str]],
              presenter: str) -> tuple[Session, str, str]:
        """A new session presented by `presenter`; with its control and follow tokens (shown this once)."""
        control, follow = secrets.token_urlsafe(24), secrets.token_urlsafe(24)
        session_id = f"live-{secrets.token_hex(8)}"
        now = self.clock()
        with self.write.begin() as conn:
            conn.execute(insert(live_sessions).values(
                id=session_id, project=project, title=title, versions=json.dumps(versions), presenter=presenter,
                control_sha256=_sha(control), follow_token=follow, state=None, seq=0, created_by=presenter,
                created_at=int(now), updated_at=now, ended_at=None))
        return self.get(session_id, project=project), control, follow

    def _row(self, session_id: str):
        with self.engine.connect() as conn:
            return conn.execute(select(live_sessions).where(live_sessions.c.id == session_id)).first()

    def get(self, session_id: str, *, project: str | None = None, follow_token: str | None = None) -> Session:
        """The session, for a key of its project or the holder of its follow token; else 404."""
        row = self._row(session_id)
        if row is None or not (
                (project is not None and row.project == project)
                or (follow_token is not None
                    and hmac.compare_digest(row.follow_token.encode(), follow_token.encode()))):
            raise ApiError(404, "NotFound", NOT_FOUND, "session_id")
        return _session(row)

    def seq(self, session_id: str) -> int | None:
        with self.engine.connect() as conn:
            return conn.execute(select(live_sessions.c.seq).where(live_sessions.c.id == session_id)).scalar()

    def listed(self, project: str, limit: int = 20) -> list[Session]:
        with self.engine.connect() as conn:
            rows = conn.execute(select(live_sessions).where(live_sessions.c.project == project,
                                                            live_sessions.c.ended_at.is_(None))
                                .order_by(live_sessions.c.created_at.desc()).limit(limit)).all()
        return [_session(r) for r in rows]

    def post_state(self, session_id: str, control_token: str, raw: object) -> int:
        """The presenter's player's state, kept; the session's new `seq`. 403 for any other token."""
        row = self._row(session_id)
        if row is None:
            raise ApiError(404, "NotFound", NOT_FOUND, "session_id")
        if not hmac.compare_digest(row.control_sha256, _sha(control_token or "")):
            raise ApiError(403, "AccessDenied", "This player does not present the session (any more): it was handed "
                           "over, or this is not the presenter's token.", "token")
        if row.ended_at is not None:
            raise ApiError(409, "InvalidAction.SessionEnded", "The session has ended.", "session_id")
        problems, state = L.check_state(raw, [v["task_id"] for v in json.loads(row.versions)])
        if problems:
            raise from_problems(problems)
        # When it was true, on the service's clock (followers place themselves on it, whatever the
        # presenter's machine's clock says): its arrival, a few milliseconds after.
        state["at"] = self.clock() * 1000
        with self.write.begin() as conn:
            # One guarded statement: a state sent with a control token that a hand-over replaced meanwhile is dropped.
            changed = conn.execute(update(live_sessions)
                                   .where(live_sessions.c.id == session_id,
                                          live_sessions.c.control_sha256 == row.control_sha256)
                                   .values(state=json.dumps(state, separators=(",", ":")), seq=live_sessions.c.seq + 1,
                                           updated_at=self.clock())
                                   .returning(live_sessions.c.seq)).scalar()
        if changed is None:
            raise ApiError(403, "AccessDenied", "The session was handed over meanwhile.", "token")
        return int(changed)

    def control(self, session_id: str, project: str, person: str) -> str:
        """A new control token for the session's presenter (their player after a reload); 403 for anyone else."""
        session = self.get(session_id, project=project)
        if not person or person != session.presenter:
            raise ApiError(403, "AccessDenied", f"{session.presenter} presents this session; ask them to hand it over.",
                           "session_id")
        return self._new_control(session_id, session.presenter)

    def hand_over(self, session_id: str, project: str, person: str, to: str) -> Session:
        """The presenter (`person`) hands the session to `to`: a new control token, for `to` to ask for."""
        session = self.get(session_id, project=project)
        if person != session.presenter:
            raise ApiError(403, "AccessDenied", f"Only {session.presenter}, who presents, hands the session over.",
                           "session_id")
        if not to or len(to) > L.MAX_NAME_CHARS:
            raise ApiError(400, "InvalidParameter", "Name the person who presents next.", "to")
        self._new_control(session_id, to)
        return self.get(session_id, project=project)

    def _new_control(self, session_id: str, presenter: str) -> str:
        control = secrets.token_urlsafe(24)
        with self.write.begin() as conn:
            conn.execute(update(live_sessions).where(live_sessions.c.id == session_id)
                         .values(control_sha256=_sha(control), presenter=presenter, seq=live_sessions.c.seq + 1,
                                 updated_at=self.clock()))
        return control

    def end(self, session_id: str, project: str) -> None:
        self.get(session_id, project=project)
        with self.write.begin() as conn:
            conn.execute(update(live_sessions)
                         .where(live_sessions.c.id == session_id, live_sessions.c.ended_at.is_(None))
                         .values(ended_at=int(self.clock()), seq=live_sessions.c.seq + 1, updated_at=self.clock()))
