"""The import layers of STYLE.md, checked on the source: a module never imports a higher layer.

Imports inside functions and under TYPE_CHECKING count too: a lazy import
of a higher layer is still a dependency that points the wrong way.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "flowgraph"

LAYERS: dict[str, int] = {
    "flowgraph.errors": 0,
    "flowgraph._ids": 0,
    "flowgraph._lazy": 0,
    "flowgraph._context": 0,
    "flowgraph._hooks": 0,
    "flowgraph.messages": 1,
    "flowgraph.reducers": 2,
    "flowgraph.state": 2,
    "flowgraph.tools": 2,
    "flowgraph.prompts": 2,
    "flowgraph.models": 3,
    "flowgraph.checkpoint": 3,
    "flowgraph.store": 3,
    "flowgraph.graph": 4,
    "flowgraph.nodes": 5,
    "flowgraph.viz": 5,
    "flowgraph.cli": 6,
    "flowgraph": 6,
}
SIBLINGS_APART = [
    {"flowgraph.models", "flowgraph.checkpoint"},
    {"flowgraph.models", "flowgraph.store"},
    {"flowgraph.nodes", "flowgraph.viz"},
]


def component(module: str) -> str:
    """The layer entry a dotted module name belongs to (its longest listed prefix)."""
    parts = module.split(".")
    for end in range(len(parts), 0, -1):
        name = ".".join(parts[:end])
        if name in LAYERS:
            return name
    raise AssertionError(f"{module} belongs to no layer; add it to LAYERS in {__file__}")


def module_name(path: Path, root: Path) -> str:
    relative = path.relative_to(root.parent).with_suffix("")
    parts = list(relative.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imported_modules(
    tree: ast.AST, importer: str, is_package: bool, modules: frozenset[str] = frozenset()
) -> list[tuple[int, str]]:
    """(line, absolute module) for every flowgraph import in the tree, relative ones resolved.

    `from flowgraph import errors` imports the module `flowgraph.errors`, not the
    package facade: a name that is one of `modules` counts as that module.
    """
    found = []
    base = importer.split(".") if is_package else importer.split(".")[:-1]
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(node.lineno, a.name) for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                anchor = base[: len(base) - node.level + 1]
                target = ".".join([*anchor, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            for alias in node.names:
                submodule = f"{target}.{alias.name}"
                found.append((node.lineno, submodule if submodule in modules else target))
    return [(line, target) for line, target in found if target.split(".")[0] == "flowgraph"]


def violations(root: Path) -> list[str]:
    problems = []
    paths = sorted(root.rglob("*.py"))
    modules = frozenset(module_name(path, root) for path in paths)
    for path in paths:
        importer = module_name(path, root)
        own = component(importer)
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        is_package = path.name == "__init__.py"
        for line, target in imported_modules(tree, importer, is_package, modules):
            other = component(target)
            if other == own:
                continue
            apart = any({own, other} == pair for pair in SIBLINGS_APART)
            if LAYERS[other] > LAYERS[own] or apart:
                problems.append(
                    f"{path.relative_to(root.parent)}:{line}: {own} (layer {LAYERS[own]}) "
                    f"imports {target} ({other}, layer {LAYERS[other]})"
                )
    return problems


def test_no_module_imports_a_higher_layer() -> None:
    assert violations(PACKAGE) == []


def test_the_checker_reports_an_upward_import(tmp_path: Path) -> None:
    fake = tmp_path / "flowgraph"
    (fake / "messages").mkdir(parents=True)
    (fake / "graph").mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "graph" / "__init__.py").write_text("")
    (fake / "messages" / "__init__.py").write_text(
        "def late():\n    from flowgraph.graph import StateGraph\n"
    )
    (fake / "messages" / "_ok.py").write_text("from flowgraph.errors import FlowgraphError\n")
    (fake / "errors.py").write_text("")
    found = violations(fake)
    assert len(found) == 1
    assert "flowgraph/messages/__init__.py:2" in found[0]
    assert "imports flowgraph.graph" in found[0]


def test_siblings_do_not_import_each_other(tmp_path: Path) -> None:
    fake = tmp_path / "flowgraph"
    (fake / "models").mkdir(parents=True)
    (fake / "checkpoint").mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "checkpoint" / "__init__.py").write_text("")
    (fake / "models" / "__init__.py").write_text("from ..checkpoint import serde\n")
    assert [v.split(": ", 1)[1] for v in violations(fake)] == [
        "flowgraph.models (layer 3) imports flowgraph.checkpoint (flowgraph.checkpoint, layer 3)"
    ]


def test_a_submodule_named_in_from_import_counts_as_that_module(tmp_path: Path) -> None:
    fake = tmp_path / "flowgraph"
    (fake / "messages").mkdir(parents=True)
    (fake / "nodes").mkdir()
    (fake / "__init__.py").write_text("")
    (fake / "errors.py").write_text("")
    (fake / "nodes" / "__init__.py").write_text("")
    (fake / "messages" / "__init__.py").write_text("from .. import errors\n")
    assert violations(fake) == []  # the errors module, not the package facade
    (fake / "messages" / "_bad.py").write_text("from flowgraph import errors, nodes\n")
    found = violations(fake)
    assert len(found) == 1
    assert "flowgraph/messages/_bad.py:1" in found[0]
    assert "imports flowgraph.nodes" in found[0]


@pytest.mark.parametrize("module", ["flowgraph.graph._engine.loop", "flowgraph.nodes.model"])
def test_components_resolve(module: str) -> None:
    assert component(module) in LAYERS


# -- the rooms of flowgraph.graph ------------------------------------------------------

GRAPH_ROOMS: dict[str, int] = {
    "flowgraph.graph._core": 0,
    "flowgraph.graph._thread": 1,
    "flowgraph.graph._engine": 2,
    "flowgraph.graph._calls": 3,
    "flowgraph.graph._compiled": 3,
    "flowgraph.graph._config": 3,
    "flowgraph.graph._thread_api": 3,
    "flowgraph.graph._items": 3,
    "flowgraph.graph._streams": 3,
    "flowgraph.graph._events": 3,
    "flowgraph.graph._diagrams": 3,
    "flowgraph.graph._definition": 4,
    "flowgraph.graph._functional": 5,
    "flowgraph.graph": 6,
}
"""The graph package's rooms, lowest first: the shared vocabulary and the frozen graph
description; a stored thread; the engine; the facade (the compiled graph and its thread
API); the definition (StateGraph, which compiles into the facade); the functional API;
the package's re-exports. A room imports only rooms below it, or itself."""


def room(module: str) -> str:
    parts = module.split(".")
    for end in range(len(parts), 1, -1):
        name = ".".join(parts[:end])
        if name in GRAPH_ROOMS:
            return name
    raise AssertionError(f"{module} belongs to no room; add it to GRAPH_ROOMS in {__file__}")


def module_graph(root: Path) -> dict[str, set[str]]:
    """Every module of the package and the package modules it imports (any way at all)."""
    paths = sorted(root.rglob("*.py"))
    modules = frozenset(module_name(path, root) for path in paths)
    edges: dict[str, set[str]] = {}
    for path in paths:
        importer = module_name(path, root)
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        found = imported_modules(tree, importer, path.name == "__init__.py", modules)
        edges[importer] = {target for _, target in found if target in modules} - {importer}
    return edges


def room_violations(root: Path) -> list[str]:
    problems = []
    for importer, targets in module_graph(root).items():
        if not importer.startswith("flowgraph.graph"):
            continue
        own = room(importer)
        for target in sorted(targets):
            if (
                target.startswith("flowgraph.graph")
                and GRAPH_ROOMS[room(target)] > GRAPH_ROOMS[own]
            ):
                problems.append(f"{importer} ({own}) imports {target} ({room(target)})")
    return problems


def cycles(root: Path) -> list[list[str]]:
    """The import cycles among the package's modules (strongly connected, Tarjan's way)."""
    graph = module_graph(root)
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for target in graph.get(node, ()):
            if target not in index:
                visit(target)
                low[node] = min(low[node], low[target])
            elif target in on_stack:
                low[node] = min(low[node], index[target])
        if low[node] == index[node]:
            component = []
            while True:
                member = stack.pop()
                on_stack.discard(member)
                component.append(member)
                if member == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_each_graph_room_imports_only_the_rooms_below_it() -> None:
    assert room_violations(PACKAGE) == []


def test_no_import_cycle_not_even_for_type_hints() -> None:
    assert cycles(PACKAGE) == []


def test_the_cycle_check_sees_a_type_only_import(tmp_path: Path) -> None:
    fake = tmp_path / "flowgraph"
    (fake / "graph").mkdir(parents=True)
    (fake / "__init__.py").write_text("")
    (fake / "graph" / "__init__.py").write_text("")
    (fake / "graph" / "_a.py").write_text("from flowgraph.graph._b import B\n")
    (fake / "graph" / "_b.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from flowgraph.graph._a import A\n"
    )
    assert cycles(fake) == [["flowgraph.graph._a", "flowgraph.graph._b"]]


def test_the_room_check_reports_the_engine_reading_the_builder(tmp_path: Path) -> None:
    fake = tmp_path / "flowgraph"
    for folder in ("graph", "graph/_engine", "graph/_definition"):
        (fake / folder).mkdir(parents=True)
        (fake / folder / "__init__.py").write_text("")
    (fake / "__init__.py").write_text("")
    (fake / "graph" / "_engine" / "loop.py").write_text(
        "def late():\n    from flowgraph.graph._definition.builder import StateGraph\n"
    )
    (fake / "graph" / "_definition" / "builder.py").write_text("")
    assert room_violations(fake) == [
        "flowgraph.graph._engine.loop (flowgraph.graph._engine) imports "
        "flowgraph.graph._definition.builder (flowgraph.graph._definition)"
    ]


MAX_MODULE_LINES = 600
MAX_MODULES_PER_FOLDER = 16


def test_no_module_is_over_600_lines() -> None:
    long = {
        str(path.relative_to(PACKAGE.parent)): lines
        for path in PACKAGE.rglob("*.py")
        if (lines := len(path.read_text(encoding="utf-8").splitlines())) > MAX_MODULE_LINES
    }
    assert long == {}


def test_no_folder_holds_more_than_16_modules() -> None:
    crowded = {
        str(folder.relative_to(PACKAGE.parent)): count
        for folder in [PACKAGE, *(p for p in PACKAGE.rglob("*") if p.is_dir())]
        if (count := len(list(folder.glob("*.py")))) > MAX_MODULES_PER_FOLDER
    }
    assert crowded == {}
