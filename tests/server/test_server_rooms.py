"""The rooms of `flowgraph.server`, checked on the source: a room imports only the rooms below it.

    _http     the HTTP surface: app, routes by resource, context, fields, auth, serve, ui
    _runs     the served graphs, the executor, the Celery queue, rollback
    _wire     the wire format: convert, SSE stream, JSON responses and ApiError
    _records  the server's documents and the run registry

(lowest last; `ui/` beside them holds the inspector's static files, no
Python). The facade `flowgraph/server/__init__.py` may import any room; no
room imports the facade, and no module sits outside a room. Imports inside
functions and under TYPE_CHECKING count too, as in tests/test_layers.py: a
lazy or type-only import of a higher room is still a dependency that
points the wrong way. Also checked: each room says in its `__init__`
docstring what it holds (module length and folder size are checked for the
whole package in tests/test_layers.py).
"""

from __future__ import annotations

import ast
from pathlib import Path

from test_layers import imported_modules, module_name  # the package-wide checker's parser

SERVER = Path(__file__).resolve().parents[2] / "flowgraph" / "server"

ROOMS = ("_records", "_wire", "_runs", "_http")
"""Lowest first: a room may import the rooms before it, never one after it."""


def room_of(module: str) -> str | None:
    """The room (`_http`, ...) a module of flowgraph.server is in; None for the facade."""
    parts = module.split(".")
    return parts[2] if len(parts) > 2 else None


def violations(server: Path) -> list[str]:
    problems = []
    paths = sorted(server.rglob("*.py"))
    modules = frozenset(module_name(path, server.parent) for path in paths)
    facade = module_name(server / "__init__.py", server.parent)
    for path in paths:
        where = path.relative_to(server.parents[1])
        importer = module_name(path, server.parent)
        own = room_of(importer)
        if own is None:
            continue  # the facade re-exports from the rooms
        if own not in ROOMS:
            problems.append(f"{where}: {importer} is in no room; move it into one of {ROOMS}")
            continue
        below = ROOMS[: ROOMS.index(own)]
        tree = ast.parse(path.read_text(encoding="utf-8"), str(path))
        is_package = path.name == "__init__.py"
        for line, target in imported_modules(tree, importer, is_package, modules):
            if target != facade and not target.startswith(f"{facade}."):
                continue
            other = room_of(target)
            if other == own:
                continue
            if other is None:
                problems.append(f"{where}:{line}: {own} imports the facade {target}")
            elif other not in below:
                problems.append(f"{where}:{line}: {own} imports {target} ({other} is not below it)")
    return problems


def test_each_room_imports_only_the_rooms_below_it() -> None:
    assert violations(SERVER) == []


def test_the_rooms_are_the_server_folders_and_say_what_they_hold() -> None:
    packages = {p.parent.name for p in SERVER.glob("*/__init__.py")}
    assert packages == set(ROOMS)
    for room in ROOMS:
        docstring = ast.get_docstring(ast.parse((SERVER / room / "__init__.py").read_text()))
        assert docstring, f"flowgraph/server/{room}/__init__.py needs a docstring"
        assert "import" in docstring, f"{room}'s docstring should say what it may import"
    assert not list((SERVER / "ui").glob("*.py")), "ui/ holds the static files only"


def test_the_checker_reports_upward_lazy_and_type_only_imports(tmp_path: Path) -> None:
    server = tmp_path / "flowgraph" / "server"
    for room in ROOMS:
        (server / room).mkdir(parents=True)
        (server / room / "__init__.py").write_text("")
    (server / "__init__.py").write_text("from flowgraph.server._http.app import create_app\n")
    (server / "_http" / "app.py").write_text(
        "from flowgraph.server._runs import executor\nfrom .._records import registry\n"
    )
    (server / "_runs" / "executor.py").write_text("from flowgraph.server._wire.convert import x\n")
    (server / "_wire" / "convert.py").write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    from flowgraph.server._runs.executor import RunManager\n"
    )
    (server / "_records" / "registry.py").write_text(
        "def late():\n    from flowgraph.server import _http\n"
    )
    (server / "_runs" / "graphs.py").write_text("from .. import create_app\n")
    (server / "_stray.py").write_text("")
    assert violations(server) == [
        "flowgraph/server/_records/registry.py:2: _records imports flowgraph.server._http "
        "(_http is not below it)",
        "flowgraph/server/_runs/graphs.py:1: _runs imports the facade flowgraph.server",
        "flowgraph/server/_stray.py: flowgraph.server._stray is in no room; move it into one of "
        "('_records', '_wire', '_runs', '_http')",
        "flowgraph/server/_wire/convert.py:3: _wire imports flowgraph.server._runs.executor "
        "(_runs is not below it)",
    ]
