"""The dashboard's components live in rooms (issue 36): one package per page (`components/compose/`,
`tasks/`, `review/`, `guest/`, `settings/`) and `components/common/` for what several pages share.
A page's module imports its own package and `common/`, never another page's; `common/` imports no
page. Read from the source with `ast` (imports inside functions too), so nothing is imported here."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

COMPONENTS = Path(__file__).resolve().parents[2] / "components"
PAGES = ("compose", "tasks", "review", "live", "inbox", "guest", "settings")
COMMON = "common"


def rooms() -> list[str]:
    return sorted(p.name for p in COMPONENTS.iterdir() if (p / "__init__.py").is_file())


def imported_rooms(path: Path) -> set[tuple[int, str]]:
    """(line, room) of every import of `components.<room>` in one module, absolute or relative."""
    package = path.relative_to(COMPONENTS.parent).with_suffix("").parts[:-1]  # ("components", room)
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = list(package[:len(package) - node.level + 1]) if node.level else []
            module = ".".join([*base, node.module] if node.module else base)
            names = [module] if node.module else [f"{module}.{alias.name}" for alias in node.names]
            if module == "components":  # `from components import tasks`
                names = [f"components.{alias.name}" for alias in node.names]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if parts[0] == "components" and len(parts) > 1:
                found.add((node.lineno, parts[1]))
    return found


def test_components_are_the_pages_and_common():
    assert rooms() == sorted([*PAGES, COMMON])
    assert not [p.name for p in COMPONENTS.glob("*.py") if p.name != "__init__.py"], "a module outside the rooms"


@pytest.mark.parametrize("room", [*PAGES, COMMON])
def test_a_room_imports_itself_and_common_only(room):
    allowed = {room, COMMON} if room != COMMON else {COMMON}
    crossings = [f"{path.relative_to(COMPONENTS.parent)}:{line} imports components.{other}"
                 for path in sorted((COMPONENTS / room).rglob("*.py"))
                 for line, other in sorted(imported_rooms(path)) if other not in allowed]
    assert not crossings, "\n".join(crossings)
