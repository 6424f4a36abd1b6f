"""Labels that tell versions apart: what differs between their prompts, else their seeds.

Variations of one idea share most of their prompt, so the first 40 characters of each read the same
("A paper boat drif…" three times, issue 37). A label here is the part of the prompt the others do
not share, with "…" where shared words were left out; prompts alike are told apart by seed, and
versions alike in both by their place in the list. Pure: no Streamlit.
"""

from __future__ import annotations

from collections.abc import Sequence

WIDTH = 40


def shorten(text: str, width: int = WIDTH) -> str:
    """`text` on one line, at most `width` characters (an ellipsis where it was cut)."""
    flat = " ".join(text.split())
    return flat if len(flat) <= width else flat[: width - 1].rstrip() + "…"


def _shared_ends(word_lists: list[list[str]]) -> tuple[int, int]:
    """How many words every list starts with, and ends with, without the two overlapping."""
    shortest = min(len(words) for words in word_lists)
    start = 0
    while start < shortest and len({words[start] for words in word_lists}) == 1:
        start += 1
    end = 0
    while end < shortest - start and len({words[-1 - end] for words in word_lists}) == 1:
        end += 1
    return start, end


def _differing_part(words: list[str], start: int, end: int, width: int) -> str:
    middle = " ".join(words[start: len(words) - end])
    if not middle:
        return "(the shared words only)"
    return ("… " if start else "") + shorten(middle, width) + (" …" if end else "")


def distinct_labels(prompts: Sequence[str], seeds: Sequence[int | None] | None = None,
                    width: int = WIDTH) -> list[str]:
    """One label per version, in order: what its prompt says that the others' do not (the whole
    prompt, shortened, when they all say the same), then ` · seed N` when prompts alike differ by
    seed, then ` · #k` for versions nothing else tells apart."""
    seeds = list(seeds) if seeds is not None else [None] * len(prompts)
    flat = [" ".join((p or "").split()) for p in prompts]
    if len(set(flat)) <= 1:
        labels = [shorten(p, width) or "(no prompt)" for p in flat]
    else:
        word_lists = [p.split() for p in flat]
        start, end = _shared_ends(word_lists)
        labels = [_differing_part(words, start, end, width) for words in word_lists]
    labels = _told_apart(labels, [f"seed {s}" if s is not None and s != -1 else None for s in seeds])
    return _told_apart(labels, [f"#{index}" for index in range(1, len(labels) + 1)])


def _told_apart(labels: list[str], extra: Sequence[str | None]) -> list[str]:
    """Labels shared by several versions get their `extra` appended where it tells them apart."""
    out = list(labels)
    for label in set(labels):
        same = [i for i, each in enumerate(labels) if each == label]
        if len(same) > 1 and len({extra[i] for i in same}) > 1:
            for i in same:
                if extra[i] is not None:
                    out[i] = f"{label} · {extra[i]}"
    return out


def labels_among_many(prompts: Sequence[str], seeds: Sequence[int | None] | None = None,
                      width: int = WIDTH) -> list[str]:
    """Labels for a list that mixes several ideas (a picker of every result): each prompt shortened,
    and where several begin alike, that beginning and then what tells each of them apart."""
    seeds = list(seeds) if seeds is not None else [None] * len(prompts)
    heads = [shorten(p or "", width) or "(no prompt)" for p in prompts]
    labels = list(heads)
    for head in set(heads):
        alike = [i for i, each in enumerate(heads) if each == head]
        if len(alike) > 1:
            parts = distinct_labels([prompts[i] for i in alike], [seeds[i] for i in alike], width)
            short_head = shorten(prompts[alike[0]] or "", width // 2)
            for i, part in zip(alike, parts, strict=True):
                labels[i] = f"{short_head} · {part}"
    return labels
