"""The public surface of flowgraph.nodes, .tools and .prompts: exports, layers, doc examples."""

from __future__ import annotations

import ast
import doctest
import importlib
import pkgutil
from pathlib import Path

import pytest

import flowgraph
import flowgraph.nodes
import flowgraph.prompts
import flowgraph.tools

PACKAGE = Path(flowgraph.__file__).parent

# what each module may import from flowgraph (DESIGN: a module never imports a higher layer)
ALLOWED = {
    "flowgraph.tools": {
        "flowgraph.errors",
        "flowgraph._lazy",
        "flowgraph._ids",
        "flowgraph._context",
        "flowgraph.messages",
        "flowgraph.reducers",
        "flowgraph.state",
        "flowgraph.tools",
    },
    "flowgraph.prompts": {"flowgraph.errors", "flowgraph.messages"},
    "flowgraph.nodes": {
        "flowgraph.errors",
        "flowgraph._lazy",
        "flowgraph._ids",
        "flowgraph._context",
        "flowgraph._hooks",
        "flowgraph.messages",
        "flowgraph.reducers",
        "flowgraph.state",
        "flowgraph.tools",
        "flowgraph.prompts",
        "flowgraph.models",
        "flowgraph.checkpoint",
        "flowgraph.graph",
        "flowgraph.nodes",
    },
}


def modules_of(name: str) -> list[str]:
    module = importlib.import_module(name)
    if not hasattr(module, "__path__"):
        return [name]
    found = [name]
    for info in pkgutil.walk_packages(module.__path__, prefix=f"{name}."):
        found.append(info.name)
    return found


def flowgraph_imports(module_name: str) -> set[str]:
    module = importlib.import_module(module_name)
    assert module.__file__ is not None
    tree = ast.parse(Path(module.__file__).read_text())
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found.add(node.module)
        elif isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
    return {name for name in found if name == "flowgraph" or name.startswith("flowgraph.")}


def layer_of(imported: str) -> str:
    parts = imported.split(".")
    return ".".join(parts[:2])


@pytest.mark.parametrize("root", sorted(ALLOWED))
def test_layers(root: str) -> None:
    for module in modules_of(root):
        for imported in flowgraph_imports(module):
            assert layer_of(imported) in ALLOWED[root], f"{module} imports {imported}"


def test_facades_export_sorted_names_that_exist() -> None:
    for module in (flowgraph.nodes, flowgraph.tools, flowgraph.prompts):
        names = module.__all__
        # ruff's RUF022 order: CONSTANTS, then Classes, then functions
        order = sorted(names, key=lambda n: (0 if n.isupper() else 1 if n[0].isupper() else 2, n))
        assert names == order, module.__name__
        assert len(set(names)) == len(names)
        for name in names:
            assert getattr(module, name) is not None, name


def test_every_public_definition_is_exported() -> None:
    for facade in (flowgraph.nodes, flowgraph.tools):
        for name in modules_of(facade.__name__)[1:]:
            if name.endswith("._state"):
                continue  # helpers shared by the nodes, not API
            for public in importlib.import_module(name).__all__:
                assert public in facade.__all__, f"{name}.{public} is not in {facade.__name__}"
    defined = {
        name
        for name, value in vars(flowgraph.prompts).items()
        if getattr(value, "__module__", None) == "flowgraph.prompts" and not name.startswith("_")
    }
    assert set(flowgraph.prompts.__all__) == defined


@pytest.mark.parametrize(
    "module",
    [
        *sorted({*modules_of("flowgraph.nodes"), *modules_of("flowgraph.tools")}),
        "flowgraph.prompts",
    ],
)
def test_docstring_examples_run(module: str) -> None:
    result = doctest.testmod(
        importlib.import_module(module), optionflags=doctest.ELLIPSIS, raise_on_error=False
    )
    assert result.failed == 0


def test_node_kinds_for_diagrams() -> None:
    from flowgraph.nodes import ModelRouter, PersonaSwitch, Router, ToolNode

    assert ToolNode.node_kind == "tool"
    assert Router.node_kind == ModelRouter.node_kind == "router"
    assert PersonaSwitch.node_kind == "persona"
