"""The import map of `dailies/`: no module imports another that (through others) imports it back, and
no room imports a room above it. The layers are docs/architecture.md's; this test fails on a crossing
and on a room that the map does not place."""

from __future__ import annotations

import ast
import functools
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGE = ROOT / "dailies"

# Lowest first. A room imports only rooms of lower layers (never one of its own layer but itself).
# A room is a top-level module or package of `dailies`, or a room of `dailies.service`.
LAYERS: list[set[str]] = [
    {"spec"},
    {"dailies", "api_keys", "netguard", "retry_after", "timecodes", "log_format", "webhooks", "reel_options",
     "handoff_formats"},
    {"client"},
    {"config"},
    {"generator"},
    {"service", "service.errors", "service.callers", "service.own_paths"},
    {"service.settings"},
    {"service.db"},
    {"service.billing", "service.storage"},
    {"service.runtime"},
    {"service.access"},
    {"service.tasks", "service.sessions"},
    {"service.callbacks"},
    {"service.gateway"},
    {"service.node"},
    {"service.api"},
    {"journal"},
    {"frame_drawing"},
    {"reel", "review_report", "launcher", "streamlit_logs", "edit_handoff"},
    {"cli"},
    {"__main__"},
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def is_module(name: str) -> bool:
    path = ROOT.joinpath(*name.split("."))
    return path.with_suffix(".py").is_file() or (path / "__init__.py").is_file()


def imports_of(path: Path) -> set[str]:
    """Every `dailies` module a file imports, at its top or inside a function (both run)."""
    name = module_name(path)
    package = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            base = ".".join(package[:len(package) - node.level + 1] + [node.module or ""]) if node.level \
                else node.module or ""
            candidates = [f"{base.rstrip('.')}.{alias.name}" for alias in node.names]
        elif isinstance(node, ast.Import):
            candidates = [alias.name for alias in node.names]
        else:
            continue
        for candidate in candidates:
            parts = candidate.split(".")
            while parts and not is_module(".".join(parts)):
                parts.pop()
            target = ".".join(parts)
            # A package's own parent (its __init__ runs first anyway) is not an edge.
            if target.startswith("dailies") and target != name and not name.startswith(target + "."):
                found.add(target)
    return found


@functools.cache
def graph() -> dict[str, set[str]]:
    return {module_name(path): imports_of(path) for path in PACKAGE.rglob("*.py")}


def room_of(module: str) -> str:
    parts = module.split(".")[1:]
    if not parts:
        return "dailies"
    if parts[0] == "service" and len(parts) > 1:
        return f"service.{parts[1]}"
    return parts[0]


def cycles(edges: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected groups of more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in edges:
        if start in index:
            continue
        work = [(start, iter(sorted(edges.get(start, ()))))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(edges.get(child, ())))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                group = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    group.append(member)
                    if member == node:
                        break
                if len(group) > 1:
                    found.append(sorted(group))
    return found


def test_no_module_of_dailies_imports_itself_back():
    assert cycles(graph()) == []


def test_the_cycle_finder_finds_a_cycle():
    """The check above is only as good as this: a ring of three and a pair are both found."""
    found = cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"e"}, "e": {"d", "a"}, "f": {"a"}})
    assert sorted(found) == [["a", "b", "c"], ["d", "e"]]


def test_every_room_is_on_the_map():
    rank = {room for layer in LAYERS for room in layer}
    rooms = {room_of(module) for module in graph()}
    assert rooms - rank == set(), "rooms docs/architecture.md's layers do not place"
    assert rank - rooms == set(), "layers naming rooms that no longer exist"


def test_no_room_imports_a_room_of_its_own_layer_or_above():
    rank = {room: n for n, layer in enumerate(LAYERS) for room in layer}
    crossings = defaultdict(list)
    for module, targets in graph().items():
        for target in targets:
            source_room, target_room = room_of(module), room_of(target)
            if source_room != target_room and rank[target_room] >= rank[source_room]:
                crossings[f"{source_room} -> {target_room}"].append(f"{module} imports {target}")
    assert dict(crossings) == {}


def test_the_layers_are_the_ones_docs_architecture_draws():
    text = (ROOT / "docs" / "architecture.md").read_text()
    for n, layer in enumerate(LAYERS):
        line = f"{n + 1}. " + ", ".join(f"`{room}`" for room in sorted(layer))
        assert line in text, f"docs/architecture.md lacks the layer line: {line}"


def test_the_product_never_imports_the_dashboard():
    reached = {target for targets in graph().values() for target in targets}
    assert not any(name.split(".")[0] in ("components", "dashboard") for name in reached)
    for path in PACKAGE.rglob("*.py"):
        source = path.read_text()
        assert "from components" not in source and "import components" not in source, path
