"""Notifications out: which happenings of a project reach which of its targets, and the words they carry.

A target is a place a project's notifications go: a signed webhook, a Slack or Mattermost incoming
webhook, an e-mail address. A target of the project (`owner` "") takes every happening of the kinds it
lists; a person's own target takes only what concerns that person, under the strongest reason it has
(mentioned, replied to, their shot commented on or given a status, their task ended, their budget
reached), and never what that person did. Pure: the service routes with it, the dashboard offers its
choices, and a burst of happenings folded into one message is worded here.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any

from dailies.spec.mentions import mentioned
from dailies.spec.problems import MISSING, Problem
from dailies.spec.urls import callback_url_problem

TARGET_KINDS = ("webhook", "slack", "mattermost", "email")
# What a target may ask for; a happening's own kind is one of the first two or the last four.
EVENT_KINDS = ("comment", "status", "mention", "reply", "task_succeeded", "task_failed", "budget")
POSTED_KINDS = ("comment", "status")  # what the dashboard tells the service; the rest it sees itself
EVENT_TITLES = {
    "comment": "Comments", "status": "Review statuses", "mention": "Mentions of me",
    "reply": "Replies to my comments", "task_succeeded": "Tasks succeeded", "task_failed": "Tasks failed",
    "budget": "Budgets at 80% and 100%",
}
BUDGET_THRESHOLDS = (80, 100)

MAX_TEXT_CHARS = 2_000  # of one happening's text; a comment is cut there in the message
MAX_NAME_CHARS = 200
MAX_ADDRESS_CHARS = 2_048
MAX_FOLDED = 50  # happenings in one message; the next burst starts another
MAX_TARGETS_PER_PROJECT = 100
# How a share's guest signs, in the journal and in what is told of them: never a member's name.
GUEST_AUTHOR = "Guest"  # a guest who gave no name
GUEST_SUFFIX = " (guest)"
# A guest grant (service/access/guest_grants.py): what a share's page may tell of without a key.
GRANT_MAX_TASKS = 200
GRANT_MAX_LIFETIME_S = 366 * 86_400
GUEST_EVENTS_PER_MINUTE = 30  # per grant: a share's guests together
_EMAIL = re.compile(r"^[^@\s<>,;:\"]{1,64}@[A-Za-z0-9](?:[A-Za-z0-9.-]{0,251}[A-Za-z0-9])?$")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True)
class Target:
    id: str
    project: str
    kind: str
    address: str
    events: tuple[str, ...]
    owner: str = ""  # "" for the project's own channel; else the person it belongs to

    def as_dict(self) -> dict[str, Any]:
        return {"id": self.id, "kind": self.kind, "address": self.address, "events": list(self.events),
                "owner": self.owner or None}


@dataclass(frozen=True)
class Happening:
    """Something that happened in a project that people may want to hear of."""

    kind: str  # POSTED_KINDS, task_succeeded, task_failed or budget
    task_id: str = ""
    shot: str = ""  # what people call the shot: its prompt's start, or its title
    text: str = ""  # the comment, or a task's error, or the budget's figures
    actor: str = ""  # who did it ("" for the service itself)
    maker: str = ""  # whose shot, task or budget it is
    reply_to: str = ""  # the author of the comment this one answers
    status: str = ""  # a review status given
    link: str = ""
    at: float = 0.0
    mentions: tuple[str, ...] = field(default=())  # filled by `with_mentions`

    def with_mentions(self, people: Iterable[str]) -> Happening:
        names = tuple(mentioned(self.text, people)) if self.kind == "comment" else ()
        return Happening(**{**asdict(self), "mentions": names})


def _text(body: Mapping[str, Any], key: str, limit: int, problems: list[Problem], *, required: bool = False) -> str:
    value = body.get(key)
    if value is None or value == "":
        if required:
            problems.append(Problem(key, f"is required: give the {key.replace('_', ' ')}", MISSING))
        return ""
    if not isinstance(value, str):
        problems.append(Problem(key, f"must be a string, not {type(value).__name__}"))
        return ""
    if len(value) > limit:
        problems.append(Problem(key, f"is {len(value):,} characters long; at most {limit:,}"))
        return ""
    return value


def check_target(body: object, owner_allowed: bool = True) -> tuple[list[Problem], dict[str, Any]]:
    """Problems of a new target's body, and its fields (kind, address, events, owner) when there are none."""
    if not isinstance(body, Mapping):
        return [Problem("", "the body must be a JSON object with kind, address and events")], {}
    problems: list[Problem] = []
    kind = _text(body, "kind", 20, problems, required=True)
    if kind and kind not in TARGET_KINDS:
        problems.append(Problem("kind", f"{kind!r} is not a kind of target; one of {', '.join(TARGET_KINDS)}"))
    address = _text(body, "address", MAX_ADDRESS_CHARS, problems, required=True).strip()
    if address and kind == "email":
        if not _EMAIL.match(address):
            problems.append(Problem("address", f"{address[:80]!r} is not an e-mail address (name@domain)"))
    elif address and kind in TARGET_KINDS:
        if problem := callback_url_problem(address, "address"):
            problems.append(problem)
    events = body.get("events")
    if not isinstance(events, list) or not events or not all(isinstance(e, str) for e in events):
        problems.append(Problem("events", f"must be a non-empty list of event kinds ({', '.join(EVENT_KINDS)})",
                                MISSING if events is None else "InvalidParameter"))
        events = []
    else:
        for i, name in enumerate(events):
            if name not in EVENT_KINDS:
                problems.append(Problem(f"events[{i}]", f"{name[:40]!r} is not an event kind; one of "
                                        f"{', '.join(EVENT_KINDS)}"))
    owner = _text(body, "owner", MAX_NAME_CHARS, problems).strip()
    if owner and not owner_allowed:
        problems.append(Problem("owner", "this key is a member's: its targets are that member's or the "
                                "project's, never another person's"))
    for name, value in (("address", address), ("owner", owner)):
        if _CONTROL.search(value) and not any(p.path == name for p in problems):
            problems.append(Problem(name, "holds control characters (a line break, a tab, NUL)"))
    return problems, {"kind": kind, "address": address, "events": tuple(dict.fromkeys(events)), "owner": owner}


def check_posted(body: object) -> tuple[list[Problem], Happening | None]:
    """A happening the dashboard tells of (a comment, a review status): problems, or the happening."""
    if not isinstance(body, Mapping):
        return [Problem("", "the body must be a JSON object with kind, task_id and text")], None
    problems: list[Problem] = []
    kind = _text(body, "kind", 20, problems, required=True)
    if kind and kind not in POSTED_KINDS:
        problems.append(Problem("kind", f"{kind!r} is not told by a client; one of {', '.join(POSTED_KINDS)}"))
    fields = {key: _text(body, key, MAX_NAME_CHARS, problems) for key in ("task_id", "actor", "maker",
                                                                          "reply_to", "status")}
    shot = _text(body, "shot", MAX_TEXT_CHARS, problems)
    text = _text(body, "text", 100_000, problems)
    link = _text(body, "link", MAX_ADDRESS_CHARS, problems)
    if link and not link.startswith(("http://", "https://")):
        problems.append(Problem("link", "must be an http(s) URL of the dashboard"))
    if not fields["task_id"]:
        problems.append(Problem("task_id", "is required: the version the comment or status is on", MISSING))
    if kind == "status" and not fields["status"]:
        problems.append(Problem("status", "is required for a status: the status given", MISSING))
    if problems:
        return problems, None
    return [], Happening(kind=kind, shot=shot, text=text, link=link, task_id=fields["task_id"],
                         actor=fields["actor"], maker=fields["maker"], reply_to=fields["reply_to"],
                         status=fields["status"])


def reason_for(happening: Happening, person: str) -> str | None:
    """The strongest reason `happening` concerns `person`, as an event kind, or None."""
    if not person or person.casefold() == happening.actor.casefold():
        return None
    same = person.casefold()
    if happening.kind == "comment":
        if any(name.casefold() == same for name in happening.mentions):
            return "mention"
        if happening.reply_to.casefold() == same:
            return "reply"
    return happening.kind if happening.maker.casefold() == same else None


def route(happening: Happening, targets: Iterable[Target]) -> list[tuple[Target, str]]:
    """Each target that takes `happening`, with the kind it takes it as."""
    routed = []
    for target in targets:
        kind = happening.kind if not target.owner else reason_for(happening, target.owner)
        if kind and kind in target.events:
            routed.append((target, kind))
    return routed


def item(happening: Happening, as_kind: str) -> dict[str, Any]:
    """What a message keeps of one happening (stored in the queue, worded when it is sent)."""
    kept = {key: value for key, value in asdict(happening).items() if value not in ("", (), 0.0)}
    kept["text"] = happening.text[:MAX_TEXT_CHARS]
    kept["as"] = as_kind
    kept["mentions"] = list(happening.mentions)
    return kept


# ---------- words ----------


def _line(entry: Mapping[str, Any], link_as: str) -> str:
    """One happening in one line; `link_as` 'slack' (<url|label>), 'markdown' ([label](url)) or 'plain'."""
    shot = entry.get("shot") or entry.get("task_id") or "a shot"
    shot = shot if len(shot) <= 80 else shot[:79] + "…"
    link = entry.get("link") or ""
    if link and link_as == "slack":
        where = f"<{link}|{_slack_escape(shot)}>"
    elif link and link_as == "markdown":
        where = f"[{shot.replace(']', ')')}]({link})"
    elif link:
        where = f"{shot} ({link})"
    else:
        where = shot
    actor = entry.get("actor") or "Someone"
    text = (entry.get("text") or "").strip()
    said = f": {text if len(text) <= 300 else text[:299] + '…'}" if text else ""
    match entry.get("as"):
        case "mention":
            return f"{actor} mentioned you on {where}{said}"
        case "reply":
            return f"{actor} replied to you on {where}{said}"
        case "comment":
            return f"{actor} commented on {where}{said}"
        case "status":
            return f"{actor} set {where} to {(entry.get('status') or 'a new status').replace('_', ' ')}"
        case "task_succeeded":
            return f"Task {entry.get('task_id')} succeeded: {where}"
        case "task_failed":
            return f"Task {entry.get('task_id')} failed: {where}{said}"
        case "budget":
            return f"Budget: {text}"
    return f"{actor}: {where}{said}"


def _slack_escape(text: str) -> str:
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("|", "¦")


def subject(project: str, items: Sequence[Mapping[str, Any]]) -> str:
    if len(items) == 1:
        line = _line(items[0], "plain").split(": ", 1)[0]
        return f"[Dailies · {project}] {line}"[:200]
    return f"[Dailies · {project}] {len(items)} updates"


def slack_body(project: str, items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    lines = [f"• {_slack_escape(_line(i, 'plain')) if not i.get('link') else _line(i, 'slack')}" for i in items]
    return {"text": f"*Dailies · {_slack_escape(project)}*\n" + "\n".join(lines)}


def mattermost_body(project: str, items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return {"username": "Dailies", "text": f"**Dailies · {project}**\n" + "\n".join(
        f"- {_line(i, 'markdown')}" for i in items)}


def email_text(project: str, items: Sequence[Mapping[str, Any]]) -> str:
    lines = [_line(i, "plain") for i in items]
    return f"Dailies, project {project}:\n\n" + "\n\n".join(lines) + "\n"


def webhook_body(project: str, target_id: str, items: Sequence[Mapping[str, Any]]) -> dict[str, Any]:
    return {"type": "dailies.notifications", "project": project, "target": target_id, "events": list(items)}


def budget_reached(used: int, amount: int) -> int | None:
    """The highest threshold (percent) that spending `used` of `amount` has reached, or None."""
    if amount <= 0:
        return None
    reached = [t for t in BUDGET_THRESHOLDS if used * 100 >= t * amount]
    return max(reached) if reached else None


def guest_actor(name: str) -> str:
    """How a guest is named in a notification: as the journal signs them, "<name> (guest)"."""
    name = " ".join(name.split())
    if not name or name == GUEST_AUTHOR or name.endswith(GUEST_SUFFIX):
        return name or GUEST_AUTHOR
    return f"{name[:MAX_NAME_CHARS - len(GUEST_SUFFIX)]}{GUEST_SUFFIX}"


def check_grant_request(body: object, now: float) -> tuple[list[Problem], tuple[str, ...], int]:
    """A guest grant asked for: problems, or (the versions it covers, when it expires, unix seconds)."""
    if not isinstance(body, Mapping):
        return [Problem("", "the body must be a JSON object with task_ids and expires_at")], (), 0
    problems: list[Problem] = []
    ids = body.get("task_ids")
    if not isinstance(ids, list) or not ids or not all(isinstance(t, str) and 0 < len(t) <= MAX_NAME_CHARS
                                                       for t in ids):
        problems.append(Problem("task_ids", "must be a non-empty list of task ids",
                                MISSING if ids is None else "InvalidParameter"))
        ids = []
    elif len(ids) > GRANT_MAX_TASKS:
        problems.append(Problem("task_ids", f"a grant covers at most {GRANT_MAX_TASKS} versions; {len(ids)} given"))
    expires = body.get("expires_at")
    if isinstance(expires, bool) or not isinstance(expires, int):
        problems.append(Problem("expires_at", "must be a time in unix seconds (an integer)",
                                MISSING if expires is None else "InvalidParameter"))
        expires = 0
    elif not now < expires <= now + GRANT_MAX_LIFETIME_S:
        problems.append(Problem("expires_at", f"must be in the future and at most {GRANT_MAX_LIFETIME_S // 86_400} "
                                "days away"))
    return problems, tuple(dict.fromkeys(ids)), expires
