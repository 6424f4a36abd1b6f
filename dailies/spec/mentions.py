"""`@name` in a comment: which of a project's people it names, and what a half-typed one could become.

Names are people's names as they sign (a member name may hold spaces: "Ana Lima"), so a mention is the
longest known name that follows an `@` starting a word, compared without regard to case, and ending
where a word ends ("@Ana," names Ana; "@Anabel" does not; "ana@studio.example" names no one). Pure: the
journal finds mentions with it and the comment box completes with it.
"""

from __future__ import annotations

from collections.abc import Iterable

MAX_COMPLETIONS = 8


def _ends_a_word(text: str, at: int) -> bool:
    return at >= len(text) or not (text[at].isalnum() or text[at] == "_")


def mentioned(body: str, people: Iterable[str]) -> list[str]:
    """The people `body` names with `@`, each once, in the order first named."""
    names = sorted({p for p in people if p.strip()}, key=len, reverse=True)  # "Ana Lima" before "Ana"
    found: list[str] = []
    start = body.find("@")
    while start != -1:
        after = start + 1
        if start == 0 or _ends_a_word(body, start - 1):  # not inside a word: "ana@studio" is an address
            for name in names:
                end = after + len(name)
                # Compared where it stands, folded: a fold that changes a text's length ("ß" to "ss")
                # before the `@` moves nothing.
                if body[after:end].casefold() == name.casefold() and _ends_a_word(body, end):
                    if name not in found:
                        found.append(name)
                    break
        start = body.find("@", after)
    return found


def typing_mention(text: str) -> str | None:
    """The partial name after the last `@` being typed at the end of `text` ("" just after the `@`), or
    None when the text does not end in one (an `@` inside a word, "ana@studio", starts none)."""
    at = text.rfind("@")
    if at == -1 or (at > 0 and (text[at - 1].isalnum() or text[at - 1] == "_")):
        return None
    partial = text[at + 1:]
    if "\n" in partial or len(partial) > 64:
        return None
    return partial


def completions(text: str, people: Iterable[str], limit: int = MAX_COMPLETIONS) -> list[str]:
    """The people whose name starts with the mention being typed at the end of `text` (any word of the
    name, without regard to case), best first: those the partial starts, then those a later word does."""
    partial = typing_mention(text)
    if partial is None:
        return []
    wanted = partial.casefold().strip()
    unique = sorted({p for p in people if p.strip()}, key=str.casefold)
    first = [p for p in unique if p.casefold().startswith(wanted)]
    later = [p for p in unique if p not in first and any(w.startswith(wanted) for w in p.casefold().split())]
    return (first + later)[:limit]


def complete(text: str, name: str) -> str:
    """`text` with the mention being typed at its end replaced by `@name` and a space; `text` with
    `@name ` added when it ends in no mention."""
    partial = typing_mention(text)
    if partial is None:
        gap = " " if text and not text[-1].isspace() else ""
        return f"{text}{gap}@{name} "
    return f"{text[:len(text) - len(partial) - 1]}@{name} "
