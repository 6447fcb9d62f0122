"""The hook through which the compiled graph's diagram methods reach `flowgraph.viz`.

The graph layer may not import the viz layer (viz builds on graph), so
`flowgraph.viz` registers its functions here when it is imported, and
`CompiledGraph.to_mermaid()` and friends call whatever is registered.
`import flowgraph` names `flowgraph.viz` as the provider of "diagrams"
(`flowgraph._lazy`), so the first diagram call imports it.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from flowgraph._lazy import load_provider
from flowgraph.errors import DiagramError

if TYPE_CHECKING:
    from flowgraph.graph._compiled import CompiledGraph

__all__ = ["DiagramFunctions", "diagram_functions", "register_diagram_functions"]


@dataclass(frozen=True, slots=True)
class DiagramFunctions:
    """What `flowgraph.viz` provides to the compiled graph's methods."""

    to_mermaid: Callable[[CompiledGraph, str | None], str]
    to_dot: Callable[[CompiledGraph, str | None], str]
    to_ascii: Callable[[CompiledGraph], str]
    to_mermaid_sequence: Callable[[CompiledGraph, str], str]
    render: Callable[[CompiledGraph, str | os.PathLike[str], str | None, str], Path]
    """(app, path, thread_id, engine) -> the written file."""


_registered: list[DiagramFunctions] = []


def register_diagram_functions(functions: DiagramFunctions) -> None:
    """Install the diagram functions (called by `flowgraph.viz` at import)."""
    _registered[:] = [functions]


def diagram_functions() -> DiagramFunctions:
    """The installed diagram functions (importing `flowgraph.viz` the first time)."""
    if not _registered:
        load_provider("diagrams")  # flowgraph.viz registers itself when imported
    if not _registered:
        raise DiagramError(
            "Diagrams are drawn by flowgraph.viz, which has not been imported; "
            "`import flowgraph` (or `import flowgraph.viz`) first"
        )
    return _registered[0]
