"""Task statuses are named (`TaskStatus.SUCCEEDED`), not spelled: a rename or a new status then
changes one file. Words that happen to be statuses in other vocabularies (a callback delivery's
`failed`, a share's `expired`) are named in their own enums; at most three files outside
`dailies/spec` still spell one (the countdown's levels, a CLI verb, and one more)."""

from __future__ import annotations

import ast
from pathlib import Path

from dailies.spec.statuses import TaskStatus

ROOT = Path(__file__).resolve().parents[2]
SPELLED_AT_MOST_IN = 3


def _skipped(tree: ast.AST) -> set[int]:
    """ids of constants that are docstrings, enum members' values or the arguments of Literal[...]."""
    skipped: set[int] = set()
    for node in ast.walk(tree):
        body = getattr(node, "body", None)
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)) and body:
            first = body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                skipped.add(id(first.value))
        if isinstance(node, ast.ClassDef) and any(
                getattr(base, "id", getattr(base, "attr", "")).endswith("Enum") for base in node.bases):
            skipped.update(id(n) for n in ast.walk(node) if isinstance(n, ast.Constant))
        if isinstance(node, ast.Subscript) and getattr(node.value, "id", getattr(node.value, "attr", "")) == "Literal":
            skipped.update(id(n) for n in ast.walk(node.slice) if isinstance(n, ast.Constant))
    return skipped


def files_spelling_statuses() -> dict[str, list[str]]:
    statuses = {status.value for status in TaskStatus}
    found: dict[str, list[str]] = {}
    for folder in ("dailies", "components", "dashboard"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            if path.is_relative_to(ROOT / "dailies" / "spec"):
                continue
            tree = ast.parse(path.read_text(), str(path))
            skipped = _skipped(tree)
            spelled = [f"{node.lineno}: {node.value}" for node in ast.walk(tree)
                       if isinstance(node, ast.Constant) and node.value in statuses and id(node) not in skipped]
            if spelled:
                found[str(path.relative_to(ROOT))] = spelled
    return found


def test_task_statuses_are_spelled_in_at_most_three_files_outside_the_spec():
    found = files_spelling_statuses()
    assert len(found) <= SPELLED_AT_MOST_IN, found


def test_the_count_sees_a_spelled_status():
    """The scan finds `"queued"` in code, and passes over docstrings, enums and Literal types."""
    source = ('"""queued"""\nfrom enum import StrEnum\nfrom typing import Literal\n'
              'class S(StrEnum):\n    A = "running"\nX: Literal["failed"]\nif x == "queued": pass\n')
    tree = ast.parse(source)
    skipped = _skipped(tree)
    spelled = [n.value for n in ast.walk(tree) if isinstance(n, ast.Constant) and n.value in {"queued", "running",
               "failed"} and id(n) not in skipped]
    assert spelled == ["queued"]
