"""What the Review page shows, gathered and filtered without drawing anything: succeeded results
(listed by the service, or kept after it forgot them), each with its prompt, status, stars and
comments from the journal, grouped into shots (versions of one idea, newest on top).

On a Dailies service the journal is the project's: every member's statuses, stars and comments.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from components.common import data
from components.common.records import cost_of, prompt_of, record_from_json
from dailies.client import APIError
from dailies.journal import Comment, Journal, KeptFile, StatusChange, Submission, average, group_versions
from dailies.journal.shots import version_numbers
from dailies.journal.statuses import APPROVED, CHANGES_REQUESTED, PENDING, REJECTED
from dailies.spec.catalog import Region
from dailies.spec.models import TaskRecord
from dailies.spec.prices import Charge
from dailies.spec.results import VIDEO_NAME
from dailies.spec.statuses import TaskStatus

# A reel's file name starts so, and so does its id when it is kept to be shared (components/review/reel_maker.py):
# never a task id, and never a result of this page.
REEL_PREFIX = "reel-"
# Succeeded tasks fetched per tier; older ones are still reachable through the Tasks page.
LIST_SIZE = 200
ALL = "all"
NEEDS_MY_REVIEW = "needs_me"
MY_CHANGES = "my_changes"
INBOX_FILTERS = {ALL: "All", NEEDS_MY_REVIEW: "Needs my review", MY_CHANGES: "Changes requested on my shots",
                 PENDING: "Pending review", APPROVED: "Approved", CHANGES_REQUESTED: "Changes requested",
                 REJECTED: "Rejected"}


@dataclass
class Result:
    """One succeeded version as the reviewer sees it."""

    task_id: str
    record: TaskRecord | None
    submission: Submission | None = None
    status: StatusChange | None = None
    ratings: dict[str, int] = field(default_factory=dict)
    comments: list[Comment] = field(default_factory=list)
    kept: dict[str, KeptFile] = field(default_factory=dict)
    listed: bool = True  # the service still lists it
    author: str = ""  # who made it, when known (the journal's submission, or the service's stored request)
    stored_prompt: str | None = None  # the service's stored request's prompt, for a task not submitted from here
    # What a Dailies service's ledger charges for it (components/common/charges.py), read for the versions a
    # page shows; without one the record is priced here at `billed_in`'s prices (the service's region).
    charge: Charge | None = None
    billed_in: Region | None = None

    @property
    def created_at(self) -> float:
        if self.record is not None and self.record.created_at is not None:
            return float(self.record.created_at)
        return max((k.kept_at for k in self.kept.values()), default=0.0)

    @property
    def prompt(self) -> str:
        return prompt_of(self.submission) or self.stored_prompt or ""

    @property
    def cost(self) -> str | None:
        """The cost as the Tasks table shows it: the ledger's line when known, else the record priced
        here; None without a record."""
        if self.record is None:
            return None
        return cost_of(self.record, self.submission, self.charge, self.billed_in)

    @property
    def status_name(self) -> str:
        return self.status.status if self.status is not None else PENDING

    @property
    def average_stars(self) -> float | None:
        return average(self.ratings)


@dataclass
class Shot:
    """Versions of one idea, oldest first (`versions[-1]` is the newest, shown on top)."""

    shot_id: str
    versions: list[Result]

    @property
    def newest(self) -> Result:
        return self.versions[-1]

    def number_of(self, task_id: str) -> int:
        # The page's versions are its results (listed succeeded, or kept), oldest first: numbered by the
        # rule the report and `dailies reel` use too.
        ids = [r.task_id for r in self.versions]
        return version_numbers(ids, set(ids))[task_id]

    @property
    def created_at(self) -> float:
        return self.newest.created_at


def gather(journal: Journal, online: bool, max_age: float = data.LIST_MAX_AGE_S) -> tuple[list[Result], list[str]]:
    """Succeeded results, newest first: listed by the service (when `online`; a listing at most
    `max_age` seconds old), then kept ones it no longer lists. Returns the results and the problems
    met (an unreachable service is not fatal: kept results remain)."""
    problems: list[str] = []
    records: dict[str, TaskRecord] = {}
    if not online:
        problems.append("No service connection: showing kept results only.")
    else:
        tiers = ("default", "flex")
        pages = data.list_each([{"status": TaskStatus.SUCCEEDED, "page_size": LIST_SIZE, "service_tier": tier}
                                for tier in tiers], max_age, remember_in=journal)
        for tier, page in zip(tiers, pages, strict=True):
            if isinstance(page, APIError):
                problems.append(f"Could not list {tier} tasks: {page}")
                continue
            records.update((r.id, r) for r in page.items)
    kept_by_task: dict[str, dict[str, KeptFile]] = {}
    for kept in journal.all_kept():
        kept_by_task.setdefault(kept.task_id, {})[kept.name] = kept
    results = [Result(tid, rec, listed=True) for tid, rec in records.items()]
    for tid, files in kept_by_task.items():
        # A reel kept to be shared (components/review/reel_maker.py) is not a result.
        if tid not in records and VIDEO_NAME in files and not tid.startswith(REEL_PREFIX):
            saved = journal.record(tid)
            results.append(Result(tid, record_from_json(saved) if saved else None, listed=False))
    ids = [r.task_id for r in results]
    submissions, statuses = journal.submissions(ids), journal.statuses(ids)
    ratings, comments, authors = journal.ratings(ids), journal.comments(ids), journal.authors(ids)
    for result in results:
        result.submission = submissions.get(result.task_id)
        result.status = statuses.get(result.task_id)
        result.ratings = ratings.get(result.task_id, {})
        result.comments = comments.get(result.task_id, [])
        result.kept = kept_by_task.get(result.task_id, {})
        result.author = authors.get(result.task_id, "")
    results.sort(key=lambda r: r.created_at, reverse=True)
    return results, problems


def shots_of(journal: Journal, results: list[Result]) -> list[Shot]:
    """The results grouped into shots by their lineage, the shot with the newest version first."""
    by_id = {r.task_id: r for r in results}
    oldest_first = sorted(results, key=lambda r: r.created_at)
    groups = group_versions([r.task_id for r in oldest_first], journal.shot_links(by_id))
    shots = [Shot(shot_id, [by_id[t] for t in versions]) for shot_id, versions in groups.items()]
    shots.sort(key=lambda s: s.created_at, reverse=True)
    return shots


def matches(result: Result, inbox: str, me: str) -> bool:
    """Whether a version passes the inbox filter, for the person named `me`."""
    status = result.status_name
    if inbox == ALL:
        return True
    if inbox == NEEDS_MY_REVIEW:
        return status == PENDING and result.author != me
    if inbox == MY_CHANGES:
        return status == CHANGES_REQUESTED and bool(me) and result.author == me
    return status == inbox


def filter_shots(shots: Iterable[Shot], inbox: str, me: str, member: str | None,
                 batch_ids: set[str] | None) -> list[Shot]:
    """Shots whose newest version passes the inbox filter, made by `member` (None: anyone), in the
    batch (None: any)."""
    out = []
    for shot in shots:
        newest = shot.newest
        if not matches(newest, inbox, me):
            continue
        if member is not None and newest.author != member:
            continue
        if batch_ids is not None and not any(r.task_id in batch_ids for r in shot.versions):
            continue
        out.append(shot)
    return out
