"""Text someone typed (a guest's name or comment, a member's name or prompt, an author the service
names) inside the dashboard's Markdown, shown as typed and as nothing else: no image loaded from
elsewhere, no link under a label, no bold line passing for another comment's header, no heading,
list, table, colour, icon or formula.

The one rule: whatever such text goes into st.markdown / st.caption goes through `markdown_text`.
Where no Markdown is wanted at all, st.text shows text plainly (the guest page does).

Streamlit renders Markdown with micromark (CommonMark + GFM), remark-directive (`:red[…]`,
`:small[…]`), remark-math (`$…$`) and transforms of its own. CommonMark shows a backslash-escaped
ASCII punctuation character as that character, which stops every construct the parser recognises.
Transforms of the parsed text cannot be stopped so: GFM still turns a bare URL into a link showing
that very URL (not a disguise), and Streamlit still shows "->" as "→".
"""

from __future__ import annotations

import re

# The punctuation that can start something: emphasis and strikethrough (* _ ~), code (`), links and
# images ([ ] ( )), autolinks and HTML (< >), entities (&), headings (#), quotes (>), bullets and
# rules (- + * _), setext headings (= -), tables (|), LaTeX ($), Streamlit's directives and icons
# (: and the / of `:material/…:`), and the backslash itself.
_SPECIAL = re.compile(r"([\\`*_~\[\]()<>&#+\-=|$:/])")
# "1. " at the start of a line opens an ordered list ("1)" is stopped by the escaped parenthesis).
_ORDERED = re.compile(r"^(\d+)\.")
# Streamlit swaps `:material_name:` and `:streamlit:` in the parsed text for an icon and its logo, after
# the escapes are gone: a word joiner (invisible, zero width) after the colon keeps them text.
_ICON = re.compile(r":(?=material_|streamlit:)")
NBSP = "\u00a0"
HARD_BREAK = "  \n"


def _line(line: str) -> str:
    text = line.rstrip()
    stripped = text.lstrip(" \t")
    # Leading blanks as no-break spaces: the indentation shows, and opens no code block. A line that
    # is left empty holds one, so a blank line cannot end the paragraph and let the next one start a block.
    lead = NBSP * len(text[: len(text) - len(stripped)].expandtabs(4))
    escaped = _ORDERED.sub(r"\1\\.", _SPECIAL.sub(r"\\\1", _ICON.sub(":\u2060", stripped)))
    return lead + escaped or NBSP


def markdown_text(text: str, indent: str = "") -> str:
    """`text` as Markdown that shows it as typed: special characters escaped, each line break a hard
    line break within one paragraph, each line after the first preceded by `indent` (Markdown the
    caller trusts, e.g. the "&nbsp;" that indents a reply). Surrounding whitespace is dropped, so
    the result can be wrapped in ** or ~~."""
    text = text.strip()
    if not text:
        return ""
    return (HARD_BREAK + indent).join(_line(line) for line in text.splitlines())
