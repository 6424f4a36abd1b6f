"""How an inbox item reads (components/inbox/wording.py)."""

from __future__ import annotations

from components.inbox.wording import ICONS, excerpt, headline
from dailies.journal import InboxItem
from dailies.journal.inbox import KINDS


def test_each_kind_reads_from_the_persons_side():
    said = {kind: headline(InboxItem(f"{kind}:x", kind, "cgt-1", "Bo", 1.0, "approved")) for kind in KINDS}
    assert said == {"mention": "Bo mentioned you", "reply": "Bo replied to you",
                    "comment": "Bo commented on your version", "status": "Bo set your version to Approved",
                    "ended": "Your version failed"}
    assert headline(InboxItem("ended:x", "ended", "cgt-1", "", 1.0, "succeeded")) == "Your version is ready"
    assert set(ICONS) == set(KINDS)


def test_an_excerpt_is_one_line_cut_short_and_only_of_words():
    item = InboxItem("reply:x", "reply", "cgt-1", "Bo", 1.0, "line one\nline   two " + "x" * 300)
    assert excerpt(item).startswith("line one line two x") and len(excerpt(item)) == 200
    assert excerpt(InboxItem("status:x", "status", "cgt-1", "Bo", 1.0, "approved")) == ""
