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


@pytest.mark.parametrize("module", ["flowgraph.graph._runner", "flowgraph.nodes.model"])
def test_components_resolve(module: str) -> None:
    assert component(module) in LAYERS
