"""Text people typed, inside the dashboard's Markdown (components/common/markdown_text.py): shown as typed,
never as an image, a link under a label, a heading, a list, a bold line, a colour, an icon or a formula.

Streamlit's parser is micromark (JavaScript); here a CommonMark parser in Python (markdown-it-py,
installed with the dev extras through schemathesis's rich) renders the escaped text, which must come
back as the same characters in one paragraph, with no element but line breaks and the caller's wrapper.
"""

from __future__ import annotations

import html
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from streamlit.testing.v1 import AppTest

from components.common.markdown_text import markdown_text
from dailies.journal import Journal, Scope, Submission
from dailies.spec.results import VIDEO_NAME

BASE = "http://127.0.0.1:8000/api/v3"
HOSTILE = [
    "![](https://attacker.example/beacon.png)",
    "fine\n\n**Ana** · 2025-06-01 10:00  \nApproved by the director. [Download the master](https://attacker.example/x)",
    ":red[alarm] :material/verified: :material_star: :streamlit: $x^2$ $$y$$ <b>bold</b> &amp; &#x41;",
    "# heading\n> quote\n- item\n+ item\n* item\n1. one\n2) two\n---\n===\n```\ncode\n```\n    indented\n"
    "| a | b |\n|---|---|",
    "[ref]\n\n[ref]: https://attacker.example/ref\n<https://attacker.example/auto>",
    "back\\slash\\\nend `tick` ~~strike~~ __under__ _i_ *e* [^1]\n\n[^1]: a footnote",
    "a\ttab\n\t\tindented\n   three\n\n\n\nafter blank lines",
    "Setext\n---",
]


def markdown_it():
    import markdown_it  # markdown-it-py comes with Streamlit (through rich)

    return markdown_it.MarkdownIt("commonmark").enable(["strikethrough", "table"])


def shown(source: str) -> tuple[set[str], str]:
    """The elements the Markdown makes, and its text with each line break as a newline."""
    out = markdown_it().render(source)
    tags = set(re.findall(r"</?([a-z][\w-]*)", out))
    text = re.sub(r"<br />\n?", "\n", out)
    return tags, html.unescape(re.sub(r"<[^>]+>", "", text)).strip("\n")


def as_typed(text: str) -> str:
    """What the reader should see: each line as typed, its leading blanks as (no-break) spaces and
    tabs as 4, invisible characters aside; surrounding whitespace dropped."""
    def line(value: str) -> str:
        rest = value.rstrip().lstrip(" \t")
        return value[: len(value) - len(value.lstrip(" \t"))].expandtabs(4) + rest

    return "\n".join(line(v) for v in text.strip().splitlines())


def seen(text: str) -> str:
    """The text as read: a no-break space as a space, no word joiner, no blanks ending a line."""
    return "\n".join(v.rstrip() for v in text.replace("\u00a0", " ").replace("\u2060", "").split("\n"))


# How the dashboard wraps such text, the elements the wrapper itself makes, and what the reader sees.
WRAPS = [("{}", set(), "{}"), ("**{}**", {"strong"}, "{}"), ("~~{}~~", {"s"}, "{}"),
         ("- 10\\:00 · **{}**: Approved", {"ul", "li", "strong"}, "10:00 · {}: Approved")]


@pytest.mark.parametrize("text", HOSTILE)
@pytest.mark.parametrize(("wrap", "elements", "reads"), WRAPS)
def test_hostile_text_shows_as_typed_and_makes_nothing(text, wrap, elements, reads):
    tags, got = shown(wrap.format(markdown_text(text)))
    assert tags <= {"p", "br"} | elements, (text, tags)
    assert seen(got) == reads.format(as_typed(text))


def test_what_the_source_holds():
    assert markdown_text("![](https://a.example/x.png)") == r"!\[\]\(https\:\/\/a.example\/x.png\)"
    # A new line cannot start a bold author line, a heading or a list: each is a hard break in the
    # paragraph, blank lines included (a no-break space holds them).
    assert markdown_text("ok\n\n**Ana** · 10:00\n1. x") == "ok  \n\u00a0  \n\\*\\*Ana\\*\\* · 10\\:00  \n1\\. x"
    assert markdown_text("a\nb", indent="&nbsp;&nbsp;") == "a  \n&nbsp;&nbsp;b"
    # Streamlit swaps these for an icon and its logo in the parsed text: a word joiner keeps them text.
    assert markdown_text(":material_star: :streamlit:") == "\\:\u2060material\\_star\\: \\:\u2060streamlit\\:"
    assert markdown_text("  \n ") == "" and markdown_text(" plain words, kept. ") == "plain words, kept."


@settings(max_examples=300, deadline=None)
@given(st.text(alphabet=st.sampled_from(list("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~ \n\tab1é漢")), max_size=40))
def test_any_text_shows_as_typed_in_one_paragraph(text):
    source = markdown_text(text)
    if not source:
        assert not text.strip()
        return
    for wrap, element in (("{}", set()), ("**{}**", {"strong"}), ("~~{}~~", {"s"})):
        tags, got = shown(wrap.format(source))
        assert tags <= {"p", "br"} | element, (text, tags)
        assert seen(got) == as_typed(text)


def prompt_of_task(db_path: str, task_id: str) -> None:
    from datetime import UTC

    from components.tasks import detail as task_detail
    from dailies.journal import Journal, Scope

    journal = Journal(db_path, database_url="", storage="").scoped(Scope.of("http://127.0.0.1:8000/api/v3", "dk-test"))
    task_detail.render(None, journal, task_id, UTC, now=0.0)


def test_a_prompt_on_the_task_detail_is_shown_as_typed(tmp_path):
    prompt = "a heron\n\n# at dawn ![](https://attacker.example/p.png)"
    db = tmp_path / "journal.sqlite3"
    journal = Journal(db, database_url="", storage="")
    view = journal.scoped(Scope.of(BASE, "dk-test"))
    view.record_submission(Submission(task_id="cgt-1", batch_id=None, submitted_at=0.0, base_url=BASE,
                                      model="m", mode="text", prompt=prompt, request={}))
    path = view.keep_path("cgt-1", VIDEO_NAME)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(b"\x00" * 64)
    view.mark_kept("cgt-1", VIDEO_NAME, path)
    journal.close()
    at = AppTest.from_function(prompt_of_task, args=(str(db), "cgt-1"), default_timeout=30).run()
    assert not at.exception
    assert f"> {markdown_text(prompt)}" in [m.value for m in at.markdown]
    assert not any("](https://attacker" in m.value for m in at.markdown)
